/*
 * Integration tests of the command line's conventions, run on the built
 * binaries: every command and subcommand answers --help, -h and `help CMD`
 * with a description, options with defaults, exit codes and an example, in
 * 80 columns; --version everywhere; the nearest command on a typo;
 * docs/CLI.md's command reference is exactly the help; the man page and the
 * bash and zsh completions are generated from it (bash run for real, zsh
 * parsed and loaded by zsh itself); `make install` into a DESTDIR.
 * needs: zsh
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/str.h"
#include "harness.h"
#include "support.h"

static char *run(const char *prog, const char *const *args, int *status, char **err)
{
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/%s", th_bindir(), prog);
	const char *argv[16] = {bin};
	int n = 1;
	for (const char *const *a = args; *a && n < 15; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	char *out = NULL;
	*status = ts_run(argv, NULL, 30000, &out, err);
	return out ? out : strdup("");
}

#define RUN(status, err, prog, ...) run(prog, (const char *const[]){__VA_ARGS__, NULL}, status, err)

/* The command names `giulia help` lists ("  name  summary" lines). */
static int command_names(char names[][32], int max)
{
	int status = 0;
	char *out = RUN(&status, NULL, "giulia", "help");
	TH_ASSERT_INT_EQ(status, 0);
	int n = 0;
	char *save = NULL;
	bool in_list = false;
	for (char *line = strtok_r(out, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strcmp(line, "commands:") == 0) {
			in_list = true;
			continue;
		}
		if (in_list && GI_STR_STARTS(line, "  ") && line[2] != ' ') {
			size_t len = strcspn(line + 2, " ");
			TH_ASSERT(len < 32);
			memcpy(names[n], line + 2, len);
			names[n][len] = '\0';
			n++;
		} else if (in_list) {
			break;
		}
	}
	free(out);
	return n;
}

static void assert_fits(const char *text, const char *what, int width)
{
	const char *line = text;
	while (*line) {
		size_t len = strcspn(line, "\n");
		TH_ASSERT_MSG((int)len <= width, "%s: a line of %zu columns: %.*s", what, len,
		              (int)len, line);
		line += len;
		if (*line)
			line++;
	}
}

static void assert_full_help(const char *out, const char *prog, const char *cmd)
{
	char usage[128];
	snprintf(usage, sizeof(usage), "usage: %s %s", prog, cmd);
	TH_ASSERT_MSG(strstr(out, usage), "%s %s --help: no usage line: %s", prog, cmd, out);
	TH_ASSERT_MSG(strstr(out, "\nexit codes:\n  0   success"), "%s %s: no exit codes", prog,
	              cmd);
	TH_ASSERT_MSG(strstr(out, "\nexample:\n  "), "%s %s: no example", prog, cmd);
	TH_ASSERT_MSG(strstr(out, "\noptions:\n"), "%s %s: no options", prog, cmd);
	char what[128];
	snprintf(what, sizeof(what), "%s %s --help", prog, cmd);
	assert_fits(out, what, 80);
}

static void every_command_answers_help(void)
{
	char names[64][32];
	int n = command_names(names, 64);
	TH_ASSERT_MSG(n >= 20, "only %d commands listed", n);
	for (int i = 0; i < n; i++) {
		int s1 = 0, s2 = 0, s3 = 0;
		char *a = RUN(&s1, NULL, "giulia", names[i], "--help");
		char *b = RUN(&s2, NULL, "giulia", names[i], "-h");
		char *c = RUN(&s3, NULL, "giulia", "help", names[i]);
		TH_ASSERT_MSG(s1 == 0 && s2 == 0 && s3 == 0, "%s: help exits %d %d %d", names[i],
		              s1, s2, s3);
		assert_full_help(a, "giulia", names[i]);
		TH_ASSERT_STR_EQ(a, b);
		TH_ASSERT_STR_EQ(a, c);
		free(a);
		free(b);
		free(c);
	}
	const char *sub[] = {"start", "stop", "status"};
	for (size_t i = 0; i < 3; i++) {
		int s1 = 0, s2 = 0;
		char *a = RUN(&s1, NULL, "giulia-observe", sub[i], "--help");
		char *b = RUN(&s2, NULL, "giulia-observe", "help", sub[i]);
		TH_ASSERT_MSG(s1 == 0 && s2 == 0, "giulia-observe %s: help exits %d %d", sub[i], s1,
		              s2);
		assert_full_help(a, "giulia-observe", sub[i]);
		TH_ASSERT_STR_EQ(a, b);
		free(a);
		free(b);
	}
	/* Defaults are stated where they exist. */
	int st = 0;
	char *impact = RUN(&st, NULL, "giulia", "help", "impact");
	TH_ASSERT_STR_CONTAINS(impact, "(default: 2)");
	free(impact);
	char *cx = RUN(&st, NULL, "giulia", "complexity", "--help");
	TH_ASSERT_STR_CONTAINS(cx, "(default: 20)");
	free(cx);
}

