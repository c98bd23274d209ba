/*
 * Property check of the Elixir reader against the Elixir compiler: the
 * fixture project tests/fixtures/elixir/shop/lib and the compiler
 * rewrites of tests/fixtures/compiler are compiled with `elixirc`
 * into the test's directory, and for every module the public functions and
 * macros the reader found (name/arity) must be exactly what
 * `Module.__info__(:functions)` and `Module.__info__(:macros)` report, apart
 * from what the compiler generates and the source does not show:
 * __struct__/0,1, a protocol's __protocol__/1, impl_for/1, impl_for!/1, an
 * implementation's __impl__/1, behaviour_info/1, an exception's exception/1
 * and message/1, and anything a `use`d module injects. The module sets must
 * be equal too.
 *
 * A second check runs over real code at scale: the source of Elixir's own
 * standard library rebuilt from the debug info of its .beam files
 * (bench/make_corpus.sh); the public functions and macros, and the remote
 * calls and captures (module -> Mod.f/a), that the reader finds in that text
 * must agree with the definitions' abstract syntax trees, which the
 * compiler keeps in the debug info, for at least 99% of them either way
 * (the rest are artefacts of Macro.to_string; `x[k]` is Access.get/2 on
 * both sides).
 * The third check compares Elixir's own standard library source, at the
 * installed compiler's version (Debian's source package, fetched and
 * checked by scripts/deps.sh into build/elixir-src), with what that
 * compiler exported.
 * needs: elixir src:elixir-lang
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/map.h"
#include "base/str.h"
#include "base/vec.h"
#include "graph/graph.h"
#include "harness.h"
#include "source/elixir.h"
#include "source/elixir_int.h"
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
	char **paths;
	int count, cap;
};

static int collect(const char *path, void *ctx)
{
	struct sources *s = ctx;
	if (gi_str_ends_with(path, ".ex") && s->count < s->cap)
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

/* "M.f/a -> T.g/b" for each call of kind `kind` (or every remote,
 * capture and compiler call when kind < 0) of the functions in `f`. */
static void function_calls(const struct facts_file *f, int kind, struct gi_map *set)
{
	char line[2048];
	for (size_t m = 0; m < f->modules.len; m++) {
		const struct facts_module *mod = gi_vec_get(&f->modules, m);
		for (size_t k = 0; k < mod->functions.len; k++) {
			const struct facts_function *fn = gi_vec_get(&mod->functions, k);
			for (size_t j = 0; j < fn->calls.len; j++) {
				const struct facts_call *c = gi_vec_get(&fn->calls, j);
				bool any = c->kind == FACTS_CALL_REMOTE ||
				           c->kind == FACTS_CALL_CAPTURE ||
				           c->kind == FACTS_CALL_COMPILER;
				if (kind >= 0 ? (int)c->kind != kind : !any)
					continue;
				if (kind == FACTS_CALL_REMOTE &&
				    (fn->kind != FACTS_DEF && fn->kind != FACTS_DEFP))
					continue; /* the literal subset: calls in function bodies */
				if (!c->module || strcmp(c->module, mod->name) == 0)
					continue;
				snprintf(line, sizeof(line), "%s.%s/%d -> %s.%s/%d", mod->name,
				         fn->name, fn->arity, c->module, c->function, c->arity);
				gi_map_put(set, line, (void *)1);
			}
		}
	}
}

/* What the compiler made, function by function: "M.f/a -> T.g/b" for
 * each remote call and BIF call of the object code in BEAM_DIR
 * (beam_disasm), the code of a lambda or comprehension counted for the
 * function it is written in. */
static const char *const object_calls_script =
    "dir = System.get_env(\"BEAM_DIR\")\n"
    "for path <- Path.wildcard(Path.join(dir, \"*.beam\")) do\n"
    "  {:beam_file, mod, _, _, _, code} = :beam_disasm.file(String.to_charlist(path))\n"
    "  for {:function, name, arity, _, body} <- code do\n"
    "    parent =\n"
    "      case Regex.run(~r/^-(?:inlined-)?(.+?)\\/(\\d+)-/, Atom.to_string(name)) do\n"
    "        [_, n, a] -> \"#{n}/#{a}\"\n"
    "        nil -> \"#{name}/#{arity}\"\n"
    "      end\n"
    "    for ins <- body, is_tuple(ins) do\n"
    "      targets =\n"
    "        case ins do\n"
    "          {:bif, f, _, args, _} -> [{:erlang, f, length(args)}]\n"
    "          {:gc_bif, f, _, _, args, _} -> [{:erlang, f, length(args)}]\n"
    "          _ -> for {:extfunc, m, f, a} <- Tuple.to_list(ins), do: {m, f, a}\n"
    "        end\n"
    "      for {m, f, a} <- targets,\n"
    "          do: IO.puts(\"#{inspect(mod)}.#{parent} -> #{inspect(m)}.#{f}/#{a}\")\n"
    "    end\n"
    "  end\n"
    "end\n";

