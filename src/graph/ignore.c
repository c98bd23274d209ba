/*
 * ignore.c - .gitignore patterns for the indexer (see ignore.h).
 */
#include "graph/ignore.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/hash.h"

struct kg_ignore_pattern {
	char *glob;
	bool dir_only; /* trailing '/' */
	bool anchored; /* contains '/': matched against the whole path */
};

static void pattern_add(struct kg_ignore *ig, const char *line, size_t len)
{
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
		len--;
	if (len == 0 || line[0] == '#' || line[0] == '!')
		return;
	struct kg_ignore_pattern p = {0};
	if (line[len - 1] == '/') {
		p.dir_only = true;
		len--;
	}
	if (len > 0 && line[0] == '/') {
		p.anchored = true;
		line++;
		len--;
	}
	if (len == 0)
		return;
	p.glob = gi_strndup(line, len);
	p.anchored |= memchr(p.glob, '/', len) != NULL;
	gi_vec_push(&ig->patterns, &p);
}

void kg_ignore_parse(struct kg_ignore *ig, const char *text, size_t len)
{
	gi_vec_init(&ig->patterns, sizeof(struct kg_ignore_pattern));
	ig->text_hash = gi_hash64(text, len, GI_HASH_SEED);
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || text[i] == '\n') {
			pattern_add(ig, text + start, i - start);
			start = i + 1;
		}
	}
}

void kg_ignore_load(struct kg_ignore *ig, const char *root)
{
	char path[4096];
	char *text = NULL;
	size_t len = 0;
	int n = snprintf(path, sizeof(path), "%s/.gitignore", root);
	if (n < 0 || (size_t)n >= sizeof(path) ||
	    gi_fs_read_file(path, KG_IGNORE_MAX_BYTES, &text, &len) != 0) {
		kg_ignore_parse(ig, "", 0);
		return;
	}
	kg_ignore_parse(ig, text, len);
	gi_free(text);
}

/* Does pattern `p` match `prefix` (a leading part of the path, a directory
 * when `is_dir`), whose last component starts at `base`? */
static bool pattern_matches(const struct kg_ignore_pattern *p, const char *prefix, const char *base,
                            bool is_dir)
{
	if (p->dir_only && !is_dir)
		return false;
	if (p->anchored)
		return fnmatch(p->glob, prefix, FNM_PATHNAME) == 0;
	return fnmatch(p->glob, base, 0) == 0;
}

bool kg_ignore_match(const struct kg_ignore *ig, const char *relpath)
{
	if (ig->patterns.len == 0)
		return false;
	char prefix[4096];
	size_t len = strlen(relpath);
	if (len >= sizeof(prefix))
		return false;
	memcpy(prefix, relpath, len + 1);
	/* every directory on the way, then the file itself */
	for (size_t end = 0; end <= len; end++) {
		if (end < len && prefix[end] != '/')
			continue;
		bool is_dir = end < len;
		prefix[end] = '\0';
		const char *base = strrchr(prefix, '/');
		base = base ? base + 1 : prefix;
		for (size_t i = 0; i < ig->patterns.len; i++) {
			if (pattern_matches(gi_vec_get(&ig->patterns, i), prefix, base, is_dir))
				return true;
		}
		if (is_dir)
			prefix[end] = '/';
	}
	return false;
}

void kg_ignore_destroy(struct kg_ignore *ig)
{
	for (size_t i = 0; i < ig->patterns.len; i++)
		gi_free(((struct kg_ignore_pattern *)gi_vec_get(&ig->patterns, i))->glob);
	gi_vec_destroy(&ig->patterns);
}