static void version_everywhere(void)
{
	int st = 0;
	char *a = RUN(&st, NULL, "giulia", "--version");
	TH_ASSERT_INT_EQ(st, 0);
	TH_ASSERT(GI_STR_STARTS(a, "giulia "));
	char *b = RUN(&st, NULL, "giulia-observe", "--version");
	TH_ASSERT_INT_EQ(st, 0);
	TH_ASSERT(GI_STR_STARTS(b, "giulia-observe "));
	TH_ASSERT_STR_EQ(strchr(a, ' '), strchr(b, ' '));
	char *c = RUN(&st, NULL, "giulia", "pulse", "--version");
	TH_ASSERT_INT_EQ(st, 0);
	TH_ASSERT_STR_EQ(a, c);
	char *d = RUN(&st, NULL, "giulia-observe", "help");
	TH_ASSERT_INT_EQ(st, 0);
	TH_ASSERT_STR_CONTAINS(d, "  start ");
	free(a);
	free(b);
	free(c);
	free(d);
}

static void typo_suggests_nearest(void)
{
	int st = 0;
	char *err = NULL;
	char *out = RUN(&st, &err, "giulia", "indx");
	TH_ASSERT_INT_EQ(st, 2);
	TH_ASSERT_STR_CONTAINS(err, "did you mean `giulia index`");
	free(out);
	free(err);
	out = RUN(&st, &err, "giulia", "help", "dependnets");
	TH_ASSERT_INT_EQ(st, 2);
	TH_ASSERT_STR_CONTAINS(err, "dependents");
	free(out);
	free(err);
	out = RUN(&st, &err, "giulia-observe", "strat", "a@b");
	TH_ASSERT_INT_EQ(st, 2);
	TH_ASSERT_STR_CONTAINS(err, "did you mean `start`");
	free(out);
	free(err);
	/* Nothing near: no suggestion, still the pointer to the list. */
	out = RUN(&st, &err, "giulia", "zzzzzzzz");
	TH_ASSERT_INT_EQ(st, 2);
	TH_ASSERT(strstr(err, "did you mean") == NULL);
	TH_ASSERT_STR_CONTAINS(err, "giulia help");
	free(out);
	free(err);
}

static void docs_match_help(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/docs/CLI.md", th_srcdir());
	char *doc = NULL;
	size_t len = 0;
	TH_ASSERT_OK(gi_fs_read_file(path, 4 << 20, &doc, &len));
	const char *begin = strstr(doc, "\n<!-- help:begin -->\n");
	const char *end = strstr(doc, "\n<!-- help:end -->\n");
	TH_ASSERT_MSG(begin && end && end > begin, "docs/CLI.md has no help:begin/end markers");
	begin += strlen("\n<!-- help:begin -->\n");
	int st = 0;
	char *md = RUN(&st, NULL, "giulia", "help", "--markdown");
	TH_ASSERT_INT_EQ(st, 0);
	size_t n = (size_t)(end + 1 - begin);
	TH_ASSERT_MSG(strlen(md) == n && memcmp(md, begin, n) == 0,
	              "docs/CLI.md's command reference differs from `giulia help --markdown`: "
	              "run `make cli-docs`");
	free(md);
	gi_free(doc);
}

static void man_page_from_help(void)
{
	int st = 0;
	char *man = RUN(&st, NULL, "giulia", "help", "--man");
	TH_ASSERT_INT_EQ(st, 0);
	TH_ASSERT(GI_STR_STARTS(man, ".TH GIULIA 1 "));
	char names[64][32];
	int n = command_names(names, 64);
	for (int i = 0; i < n; i++) {
		char sec[4096];
		snprintf(sec, sizeof(sec), "\n.SS giulia %s\n", names[i]);
		/* roff escapes the hyphen of dead-code */
		if (strchr(names[i], '-'))
			continue;
		TH_ASSERT_MSG(strstr(man, sec), "the man page has no section for %s", names[i]);
	}
	TH_ASSERT_STR_CONTAINS(man, ".SS giulia\\-observe start");
	TH_ASSERT_STR_CONTAINS(man, "\n.SH EXIT STATUS\n");
	free(man);
}

/* Runs the generated bash completion for the words `line` (the last one
 * being completed); returns COMPREPLY joined by spaces. */
static char *complete_bash(const char *script, const char *line)
{
	char prog[8192];
	snprintf(prog, sizeof(prog),
	         "source '%s'; COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); "
	         "_giulia ${COMP_WORDS[0]}; echo \"${COMPREPLY[*]}\"",
	         script, line);
	const char *argv[] = {"bash", "-c", prog, NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_run(argv, NULL, 30000, &out, NULL), 0);
	return out;
}