/* The calls of kind compiler that the reader records for the fixture's
 * functions, each in the same function of the object code the compiler
 * made (BEAM_DIR, object_calls_script): the reader says what the compiler
 * writes, not a guess. And every remote call written in a function body is
 * in the object code too (recall 1.0 on the literal calls). */
/* True when call line "M.f/a -> T.g/b" calls a macro: T.g/b is in
 * `macros` ("T g/b" lines, from Module.__info__(:macros) of the target). */
static bool to_macro(const char *line, const struct gi_map *macros)
{
	const char *to = strstr(line, " -> ") + 4, *slash = strrchr(to, '/');
	const char *dot = slash;
	while (dot > to && *dot != '.')
		dot--;
	char key[1024];
	snprintf(key, sizeof(key), "%.*s %.*s", (int)(dot - to), to, (int)strlen(dot + 1), dot + 1);
	return gi_map_get(macros, key) != NULL;
}

/* "T g/b" for each macro of the modules named in $TARGETS (spaces). */
static const char *const macros_script = "for t <- String.split(System.get_env(\"TARGETS\")),\n"
                                         "    mod = Module.concat([t]), Code.ensure_loaded?(mod),\n"
                                         "    function_exported?(mod, :__info__, 1),\n"
                                         "    {f, a} <- mod.__info__(:macros),\n"
                                         "    do: IO.puts(\"#{t} #{f}/#{a}\")\n";

/* True when the call line "M.f/a -> T.g/b" is one the compiler rewrites
 * (ex_inline_lookup) and `made` has its rewrite: Map.keys/1 is
 * :maps.keys/1 in the object code. */
static bool rewritten(const char *line, const struct gi_map *made)
{
	const char *arrow = strstr(line, " -> "), *to = arrow + 4, *slash = strrchr(to, '/');
	const char *dot = slash;
	while (dot > to && *dot != '.')
		dot--;
	char mod[512], fun[256];
	snprintf(mod, sizeof(mod), "%.*s", (int)(dot - to), to);
	snprintf(fun, sizeof(fun), "%.*s", (int)(slash - dot - 1), dot + 1);
	const struct ex_inline *e = ex_inline_lookup(mod, fun, (int)strtol(slash + 1, NULL, 10));
	if (!e)
		return false;
	char key[2048];
	snprintf(key, sizeof(key), "%.*s -> %s.%s/%d", (int)(arrow - line), line, e->erl_module,
	         e->erl_name, e->erl_arity);
	return gi_map_get(made, key) != NULL;
}

