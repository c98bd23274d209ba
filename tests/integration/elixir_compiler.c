/*
 * Property check of the Elixir reader against the Elixir compiler: the
 * fixture project tests/fixtures/elixir/shop/lib is compiled with `elixirc`
 * into the test's directory, and for every module the public functions and
 * macros the reader found (name/arity) must be exactly what
 * `Module.__info__(:functions)` and `Module.__info__(:macros)` report, apart
 * from what the compiler generates and the source does not show:
 * __struct__/0,1, a protocol's __protocol__/1, impl_for/1, impl_for!/1, an
 * implementation's __impl__/1, behaviour_info/1, an exception's exception/1
 * and message/1, and anything a `use`d module injects. The module sets must
 * be equal too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/map.h"
#include "base/str.h"
#include "base/vec.h"
#include "harness.h"
#include "source/elixir.h"
#include "source/facts.h"
#include "support.h"

#define MAX_FILES 256

static const char *const info_script =
    "dir = System.get_env(\"BEAM_DIR\")\n"
    "for path <- Path.wildcard(Path.join(dir, \"*.beam\")) do\n"
    "  mod = path |> Path.basename(\".beam\") |> String.to_atom()\n"
    "  Code.ensure_loaded!(mod)\n"
    "  name = inspect(mod)\n"
    "  IO.puts(\"#{name} module\")\n"
    "  for {f, a} <- mod.__info__(:functions), do: IO.puts(\"#{name} function #{f}/#{a}\")\n"
    "  for {f, a} <- mod.__info__(:macros), do: IO.puts(\"#{name} macro #{f}/#{a}\")\n"
    "end\n";

struct sources {
	char *paths[MAX_FILES];
	int count;
};

static int collect(const char *path, void *ctx)
{
	struct sources *s = ctx;
	if (gi_str_ends_with(path, ".ex") && s->count < MAX_FILES)
		s->paths[s->count++] = gi_strdup(path);
	return 0;
}

/* "MOD kind name/arity" lines of what the reader found, in `set` (key -> 1),
 * and the modules that `use` something in `uses`. */
static void reader_facts(const struct sources *s, struct gi_map *set, struct gi_map *uses)
{
	char line[1024];
	for (int i = 0; i < s->count; i++) {
		char *text = NULL;
		size_t len = 0;
		struct facts_file *f = NULL;
		TH_ASSERT_OK(gi_fs_read_file(s->paths[i], EX_MAX_FILE_SIZE, &text, &len));
		TH_ASSERT_OK(ex_parse(s->paths[i], text, len, &f));
		TH_ASSERT_MSG(f->errors.len == 0, "%s: parse error", s->paths[i]);
		for (size_t m = 0; m < f->modules.len; m++) {
			struct facts_module *mod = gi_vec_get(&f->modules, m);
			snprintf(line, sizeof(line), "%s module", mod->name);
			gi_map_put(set, line, (void *)1);
			for (size_t r = 0; r < mod->refs.len; r++)
				if (((struct facts_ref *)gi_vec_get(&mod->refs, r))->kind ==
				    FACTS_REF_USE)
					gi_map_put(uses, mod->name, (void *)1);
			for (size_t k = 0; k < mod->functions.len; k++) {
				struct facts_function *fn = gi_vec_get(&mod->functions, k);
				if (!fn->is_public)
					continue;
				bool macro =
				    fn->kind == FACTS_DEFMACRO || fn->kind == FACTS_DEFGUARD;
				snprintf(line, sizeof(line), "%s %s %s/%d", mod->name,
				         macro ? "macro" : "function", fn->name, fn->arity);
				gi_map_put(set, line, (void *)1);
			}
		}
		facts_file_free(f);
		gi_free(text);
	}
}

static bool generated(const char *line)
{
	static const char *const names[] = {
	    " function __struct__/0",     " function __struct__/1", " function __protocol__/1",
	    " function impl_for/1",       " function impl_for!/1",  " function __impl__/1",
	    " function behaviour_info/1", " function exception/1",  " function message/1",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (gi_str_ends_with(line, names[i]))
			return true;
	return false;
}

static void public_functions_match_the_compiler(void)
{
	char lib[4096], out[4096];
	snprintf(lib, sizeof(lib), "%s/tests/fixtures/elixir/shop/lib", th_srcdir());
	snprintf(out, sizeof(out), "%s/ebin", th_tmpdir());
	TH_ASSERT_OK(gi_fs_mkdir_p(out));
	struct sources s = {0};
	TH_ASSERT_OK(gi_fs_walk(lib, NULL, collect, &s));
	TH_ASSERT_INT_GE(s.count, 10);

	const char *argv[MAX_FILES + 8];
	int n = 0;
	argv[n++] = "elixirc";
	argv[n++] = "--ignore-module-conflict";
	argv[n++] = "-o";
	argv[n++] = out;
	for (int i = 0; i < s.count; i++)
		argv[n++] = s.paths[i];
	argv[n] = NULL;
	char *so = NULL, *se = NULL;
	int rc = ts_run(argv, NULL, 300000, &so, &se);
	TH_ASSERT_MSG(rc == 0, "elixirc failed (%d): %s%s", rc, so ? so : "", se ? se : "");
	free(so);
	free(se);

	setenv("BEAM_DIR", out, 1);
	const char *eargv[] = {"elixir", "-pa", out, "-e", info_script, NULL};
	char *info = NULL;
	se = NULL;
	rc = ts_run(eargv, NULL, 120000, &info, &se);
	TH_ASSERT_MSG(rc == 0 && info, "elixir failed (%d): %s", rc, se ? se : "");
	free(se);

	struct gi_map found, uses, compiled;
	gi_map_init(&found);
	gi_map_init(&uses);
	gi_map_init(&compiled);
	reader_facts(&s, &found, &uses);

	struct gi_buf report;
	gi_buf_init(&report, 0);
	int lines = 0;
	char *save = NULL;
	for (char *line = strtok_r(info, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		gi_map_put(&compiled, line, (void *)1);
		lines++;
		if (gi_map_get(&found, line) || generated(line))
			continue;
		/* What a `use` injects is not in the source. */
		char module[512];
		const char *sp = strchr(line, ' ');
		snprintf(module, sizeof(module), "%.*s", sp ? (int)(sp - line) : 0, line);
		if (strstr(line, " module") == NULL && gi_map_get(&uses, module))
			continue;
		gi_buf_printf(&report, "compiler has, reader missed: %s\n", line);
	}
	for (size_t i = 0; i < found.cap; i++)
		if (found.slots[i].key && !gi_map_get(&compiled, found.slots[i].key))
			gi_buf_printf(&report, "reader found, compiler has not: %s\n",
			              found.slots[i].key);
	TH_ASSERT_INT_GE(lines, 60);
	TH_ASSERT_MSG(report.len == 0, "reader and compiler disagree:\n%s", gi_buf_str(&report));

	gi_buf_destroy(&report);
	gi_map_destroy(&found);
	gi_map_destroy(&uses);
	gi_map_destroy(&compiled);
	free(info);
	for (int i = 0; i < s.count; i++)
		gi_free(s.paths[i]);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(public_functions_match_the_compiler),
	    TH_END,
	};
	return th_main(argc, argv, "integration_elixir_compiler", tests);
}