static void bash_completion_from_help(void)
{
	char script[4096];
	snprintf(script, sizeof(script), "%s/giulia.bash", th_tmpdir());
	int st = 0;
	char *text = RUN(&st, NULL, "giulia", "help", "--completion", "bash");
	TH_ASSERT_INT_EQ(st, 0);
	TH_ASSERT_OK(gi_fs_write_file(script, text, strlen(text)));
	free(text);
	char *a = complete_bash(script, "giulia ind");
	TH_ASSERT_STR_EQ(a, "index\n");
	char *b = complete_bash(script, "giulia impact Foo --de");
	TH_ASSERT_STR_EQ(b, "--depth\n");
	char *c = complete_bash(script, "giulia-observe st");
	TH_ASSERT_STR_CONTAINS(c, "start");
	TH_ASSERT_STR_CONTAINS(c, "status");
	TH_ASSERT_STR_CONTAINS(c, "stop");
	char *d = complete_bash(script, "giulia top n@h --coo");
	TH_ASSERT_STR_EQ(d, "--cookie --cookie-file\n");
	free(a);
	free(b);
	free(c);
	free(d);
	text = RUN(&st, NULL, "giulia", "help", "--completion", "zsh");
	TH_ASSERT_INT_EQ(st, 0);
	TH_ASSERT(GI_STR_STARTS(text, "#compdef giulia giulia-observe\n"));
	/* zsh itself: the script parses, and compinit, finding it on $fpath,
	 * binds it to both programs (as an installed site-functions file). */
	TH_NEED(th_have_program("zsh"), "zsh", "no zsh to check the zsh completion with");
	char zdir[2048];
	snprintf(zdir, sizeof(zdir), "%s/zsh", th_tmpdir());
	TH_ASSERT_OK(gi_fs_mkdir_p(zdir));
	snprintf(script, sizeof(script), "%s/_giulia", zdir);
	TH_ASSERT_OK(gi_fs_write_file(script, text, strlen(text)));
	free(text);
	const char *parse[] = {"zsh", "-n", script, NULL};
	char *err = NULL;
	TH_ASSERT_MSG(ts_run(parse, NULL, 30000, NULL, &err) == 0, "zsh -n: %s", err ? err : "");
	free(err);
	char prog[8192];
	snprintf(prog, sizeof(prog),
	         "fpath=('%s' $fpath); autoload -Uz compinit && compinit -u -D && "
	         "print -r -- \"$_comps[giulia] $_comps[giulia-observe]\"",
	         zdir);
	const char *load[] = {"zsh", "-f", "-c", prog, NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_run(load, NULL, 30000, &out, NULL), 0);
	TH_ASSERT_STR_EQ(out, "_giulia _giulia\n");
	free(out);
}

static bool is_file(const char *dir, const char *rel)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static void install_into_destdir(void)
{
	char dest[4096], destvar[4200], out_dir[4200];
	snprintf(dest, sizeof(dest), "%s/stage", th_tmpdir());
	snprintf(destvar, sizeof(destvar), "DESTDIR=%s", dest);
	bool asan = strstr(th_bindir(), "/build/asan/") != NULL;
	const char *argv[] = {"make",
	                      "--no-print-directory",
	                      "-C",
	                      th_srcdir(),
	                      "install",
	                      destvar,
	                      "PREFIX=/opt/giulia",
	                      asan ? "SANITIZE=1" : NULL,
	                      NULL};
	char *err = NULL;
	int st = ts_run(argv, NULL, 600000, NULL, &err);
	TH_ASSERT_MSG(st == 0, "make install: %d: %s", st, err ? err : "");
	free(err);
	snprintf(out_dir, sizeof(out_dir), "%s/opt/giulia", dest);
	TH_ASSERT(is_file(out_dir, "bin/giulia"));
	TH_ASSERT(is_file(out_dir, "share/man/man1/giulia.1"));
	TH_ASSERT(is_file(out_dir, "share/man/man1/giulia-observe.1"));
	TH_ASSERT(is_file(out_dir, "share/bash-completion/completions/giulia"));
	TH_ASSERT(is_file(out_dir, "share/zsh/site-functions/_giulia"));
	char link[4300], target[64] = {0};
	snprintf(link, sizeof(link), "%s/bin/giulia-observe", out_dir);
	TH_ASSERT(readlink(link, target, sizeof(target) - 1) > 0);
	TH_ASSERT_STR_EQ(target, "giulia");
	/* The installed pair runs, under both names. */
	const char *ver[] = {link, "--version", NULL};
	char *out = NULL;
	TH_ASSERT_INT_EQ(ts_run(ver, NULL, 30000, &out, NULL), 0);
	TH_ASSERT(GI_STR_STARTS(out, "giulia-observe "));
	free(out);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(every_command_answers_help), TH_TEST(version_everywhere),
	    TH_TEST(typo_suggests_nearest),      TH_TEST(docs_match_help),
	    TH_TEST(man_page_from_help),         TH_TEST(bash_completion_from_help),
	    TH_TEST(install_into_destdir),       TH_END,
	};
	return th_main(argc, argv, "integration_cli_help", tests);
}
