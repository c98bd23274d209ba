# scripts/circles.awk - the circle check of make lint (scripts/lint.sh):
# whether the .c files of one folder call each other round a circle of
# more than two files (README.md, "Layers and files": graph/ has none).
# Usage: awk -v files=N -f scripts/circles.awk F1 .. FN F1 .. FN
#
# It reads the files twice (hence the list twice, with
# -v files=N): the first pass notes which file defines each function that
# is not static, the second which of them each file calls. Prints every
# group of more than two files that reach each other through calls (a
# circle), one line each; nothing when there is none.
FNR == 1 { seen++; comment = 0; if (seen <= files) name[seen] = FILENAME }
{
	line = $0
	if (comment) {
		if (line !~ /\*\//) next
		sub(/^.*\*\//, "", line); comment = 0
	}
	gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", line)
	if (line ~ /\/\*/) { sub(/\/\*.*$/, "", line); comment = 1 }
	gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
	gsub(/\/\/.*$/, "", line)
}
seen <= files {
	if (line ~ /^[A-Za-z_][A-Za-z_0-9 \t*]*[ \t*][A-Za-z_][A-Za-z_0-9]*\(/ &&
	    line !~ /^(static|typedef|extern|return|else|if|while|for|switch)[ \t(]/ && line !~ /;[ \t]*$/) {
		fn = line
		sub(/\(.*$/, "", fn); sub(/^.*[ \t*]/, "", fn)
		def[fn] = FILENAME
	}
	next
}
{
	n = split(line, word, /[^A-Za-z_0-9]+/)
	for (i = 1; i <= n; i++)
		if ((word[i] in def) && def[word[i]] != FILENAME)
			calls[FILENAME, def[word[i]]] = 1
}
END {
	for (i = 1; i <= files; i++)
		for (j = 1; j <= files; j++)
			reach[i, j] = (i == j) || ((name[i], name[j]) in calls)
	for (k = 1; k <= files; k++)
		for (i = 1; i <= files; i++)
			if (reach[i, k])
				for (j = 1; j <= files; j++)
					if (reach[k, j]) reach[i, j] = 1
	for (i = 1; i <= files; i++) {
		if (done[i]) continue
		group = name[i]; count = 1
		for (j = i + 1; j <= files; j++)
			if (reach[i, j] && reach[j, i]) { group = group " " name[j]; count++; done[j] = 1 }
		if (count > 2) print group
	}
}