static void calls_are_in_the_object_code(const struct sources *s, const char *ebin,
                                         struct gi_buf *report)
{
	struct gi_map said, written, made;
	gi_map_init(&said);
	gi_map_init(&written);
	gi_map_init(&made);
	for (int i = 0; i < s->count; i++) {
		char *text = NULL;
		size_t len = 0;
		struct facts_file *f = NULL;
		TH_ASSERT_OK(gi_fs_read_file(s->paths[i], EX_MAX_FILE_SIZE, &text, &len));
		TH_ASSERT_OK(ex_parse(s->paths[i], text, len, &f));
		function_calls(f, FACTS_CALL_COMPILER, &said);
		function_calls(f, FACTS_CALL_REMOTE, &written);
		facts_file_free(f);
		gi_free(text);
	}
	const char *eargv[] = {"elixir", "-e", object_calls_script, NULL};
	char *out = NULL, *se = NULL;
	int rc = ts_run(eargv, NULL, 120000, &out, &se);
	TH_ASSERT_MSG(rc == 0 && out, "elixir failed (%d): %s", rc, se ? se : "");
	free(se);
	char *save = NULL;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		gi_map_put(&made, line, (void *)1);
	TH_ASSERT_INT_GE(said.len, 10);
	TH_ASSERT_INT_GE(written.len, 10);
	/* The macros among the targets of the written calls: a macro call is
	 * expanded, not a call (the literal subset is calls of functions). */
	struct gi_buf targets;
	gi_buf_init(&targets, 0);
	struct gi_map seen, macros;
	gi_map_init(&seen);
	gi_map_init(&macros);
	for (size_t i = 0; i < written.cap; i++) {
		const char *k = written.slots[i].key;
		if (!k)
			continue;
		const char *to = strstr(k, " -> ") + 4, *dot = strrchr(to, '/');
		while (dot > to && *dot != '.')
			dot--;
		char mod[512];
		snprintf(mod, sizeof(mod), "%.*s", (int)(dot - to), to);
		if (mod[0] != ':' && !gi_map_get(&seen, mod)) {
			gi_map_put(&seen, mod, (void *)1);
			gi_buf_printf(&targets, "%s ", mod);
		}
	}
	setenv("TARGETS", gi_buf_str(&targets), 1);
	const char *margv[] = {"elixir", "-pa", ebin, "-e", macros_script, NULL};
	char *mout = NULL;
	se = NULL;
	rc = ts_run(margv, NULL, 120000, &mout, &se);
	TH_ASSERT_MSG(rc == 0 && mout, "elixir failed (%d): %s", rc, se ? se : "");
	free(se);
	save = NULL;
	for (char *line = strtok_r(mout, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		gi_map_put(&macros, line, (void *)1);
	free(mout);
	gi_buf_destroy(&targets);
	gi_map_destroy(&seen);
	for (size_t i = 0; i < said.cap; i++)
		if (said.slots[i].key && !gi_map_get(&made, said.slots[i].key))
			gi_buf_printf(report,
			              "reader says the compiler writes, object code has not: %s\n",
			              said.slots[i].key);
	for (size_t i = 0; i < written.cap; i++)
		if (written.slots[i].key && !gi_map_get(&made, written.slots[i].key) &&
		    !to_macro(written.slots[i].key, &macros) &&
		    !rewritten(written.slots[i].key, &made))
			gi_buf_printf(report, "written in the source, object code has not: %s\n",
			              written.slots[i].key);
	gi_map_destroy(&macros);
	gi_map_destroy(&said);
	gi_map_destroy(&written);
	gi_map_destroy(&made);
	free(out);
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
	static char *paths[MAX_FILES];
	struct sources s = {paths, 0, MAX_FILES};
	TH_ASSERT_OK(gi_fs_walk(lib, NULL, collect, &s));
	TH_ASSERT_INT_GE(s.count, 10);
	snprintf(lib, sizeof(lib), "%s/tests/fixtures/compiler", th_srcdir());
	TH_ASSERT_OK(gi_fs_walk(lib, NULL, collect, &s));

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
	calls_are_in_the_object_code(&s, out, &report);
	TH_ASSERT_MSG(report.len == 0, "reader and compiler disagree:\n%s", gi_buf_str(&report));

	gi_buf_destroy(&report);
	gi_map_destroy(&found);
	gi_map_destroy(&uses);
	gi_map_destroy(&compiled);
	free(info);
	for (int i = 0; i < s.count; i++)
		gi_free(s.paths[i]);
}

/* Prints, for each definition of the corpus that Macro.to_string can print
 * (the same ones bench/make_corpus.sh writes), "M function f/a" or
 * "M macro f/a" for public ones and "M call X.f/a" for its remote calls. */
static const char *const debug_info_script =
    "for f <- Path.wildcard(\"/usr/lib/elixir/lib/*/ebin/*.beam\") do\n"
    "  mod = f |> Path.basename(\".beam\") |> String.to_atom()\n"
    "  with {:ok, {^mod, [debug_info: {:debug_info_v1, backend, data}]}} <-\n"
    "         :beam_lib.chunks(String.to_charlist(f), [:debug_info]),\n"
    "       {:ok, %{definitions: defs}} <- backend.debug_info(:elixir_v1, mod, data, []) do\n"
    "    for {{name, arity}, kind, _m, clauses} <- defs, {_cm, args, guards, expr} <- clauses do\n"
    "      head = {name, [], args}\n"
    "      head = case guards do\n"
    "        [] -> head\n"
    "        gs -> {:when, [], [head, Enum.reduce(gs, &{:or, [], [&2, &1]})]}\n"
    "      end\n"
    "      ok = try do\n"
    "        Macro.to_string({kind, [], [head, [do: expr]]})\n"
    "        true\n"
    "      rescue\n"
    "        _ -> false\n"
    "      end\n"
    "      if ok do\n"
    "        m = inspect(mod)\n"
    "        if kind == :def, do: IO.puts(\"#{m} function #{name}/#{arity}\")\n"
    "        if kind == :defmacro, do: IO.puts(\"#{m} macro #{name}/#{arity}\")\n"
    "        Macro.prewalk([guards, expr, args], nil, fn\n"
    "          {:&, _, [{:/, _, [{{:., _, [t, g]}, _, []}, n]}]}, acc\n"
    "          when is_atom(t) and is_atom(g) and is_integer(n) ->\n"
    "            IO.puts(\"#{m} call #{inspect(t)}.#{g}/#{n}\")\n"
    "            {:ok, acc}\n"
    "          {{:., _, [t, g]}, _, a} = node, acc when is_atom(t) and is_atom(g) and is_list(a) "
    "->\n"
    "            IO.puts(\"#{m} call #{inspect(t)}.#{g}/#{length(a)}\")\n"
    "            {node, acc}\n"
    "          node, acc -> {node, acc}\n"
    "        end)\n"
    "      end\n"
    "    end\n"
    "  else\n"
    "    _ -> :ok\n"
    "  end\n"
    "end\n";

struct corpus_walk {
	struct gi_map *set;
	int files;
};

/* The same lines as debug_info_script, from the reader, into ctx's set. */
static int corpus_file(const char *path, void *ctx)
{
	struct corpus_walk *w = ctx;
	char *text = NULL;
	size_t len = 0;
	struct facts_file *f = NULL;
	char line[2048];
	if (!gi_str_ends_with(path, ".ex") ||
	    gi_fs_read_file(path, EX_MAX_FILE_SIZE, &text, &len) != 0)
		return 0;
	if (ex_parse(path, text, len, &f) == 0) {
		w->files++;
		for (size_t m = 0; m < f->modules.len; m++) {
			struct facts_module *mod = gi_vec_get(&f->modules, m);
			for (size_t k = 0; k < mod->functions.len; k++) {
				struct facts_function *fn = gi_vec_get(&mod->functions, k);
				bool macro =
				    fn->kind == FACTS_DEFMACRO || fn->kind == FACTS_DEFGUARD;
				if (fn->is_public) {
					snprintf(line, sizeof(line), "%s %s %s/%d", mod->name,
					         macro ? "macro" : "function", fn->name, fn->arity);
					gi_map_put(w->set, line, (void *)1);
				}
				for (size_t j = 0; j < fn->calls.len; j++) {
					struct facts_call *c = gi_vec_get(&fn->calls, j);
					/* a call on a module in a variable names no
					 * module: the debug info has none either */
					if (c->kind == FACTS_CALL_LOCAL ||
					    c->kind == FACTS_CALL_COMPILER ||
					    (c->kind == FACTS_CALL_DYNAMIC && !c->module) ||
					    (c->kind == FACTS_CALL_CAPTURE &&
					     c->module == mod->name))
						continue;
					snprintf(line, sizeof(line), "%s call %s.%s/%d", mod->name,
					         c->module, c->function, c->arity);
					gi_map_put(w->set, line, (void *)1);
				}
			}
		}
		facts_file_free(f);
	}
	gi_free(text);
	return 0;
}

static void stdlib_corpus_agrees_with_debug_info(void)
{
	char corpus[4096], script[4096];
	snprintf(corpus, sizeof(corpus), "%s/corpus", th_tmpdir());
	snprintf(script, sizeof(script), "%s/bench/make_corpus.sh", th_srcdir());
	const char *margv[] = {script, corpus, NULL};
	char *so = NULL, *se = NULL;
	int rc = ts_run(margv, NULL, 600000, &so, &se);
	TH_ASSERT_MSG(rc == 0, "make_corpus.sh failed (%d): %s%s", rc, so ? so : "", se ? se : "");
	free(so);
	free(se);
	const char *eargv[] = {"elixir", "-e", debug_info_script, NULL};
	char *info = NULL;
	se = NULL;
	rc = ts_run(eargv, NULL, 600000, &info, &se);
	TH_ASSERT_MSG(rc == 0 && info, "elixir failed (%d): %s", rc, se ? se : "");
	free(se);

	struct gi_map found, expected;
	gi_map_init(&found);
	gi_map_init(&expected);
	struct corpus_walk w = {&found, 0};
	TH_ASSERT_OK(gi_fs_walk(corpus, NULL, corpus_file, &w));
	TH_ASSERT_INT_GE(w.files, 300);
	char *save = NULL;
	for (char *line = strtok_r(info, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		gi_map_put(&expected, line, (void *)1);

	struct gi_buf report;
	gi_buf_init(&report, 0);
	size_t missed = 0, extra = 0;
	for (size_t i = 0; i < expected.cap; i++) {
		if (!expected.slots[i].key || gi_map_get(&found, expected.slots[i].key))
			continue;
		if (missed++ < 20)
			gi_buf_printf(&report, "debug info has, reader missed: %s\n",
			              expected.slots[i].key);
	}
	for (size_t i = 0; i < found.cap; i++) {
		if (!found.slots[i].key || gi_map_get(&expected, found.slots[i].key))
			continue;
		if (extra++ < 20)
			gi_buf_printf(&report, "reader found, debug info has not: %s\n",
			              found.slots[i].key);
	}
	printf("corpus: %zu facts in the debug info, %zu found; %zu missed, %zu extra\n",
	       expected.len, found.len, missed, extra);
	TH_ASSERT_INT_GE(expected.len, 10000);
	TH_ASSERT_MSG(missed * 100 <= expected.len && extra * 100 <= expected.len,
	              "%zu missed, %zu extra of %zu:\n%s", missed, extra, expected.len,
	              gi_buf_str(&report));
	gi_buf_destroy(&report);
	gi_map_destroy(&found);
	gi_map_destroy(&expected);
	free(info);
}

/* The exports of every Elixir module of the installed standard library
 * (`__info__(:functions)` and `:macros`), as "M function f/a" lines. */
static const char *const stdlib_exports_script =
    "for f <- Path.wildcard(\"/usr/lib/elixir/lib/*/ebin/Elixir.*.beam\") do\n"
    "  mod = f |> Path.basename(\".beam\") |> String.to_atom()\n"
    "  Code.ensure_loaded!(mod)\n"
    "  name = inspect(mod)\n"
    "  IO.puts(\"#{name} module\")\n"
    "  for {f, a} <- mod.__info__(:functions), do: IO.puts(\"#{name} function #{f}/#{a}\")\n"
    "  for {f, a} <- mod.__info__(:macros), do: IO.puts(\"#{name} macro #{f}/#{a}\")\n"
    "end\n";

/* "M function f/a" / "M macro f/a" for each public function of the
 * project modules of the knowledge graph built from the files of `s`: what
 * the reader found plus what the graph applies (use injection). */
static void graph_facts(const struct sources *s, struct gi_map *set)
{
	struct kg_graph *g = kg_graph_new();
	for (int i = 0; i < s->count; i++) {
		char *text = NULL;
		size_t len = 0;
		struct facts_file *f = NULL;
		TH_ASSERT_OK(gi_fs_read_file(s->paths[i], EX_MAX_FILE_SIZE, &text, &len));
		TH_ASSERT_OK(ex_parse(s->paths[i], text, len, &f));
		TH_ASSERT_MSG(f->errors.len == 0, "%s: parse error", s->paths[i]);
		kg_graph_add_facts(g, f, false);
		facts_file_free(f);
		gi_free(text);
	}
	kg_graph_finish(g);
	char line[1024];
	for (size_t i = 0; i < g->functions.len; i++) {
		const struct kg_function *fn = kg_function_at(g, (int)i);
		const struct kg_module *m = kg_module_at(g, fn->module);
		if (!fn->defined || !fn->is_public || !m->project)
			continue;
		bool macro = fn->kind == FACTS_DEFMACRO || fn->kind == FACTS_DEFGUARD;
		snprintf(line, sizeof(line), "%s %s %s/%d", m->name, macro ? "macro" : "function",
		         fn->name, fn->arity);
		gi_map_put(set, line, (void *)1);
	}
	kg_graph_free(g);
}

/* The apps of the standard library Debian installs. */
static const char *const stdlib_apps[] = {"eex", "elixir", "ex_unit", "iex", "logger", "mix"};

/* The reader on the Elixir standard library's own source, at the version of
 * the installed compiler, against what that compiler exported: every
 * public function and macro, generated ones included, precision >= 0.995
 * and recall >= 0.99 over the modules both know (a module only one side
 * has counts all its functions as missed or extra). The source is Debian's
 * source package of the installed version, unpacked by scripts/deps.sh
 * into build/elixir-src; GIULIA_ELIXIR_SRC names another tree (lib/APP/lib
 * under it). */
static void stdlib_source_matches_exports(void)
{
	char dflt[2048], probe[4096];
	snprintf(dflt, sizeof(dflt), "%s/build/elixir-src", th_srcdir());
	const char *root = getenv("GIULIA_ELIXIR_SRC");
	if (!root || !*root)
		root = dflt;
	snprintf(probe, sizeof(probe), "%s/lib/elixir/lib/kernel.ex", root);
	TH_NEED(access(probe, R_OK) == 0, "src:elixir-lang", "no Elixir source at %s", root);
	struct gi_map found, compiled;
	gi_map_init(&found);
	gi_map_init(&compiled);
	struct sources s = {0};
	s.cap = 4096;
	s.paths = gi_calloc((size_t)s.cap, sizeof(char *));
	for (size_t a = 0; a < sizeof(stdlib_apps) / sizeof(stdlib_apps[0]); a++) {
		char lib[4096];
		int before = s.count;
		snprintf(lib, sizeof(lib), "%s/lib/%s/lib", root, stdlib_apps[a]);
		TH_ASSERT_OK(gi_fs_walk(lib, NULL, collect, &s));
		TH_ASSERT_INT_GE(s.count, before + 1);
		if (strcmp(stdlib_apps[a], "elixir") == 0) {
			/* String.Unicode, String.Tokenizer...: compiled from lib/elixir/unicode */
			snprintf(lib, sizeof(lib), "%s/lib/elixir/unicode", root);
			TH_ASSERT_OK(gi_fs_walk(lib, NULL, collect, &s));
		}
	}
	graph_facts(&s, &found);
	for (int i = 0; i < s.count; i++)
		gi_free(s.paths[i]);
	gi_free(s.paths);
	const char *eargv[] = {"elixir", "-e", stdlib_exports_script, NULL};
	char *info = NULL, *se = NULL;
	int rc = ts_run(eargv, NULL, 600000, &info, &se);
	TH_ASSERT_MSG(rc == 0 && info, "elixir failed (%d): %s", rc, se ? se : "");
	free(se);
	char *save = NULL;
	for (char *line = strtok_r(info, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		gi_map_put(&compiled, line, (void *)1);

	struct gi_buf report;
	gi_buf_init(&report, 0);
	size_t expected = 0, missed = 0, got = 0, extra = 0;
	for (size_t i = 0; i < compiled.cap; i++) {
		const char *k = compiled.slots[i].key;
		if (!k || gi_str_ends_with(k, " module"))
			continue;
		expected++;
		if (gi_map_get(&found, k))
			continue;
		missed++;
		gi_buf_printf(&report, "compiler has, reader missed: %s\n", k);
	}
	for (size_t i = 0; i < found.cap; i++) {
		const char *k = found.slots[i].key;
		if (!k || gi_str_ends_with(k, " module"))
			continue;
		got++;
		if (gi_map_get(&compiled, k))
			continue;
		extra++;
		gi_buf_printf(&report, "reader found, compiler has not: %s\n", k);
	}
	double recall = expected ? (double)(expected - missed) / (double)expected : 0;
	double precision = got ? (double)(got - extra) / (double)got : 0;
	printf("stdlib source: %zu exported, %zu found; recall %.4f, precision %.4f\n", expected,
	       got, recall, precision);
	if (getenv("GIULIA_STDLIB_REPORT"))
		fputs(gi_buf_str(&report), stdout);
	TH_ASSERT_INT_GE(expected, 3000);
	TH_ASSERT_MSG(recall >= 0.99 && precision >= 0.995,
	              "recall %.4f precision %.4f (%zu missed, %zu extra); set "
	              "GIULIA_STDLIB_REPORT=1 for the list",
	              recall, precision, missed, extra);
	gi_buf_destroy(&report);
	gi_map_destroy(&found);
	gi_map_destroy(&compiled);
	free(info);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(public_functions_match_the_compiler),
	    TH_TEST(stdlib_corpus_agrees_with_debug_info),
	    TH_TEST(stdlib_source_matches_exports),
	    TH_END,
	};
	return th_main(argc, argv, "integration_elixir_compiler", tests);
}
