/*
 * Unit tests for the Elixir reader (src/source/elixir.c).
 *
 * Data-driven: every fixture project under tests/fixtures/elixir/ has, for
 * each source file lib/X.ex, a hand-written expected file expected/X.ex.facts
 * listing every fact the reader must produce, one per line, in the canonical
 * text form rendered below (see tests/fixtures/elixir/README.md). The test
 * renders the facts of the file and compares the two as sets of lines, so that
 * both a missing and an unexpected fact fail with the line that differs.
 *
 * `unit_elixir --dump FILE` prints the rendered facts of FILE (for writing and
 * checking expected files by hand).
 * needs:
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/str.h"
#include "base/vec.h"
#include "harness.h"
#include "source/elixir.h"
#include "source/facts.h"

/* ---- rendering ------------------------------------------------------------ */

static void lines_add(struct gi_vec *lines, struct gi_buf *b)
{
	char *s = gi_buf_take(b);
	gi_vec_push(lines, &s);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void lines_free(struct gi_vec *lines)
{
	for (size_t i = 0; i < lines->len; i++)
		gi_free(GI_VEC_AT(lines, char *, i));
	gi_vec_destroy(lines);
}

/* Sorts and removes duplicates. */
static void lines_normalize(struct gi_vec *lines)
{
	gi_vec_sort(lines, cmp_str);
	size_t out = 0;
	for (size_t i = 0; i < lines->len; i++) {
		char *s = GI_VEC_AT(lines, char *, i);
		if (out > 0 && strcmp(GI_VEC_AT(lines, char *, out - 1), s) == 0) {
			gi_free(s);
			continue;
		}
		GI_VEC_AT(lines, char *, out++) = s;
	}
	lines->len = out;
}

static void render_function(struct gi_vec *lines, const struct facts_module *m,
                            const struct facts_function *fn)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_buf_printf(&b,
	              "function %s.%s/%d %s %s clauses=%u lines=%u-%u loc=%u cc=%d cog=%d nest=%d",
	              m->name, fn->name, fn->arity, facts_function_kind_name(fn->kind),
	              fn->is_public ? "public" : "private", fn->clauses, fn->line_start,
	              fn->line_end, fn->lines, fn->cyclomatic, fn->cognitive, fn->max_nesting);
	if (fn->has_doc)
		gi_buf_puts(&b, fn->doc_false ? " doc=false" : " doc");
	if (fn->has_spec)
		gi_buf_puts(&b, " spec");
	if (fn->has_impl)
		gi_buf_puts(&b, " impl");
	if (fn->has_guard)
		gi_buf_puts(&b, " guard");
	if (fn->from_defaults)
		gi_buf_puts(&b, " defaults");
	if (fn->delegate_to)
		gi_buf_printf(&b, " delegate=%s", fn->delegate_to);
	if (fn->generated_by)
		gi_buf_printf(&b, " generated=%s", fn->generated_by);
	lines_add(lines, &b);
	for (size_t k = 0; k < fn->calls.len; k++) {
		const struct facts_call *c = gi_vec_get(&fn->calls, k);
		gi_buf_printf(&b, "call %s.%s/%d %s %s.%s/%d", m->name, fn->name, fn->arity,
		              facts_call_kind_name(c->kind), c->module ? c->module : "?",
		              c->function ? c->function : "?", c->arity);
		lines_add(lines, &b);
	}
	gi_buf_destroy(&b);
}

/* Renders every fact of `f` as sorted, distinct lines (caller frees with lines_free). */
static void render(const struct facts_file *f, struct gi_vec *lines)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_vec_init(lines, sizeof(char *));
	for (size_t i = 0; i < f->modules.len; i++) {
		const struct facts_module *m = gi_vec_get(&f->modules, i);
		gi_buf_printf(&b, "module %s %s lines=%u-%u moduledoc=%s", m->name,
		              facts_module_kind_name(m->kind), m->line_start, m->line_end,
		              !m->has_moduledoc ? "no" : (m->moduledoc_false ? "false" : "yes"));
		if (m->protocol)
			gi_buf_printf(&b, " protocol=%s", m->protocol);
		if (m->impl_for)
			gi_buf_printf(&b, " for=%s", m->impl_for);
		if (m->has_struct) {
			gi_buf_puts(&b, " struct=");
			for (size_t k = 0; k < m->struct_fields.len; k++)
				gi_buf_printf(&b, "%s%s", k ? "," : "",
				              GI_VEC_AT(&m->struct_fields, const char *, k));
		}
		lines_add(lines, &b);
		for (size_t k = 0; k < m->callbacks.len; k++) {
			gi_buf_printf(&b, "callback %s %s", m->name,
			              GI_VEC_AT(&m->callbacks, const char *, k));
			lines_add(lines, &b);
		}
		for (size_t k = 0; k < m->refs.len; k++) {
			const struct facts_ref *r = gi_vec_get(&m->refs, k);
			gi_buf_printf(&b, "ref %s %s %s", m->name, facts_ref_kind_name(r->kind),
			              r->target);
			lines_add(lines, &b);
		}
		for (size_t k = 0; k < m->functions.len; k++)
			render_function(lines, m, gi_vec_get(&m->functions, k));
	}
	for (size_t i = 0; i < f->errors.len; i++) {
		const struct facts_error *e = gi_vec_get(&f->errors, i);
		gi_buf_printf(&b, "error %u %s", e->line, e->message);
		lines_add(lines, &b);
	}
	gi_buf_destroy(&b);
	lines_normalize(lines);
}

static int parse_file(const char *path, struct facts_file **out)
{
	char *src = NULL;
	size_t len = 0;
	int rc = gi_fs_read_file(path, EX_MAX_FILE_SIZE + 1, &src, &len);
	if (rc == 0)
		rc = ex_parse(path, src, len, out);
	gi_free(src);
	return rc;
}

static int dump(const char *path)
{
	struct facts_file *f = NULL;
	int rc = parse_file(path, &f);
	if (rc != 0) {
		fprintf(stderr, "%s: %s\n", path, gi_strerror(rc));
		return 1;
	}
	struct gi_vec lines;
	render(f, &lines);
	for (size_t i = 0; i < lines.len; i++)
		printf("%s\n", GI_VEC_AT(&lines, char *, i));
	lines_free(&lines);
	facts_file_free(f);
	return 0;
}

/* ---- fixtures ------------------------------------------------------------- */

/* Reads an expected file into sorted, distinct lines (no blanks, no comments). */
static void expected_read(const char *path, struct gi_vec *lines)
{
	char *text = NULL;
	size_t len = 0;
	TH_ASSERT_MSG(gi_fs_read_file(path, 1 << 20, &text, &len) == 0, "cannot read %s", path);
	gi_vec_init(lines, sizeof(char *));
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);
		while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0 || line[0] == '#')
			continue;
		char *copy = gi_strdup(line);
		gi_vec_push(lines, &copy);
	}
	gi_free(text);
	lines_normalize(lines);
}

static bool lines_has(const struct gi_vec *lines, const char *s)
{
	return bsearch(&s, lines->items, lines->len, sizeof(char *), cmp_str) != NULL;
}

struct fixture_walk {
	int files;
	struct gi_buf report;
};

/* For P/expected/X.facts: parses P/X and compares. */
static int fixture_check(const char *path, void *ctx)
{
	struct fixture_walk *w = ctx;
	const char *mark = strstr(path, "/expected/");
	if (!mark || !gi_str_ends_with(path, ".facts"))
		return 0;
	char source[4096];
	snprintf(source, sizeof(source), "%.*s/%.*s", (int)(mark - path), path,
	         (int)(strlen(mark) - strlen("/expected/") - strlen(".facts")),
	         mark + strlen("/expected/"));
	struct facts_file *f = NULL;
	int rc = parse_file(source, &f);
	if (rc != 0) {
		gi_buf_printf(&w->report, "%s: %s\n", source, gi_strerror(rc));
		return 0;
	}
	struct gi_vec want, got;
	expected_read(path, &want);
	render(f, &got);
	for (size_t i = 0; i < want.len; i++)
		if (!lines_has(&got, GI_VEC_AT(&want, char *, i)))
			gi_buf_printf(&w->report, "%s: missing:    %s\n", source,
			              GI_VEC_AT(&want, char *, i));
	for (size_t i = 0; i < got.len; i++)
		if (!lines_has(&want, GI_VEC_AT(&got, char *, i)))
			gi_buf_printf(&w->report, "%s: unexpected: %s\n", source,
			              GI_VEC_AT(&got, char *, i));
	lines_free(&want);
	lines_free(&got);
	facts_file_free(f);
	w->files++;
	return 0;
}

static void fixtures_match_expected_facts(void)
{
	char root[4096];
	snprintf(root, sizeof(root), "%s/tests/fixtures/elixir", th_srcdir());
	struct fixture_walk w = {0};
	gi_buf_init(&w.report, 0);
	TH_ASSERT_OK(gi_fs_walk(root, NULL, fixture_check, &w));
	TH_ASSERT_INT_GE(w.files, 15);
	TH_ASSERT_MSG(w.report.len == 0, "facts differ from the expected files:\n%s",
	              gi_buf_str(&w.report));
	gi_buf_destroy(&w.report);
}

/* Every fixture source file has its expected file. */
static int fixture_has_expected(const char *path, void *ctx)
{
	struct gi_buf *missing = ctx;
	if (strstr(path, "/expected/") ||
	    !(gi_str_ends_with(path, ".ex") || gi_str_ends_with(path, ".exs")))
		return 0;
	const char *project = strstr(path, "/tests/fixtures/elixir/");
	if (!project)
		return 0;
	project += strlen("/tests/fixtures/elixir/");
	const char *slash = strchr(project, '/');
	if (!slash)
		return 0;
	char expected[4096];
	snprintf(expected, sizeof(expected), "%.*s/expected%s.facts", (int)(slash - path), path,
	         slash);
	FILE *fp = fopen(expected, "r");
	if (fp)
		fclose(fp);
	else
		gi_buf_printf(missing, "%s\n", expected);
	return 0;
}

static void fixtures_all_have_expected_facts(void)
{
	char root[4096];
	snprintf(root, sizeof(root), "%s/tests/fixtures/elixir", th_srcdir());
	struct gi_buf missing;
	gi_buf_init(&missing, 0);
	TH_ASSERT_OK(gi_fs_walk(root, NULL, fixture_has_expected, &missing));
	TH_ASSERT_MSG(missing.len == 0, "no expected file:\n%s", gi_buf_str(&missing));
	gi_buf_destroy(&missing);
}

/* ---- direct checks ----------------------------------------------------------- */

static struct facts_file *parse_text(const char *src)
{
	struct facts_file *f = NULL;
	TH_ASSERT_OK(ex_parse("test.ex", src, strlen(src), &f));
	return f;
}

static void parses_a_module(void)
{
	struct facts_file *f = parse_text("defmodule A.B do\n"
	                                  "  def f(x), do: C.g(x)\n"
	                                  "end\n");
	TH_ASSERT_INT_EQ(f->modules.len, 1);
	TH_ASSERT_INT_EQ(f->errors.len, 0);
	struct facts_module *m = gi_vec_get(&f->modules, 0);
	TH_ASSERT_STR_EQ(m->name, "A.B");
	TH_ASSERT_INT_EQ(m->functions.len, 1);
	struct facts_function *fn = gi_vec_get(&m->functions, 0);
	TH_ASSERT_STR_EQ(fn->name, "f");
	TH_ASSERT_INT_EQ(fn->arity, 1);
	TH_ASSERT_INT_EQ(fn->calls.len, 1);
	struct facts_call *c = gi_vec_get(&fn->calls, 0);
	TH_ASSERT_INT_EQ(c->kind, FACTS_CALL_REMOTE);
	TH_ASSERT_STR_EQ(c->module, "C");
	TH_ASSERT_STR_EQ(c->function, "g");
	TH_ASSERT_INT_EQ(c->arity, 1);
	facts_file_free(f);
}

/* Renders `src` and checks that each of the NULL-terminated `want` lines is there. */
static void expect_lines(const char *src, const char *const *want)
{
	struct facts_file *f = parse_text(src);
	struct gi_vec got;
	render(f, &got);
	for (size_t i = 0; want[i]; i++) {
		bool found = false;
		for (size_t k = 0; k < got.len && !found; k++)
			found = strcmp(GI_VEC_AT(&got, char *, k), want[i]) == 0;
		TH_ASSERT_MSG(found, "missing: %s", want[i]);
	}
	lines_free(&got);
	facts_file_free(f);
}

static void directives_are_lexically_scoped(void)
{
	static const char *const want[] = {
	    "call I.a/1 remote M.f/1",
	    "call I.b/1 local I.f/1",
	    "call I.c/1 remote X.Y.g/0",
	    "call I.c/1 remote Y.h/0",
	    "call I.d/1 remote Y.k/0",
	    "call I.d/1 capture M.f/1",
	    "ref I import M",
	    NULL,
	};
	expect_lines("defmodule I do\n"
	             "  def a(x) do\n"
	             "    import M, only: [f: 1]\n"
	             "    f(x)\n"
	             "  end\n"
	             "  def b(x), do: f(x)\n"
	             "  def c(x) do\n"
	             "    if x do\n"
	             "      alias X.Y\n"
	             "      Y.g()\n"
	             "    end\n"
	             "    Y.h()\n"
	             "  end\n"
	             "  import M, only: [f: 1]\n"
	             "  def d(_), do: {Y.k(), &f/1}\n"
	             "end\n",
	             want);
}

/* tree-sitter-elixir puts the parentheses of `&(...)` under the operand
 * field too: the calls inside such a capture are calls all the same. */
static void calls_inside_parenthesised_captures(void)
{
	static const char *const want[] = {
	    "call C.c/1 remote Path.dirname/1",
	    "call C.c/1 remote Enum.map/2",
	    "call C.d/1 remote File.dir?/1",
	    "call C.d/1 local C.compiled_file?/1",
	    "call C.d/1 remote Enum.filter/2",
	    "call C.e/1 remote Path.basename/1",
	    "ref C call Path",
	    "ref C call File",
	    NULL,
	};
	expect_lines("defmodule C do\n"
	             "  def c(x), do: Enum.map(x, &(Path.dirname(&1)))\n"
	             "  def d(files), do: Enum.filter(files, &(not (File.dir?(&1) or "
	             "compiled_file?(&1))))\n"
	             "  def e(x), do: Enum.map(x, &Path.basename(&1))\n"
	             "  defp compiled_file?(f), do: f\n"
	             "end\n",
	             want);
}

/* Dispatch that no direct call shows: modules as values, MFA tuples and
 * arguments, apply/3 with literals, Module.concat of aliases. */
static void dispatch_references(void)
{
	static const char *const want[] = {
	    "ref D value Worker",
	    "ref D value Registry",
	    "ref D value Other.Sup",
	    "ref D mfa Jobs",
	    "call D.children/0 mfa Jobs.run/1",
	    "ref D mfa Ticker",
	    "call D.later/0 mfa Ticker.tick/2",
	    "ref D mfa Spawned",
	    "call D.go/1 mfa Spawned.loop/1",
	    "call D.go/1 mfa :worker_mod.start/-1",
	    "ref D apply Applied",
	    "call D.go/1 apply Applied.f/2",
	    "call D.go/1 apply Kernelled.g/0",
	    "ref D value A.B",
	    "ref D struct S",
	    NULL,
	};
	static const char *const not_wanted[] = {
	    "ref D value S",
	    "ref D value Jobs",
	    "ref D value D",
	    NULL,
	};
	const char *src = "defmodule D do\n"
	                  "  alias Other.Sup\n"
	                  "  def children do\n"
	                  "    [Worker, {Registry, keys: :unique}, Sup,\n"
	                  "     %{id: :j, start: {Jobs, :run, [1]}}, __MODULE__]\n"
	                  "  end\n"
	                  "  def later, do: :timer.apply_after(10, Ticker, :tick, [1, 2])\n"
	                  "  def go(args) do\n"
	                  "    spawn(Spawned, :loop, [args])\n"
	                  "    :erlang.spawn(:worker_mod, :start, args)\n"
	                  "    apply(Applied, :f, [1, 2])\n"
	                  "    Kernel.apply(Kernelled, :g, [])\n"
	                  "    Module.concat(A, B)\n"
	                  "    %S{a: 1}\n"
	                  "  end\n"
	                  "end\n";
	expect_lines(src, want);
	struct facts_file *f = parse_text(src);
	struct gi_vec got;
	render(f, &got);
	for (size_t i = 0; not_wanted[i]; i++)
		TH_ASSERT_MSG(!lines_has(&got, not_wanted[i]), "unexpected: %s", not_wanted[i]);
	lines_free(&got);
	facts_file_free(f);
}

/* Code outside functions runs when the module compiles: its calls belong to
 * the module body (DSL macros, attribute values, @before_compile); what a
 * quote in a function injects is recorded for the graph; a quote's own
 * module-level code makes no body calls. */
static void module_body_and_injections(void)
{
	static const char *const want[] = {
	    "function R.(module body)/0 def private clauses=0 lines=16-25 loc=0 cc=1 cog=0 "
	    "nest=0 generated=module body",
	    "call R.(module body)/0 local R.pipe_through/1",
	    "call R.(module body)/0 local R.scope/2",
	    "call R.(module body)/0 local R.get/3",
	    "call R.(module body)/0 remote Hooks.__before_compile__/1",
	    "call R.(module body)/0 remote Hooks.__after_compile__/2",
	    "call R.(module body)/0 use Base.controller/0",
	    "call Dsl.__using__/1 inject Dsl.import/0",
	    "call Dsl.__using__/1 inject Dsl.before_compile/0",
	    "call Dsl.__using__/1 inject Other.use/0",
	    "call Dsl.__using__/1 inject Req.require/0",
	    "call Dsl.__using__/1 inject_def ?.call/1",
	    "call Dsl.__using__/1 inject_def ?.call/2",
	    "call Dsl.__using__/1 inject_macro ?.dsl?/0",
	    NULL,
	};
	static const char *const not_wanted[] = {
	    "function Dsl.(module body)/0",
	    "call Dsl.__using__/1 inject_def ?.hidden/0",
	    "function Dsl.call/1",
	    "call Dsl.__using__/1 inject Dsl.Nothing",
	    "call R.(module body)/0 local R.if/2",
	    NULL,
	};
	const char *src = "defmodule Dsl do\n"
	                  "  defmacro __using__(_) do\n"
	                  "    quote do\n"
	                  "      import unquote(__MODULE__)\n"
	                  "      use Other\n"
	                  "      require Req\n"
	                  "      import __MODULE__.Nothing\n"
	                  "      @before_compile unquote(__MODULE__)\n"
	                  "      @before_compile __MODULE__\n"
	                  "      def call(a, b \\\\ 1), do: {a, b}\n"
	                  "      defmacro dsl?, do: true\n"
	                  "      defp hidden, do: :no\n"
	                  "    end\n"
	                  "  end\n"
	                  "end\n"
	                  "defmodule R do\n"
	                  "  use Base, :controller\n"
	                  "  @before_compile Hooks\n"
	                  "  @after_compile Hooks\n"
	                  "  pipe_through [:browser]\n"
	                  "  if true, do: :ok\n"
	                  "  scope \"/\" do\n"
	                  "    get \"/\", Page, :index\n"
	                  "  end\n"
	                  "end\n";
	struct facts_file *f = parse_text(src);
	struct gi_vec got;
	render(f, &got);
	for (size_t i = 0; want[i]; i++)
		TH_ASSERT_MSG(lines_has(&got, want[i]), "missing: %s", want[i]);
	for (size_t i = 0; not_wanted[i]; i++)
		for (size_t k = 0; k < got.len; k++)
			TH_ASSERT_MSG(strncmp(GI_VEC_AT(&got, const char *, k), not_wanted[i],
			                      strlen(not_wanted[i])) != 0,
			              "unexpected: %s", GI_VEC_AT(&got, const char *, k));
	lines_free(&got);
	facts_file_free(f);
}

/* Functions that macros generate, derived from the source: Record
 * accessors, @derive implementations, comprehensions over literal lists
 * (and attributes holding one), a file's own macros whose quote defines
 * `def unquote(param)`, the nullary operator `(..)`, `Kernel.def`, quoted
 * names, and what the compiler adds to protocols and implementations. */
static void macro_generated_functions(void)
{
	static const char *const want[] = {
	    "function G.user/0 defmacro public",
	    "function G.user/1 defmacro public",
	    "function G.user/2 defmacro public",
	    "function G.secret/1 defmacrop private",
	    "module Inspect.G impl",
	    "function Inspect.G.inspect/2 def public",
	    "function Inspect.G.__impl__/1 def public",
	    "module Shop.Proto.G impl",
	    "function Shop.Proto.G.__impl__/1 def public",
	    "function G.red/0 def public",
	    "function G.green/0 def public",
	    "function G.info/1 defmacro public",
	    "function G.info/2 defmacro public",
	    "function G.debug/2 defmacro public",
	    "function G.../0 defmacro public",
	    "function G.~~~/1 def public",
	    "function G.direct/1 def public",
	    "function G.bold/0 def public",
	    "function G.font_1/0 def public",
	    "function G.font_2/0 def public",
	    "function Seq.defseq/2 defmacro public",
	    "function P.__protocol__/1 def public",
	    "function P.impl_for/1 def public",
	    "function P.impl_for!/1 def public",
	    "function P.real/1 def public",
	    NULL,
	};
	static const char *const not_wanted[] = {
	    "function G.blue/0",
	    "function G.1/0",
	    "function NoImport.bold/0",
	    "module Inspect.NoStruct",
	    "function G.dyn",
	    "function G.fmt/1",
	    NULL,
	};
	const char *src = "defmodule Seq do\n"
	                  "  defmacro defseq(name, code) do\n"
	                  "    quote bind_quoted: [name: name, code: code] do\n"
	                  "      def unquote(name)(), do: code\n"
	                  "      defp fmt(unquote(name)), do: code\n"
	                  "    end\n"
	                  "  end\n"
	                  "end\n"
	                  "defmodule G do\n"
	                  "  import Seq\n"
	                  "  require Record\n"
	                  "  Record.defrecord(:user, name: nil)\n"
	                  "  Record.defrecordp :secret, [:a]\n"
	                  "  @derive [Inspect, {Shop.Proto, only: [:a]}]\n"
	                  "  defstruct [:a]\n"
	                  "  for c <- [:red, :green] do\n"
	                  "    def unquote(c)(), do: unquote(c)\n"
	                  "  end\n"
	                  "  colors = [:blue]\n"
	                  "  for c <- colors, do: def(unquote(c)(), do: 1)\n"
	                  "  for n <- [1, 2], do: def(unquote(n)(), do: 1)\n"
	                  "  @levels [:info, :debug]\n"
	                  "  for level <- @levels do\n"
	                  "    defmacro unquote(level)(msg, meta \\\\ []), do: {msg, meta}\n"
	                  "  end\n"
	                  "  defmacro (..), do: 1\n"
	                  "  def unquote(:\"~~~\")(x), do: x\n"
	                  "  Kernel.def direct(x), do: x\n"
	                  "  defseq(:bold, 1)\n"
	                  "  for n <- [1, 2] do\n"
	                  "    defseq(:\"font_#{n}\", n)\n"
	                  "  end\n"
	                  "  def unquote(dyn)(), do: 1\n"
	                  "end\n"
	                  "defmodule NoImport do\n"
	                  "  defseq(:bold, 1)\n"
	                  "end\n"
	                  "defmodule NoStruct do\n"
	                  "  @derive Inspect\n"
	                  "end\n"
	                  "defprotocol P do\n"
	                  "  def f(x)\n"
	                  "  Kernel.def real(x), do: x\n"
	                  "end\n";
	struct facts_file *f = parse_text(src);
	struct gi_vec got;
	render(f, &got);
	for (size_t i = 0; want[i]; i++) {
		bool seen = false;
		for (size_t k = 0; k < got.len && !seen; k++)
			seen = strncmp(GI_VEC_AT(&got, const char *, k), want[i],
			               strlen(want[i])) == 0;
		TH_ASSERT_MSG(seen, "missing: %s", want[i]);
	}
	for (size_t i = 0; not_wanted[i]; i++)
		for (size_t k = 0; k < got.len; k++)
			TH_ASSERT_MSG(strncmp(GI_VEC_AT(&got, const char *, k), not_wanted[i],
			                      strlen(not_wanted[i])) != 0,
			              "unexpected: %s", GI_VEC_AT(&got, const char *, k));
	lines_free(&got);
	facts_file_free(f);
}

/* Calls the compiler makes that the text does not spell: interpolation is
 * String.Chars.to_string/1, x[k] Access.get/2, raise M M.exception/1 (a
 * string: RuntimeError), Kernel functions such as inspect/1 are calls to
 * Kernel; not for sigils without interpolation, a raised variable, or a
 * module that defines the name itself. */
static void compiler_made_calls(void)
{
	static const char *const want[] = {
	    "call K.f/1 remote String.Chars.to_string/1",
	    "call K.f/1 remote Access.get/2",
	    "call K.f/1 remote ArgumentError.exception/1",
	    "call K.f/1 remote RuntimeError.exception/1",
	    "call K.f/1 remote Kernel.inspect/1",
	    "ref K call Kernel",
	    "call Own.g/1 local Own.inspect/1",
	    NULL,
	};
	static const char *const not_wanted[] = {
	    "call K.h/1 remote String.Chars",
	    "call K.h/1 remote RuntimeError",
	    "call Own.g/1 remote Kernel",
	    NULL,
	};
	const char *src = "defmodule K do\n"
	                  "  def f(x) do\n"
	                  "    _ = \"a#{x}\" <> x[:k] <> inspect(x)\n"
	                  "    if x, do: raise(ArgumentError, \"bad\"), else: raise(\"plain\")\n"
	                  "  end\n"
	                  "  def h(e), do: {~S(#{not code}), raise(e)}\n"
	                  "end\n"
	                  "defmodule Own do\n"
	                  "  def inspect(x), do: x\n"
	                  "  def g(x), do: inspect(x)\n"
	                  "end\n";
	struct facts_file *f = parse_text(src);
	struct gi_vec got;
	render(f, &got);
	for (size_t i = 0; want[i]; i++)
		TH_ASSERT_MSG(lines_has(&got, want[i]), "missing: %s", want[i]);
	for (size_t i = 0; not_wanted[i]; i++)
		for (size_t k = 0; k < got.len; k++)
			TH_ASSERT_MSG(strncmp(GI_VEC_AT(&got, const char *, k), not_wanted[i],
			                      strlen(not_wanted[i])) != 0,
			              "unexpected: %s", GI_VEC_AT(&got, const char *, k));
	lines_free(&got);
	facts_file_free(f);
}

static void refuses_binary_and_huge_files(void)
{
	struct facts_file *f = (struct facts_file *)1;
	TH_ASSERT_INT_EQ(ex_parse("bin.ex", "defmodule\0A", 11, &f), GI_EINVAL);
	TH_ASSERT(f == NULL);
	size_t big = EX_MAX_FILE_SIZE + 1;
	char *text = gi_malloc(big);
	memset(text, ' ', big);
	TH_ASSERT_INT_EQ(ex_parse("big.ex", text, big, &f), GI_ETOOBIG);
	TH_ASSERT(f == NULL);
	gi_free(text);
}

static void empty_and_blank_files(void)
{
	struct facts_file *f = NULL;
	TH_ASSERT_OK(ex_parse("empty.ex", "", 0, &f));
	TH_ASSERT_INT_EQ(f->modules.len, 0);
	TH_ASSERT_INT_EQ(f->errors.len, 0);
	facts_file_free(f);
	f = parse_text("\n\n# only a comment\n");
	TH_ASSERT_INT_EQ(f->modules.len, 0);
	facts_file_free(f);
}

/* Every prefix of a real file parses without crashing, and a truncated module
 * still yields its name and one error. */
static void truncated_prefixes(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/fixtures/elixir/shop/lib/shop/pricing.ex",
	         th_srcdir());
	char *src = NULL;
	size_t len = 0;
	TH_ASSERT_OK(gi_fs_read_file(path, 1 << 20, &src, &len));
	for (size_t n = 0; n <= len; n += 7) {
		struct facts_file *f = NULL;
		TH_ASSERT_OK(ex_parse("prefix.ex", src, n, &f));
		if (n > 40 && n + 4 < len) {
			TH_ASSERT_MSG(f->modules.len >= 1, "prefix of %zu bytes: no module", n);
			TH_ASSERT_STR_EQ(((struct facts_module *)gi_vec_get(&f->modules, 0))->name,
			                 "Shop.Pricing");
			TH_ASSERT_MSG(f->errors.len == 1, "prefix of %zu bytes: %zu errors", n,
			              f->errors.len);
		}
		facts_file_free(f);
	}
	gi_free(src);
}

static void garbage_does_not_crash(void)
{
	static const char *const inputs[] = {
	    "defmodule",
	    "defmodule do end",
	    "def",
	    "def f(",
	    "defmodule A do def end end",
	    "defmodule A do def (x), do: 1 end",
	    "defmodule A do defp do: 1 end",
	    "defmodule A do alias end",
	    "defmodule A do alias .{} end",
	    "defmodule A do alias A.{B, :c, 1} end",
	    "defmodule A do @ end",
	    "defmodule A do @doc end",
	    "defmodule A do @spec end",
	    "defmodule A do @callback :: end",
	    "defimpl P, for: [] do end",
	    "defimpl P, for: 1 do end",
	    "defimpl P do end",
	    "&/1",
	    "&Mod.f/x",
	    "& &1",
	    "x |> ",
	    "|> f",
	    "%{}",
	    "%__MODULE__{}",
	    "defmodule A do defstruct 1 end",
	    "defmodule A do defstruct [1, \"a\": 2] end",
	    "defmodule A do def unquote(x)(y), do: 1 end",
	    "defmodule A do def a + b end",
	    "defmodule A do defdelegate f(x), to: end",
	    "defmodule A do test \"x\" end",
	    "defmodule A do describe \"d\" do describe \"e\" do test \"t\" do end end end end",
	    "\xff\xfe\x80 defmodule \xc3",
	    "\"#{",
	    "~s(#{",
	    "'''",
	    "\"\"\"\n#{",
	};
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct facts_file *f = NULL;
		TH_ASSERT_OK(ex_parse("garbage.ex", inputs[i], strlen(inputs[i]), &f));
		facts_file_free(f);
	}
}

/* Nesting far past the walk's depth bound: no stack overflow, an error. */
static void deep_nesting(void)
{
	static const char *const open[] = {"[", "(", "{", "%{a: ", "fn -> ", "if x do "};
	static const char *const close[] = {"]", ")", "}", "}", " end", " end"};
	for (size_t k = 0; k < sizeof(open) / sizeof(open[0]); k++) {
		struct gi_buf b;
		gi_buf_init(&b, 0);
		gi_buf_puts(&b, "defmodule Deep do\n def f(x) do\n");
		for (int i = 0; i < 20000; i++)
			gi_buf_puts(&b, open[k]);
		gi_buf_puts(&b, "Mod.call(x)");
		for (int i = 0; i < 20000; i++)
			gi_buf_puts(&b, close[k]);
		gi_buf_puts(&b, "\n end\nend\n");
		struct facts_file *f = NULL;
		TH_ASSERT_OK(ex_parse("deep.ex", b.data, b.len, &f));
		TH_ASSERT_INT_EQ(f->modules.len, 1);
		TH_ASSERT_INT_GE(f->errors.len, 1);
		facts_file_free(f);
		gi_buf_destroy(&b);
	}
	/* A long pipeline is deep on its left side. */
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_buf_puts(&b, "defmodule Pipe do\n def f(x) do\n x");
	for (int i = 0; i < 50000; i++)
		gi_buf_puts(&b, " |> M.g()");
	gi_buf_puts(&b, "\n end\nend\n");
	struct facts_file *f = NULL;
	TH_ASSERT_OK(ex_parse("pipe.ex", b.data, b.len, &f));
	TH_ASSERT_INT_EQ(f->modules.len, 1);
	facts_file_free(f);
	gi_buf_destroy(&b);
}

static void huge_line(void)
{
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_buf_puts(&b, "defmodule Wide do\n def f(x), do: [");
	for (int i = 0; i < 50000; i++)
		gi_buf_puts(&b, "M.g(x), ");
	gi_buf_puts(&b, "x]\nend\n");
	struct facts_file *f = NULL;
	TH_ASSERT_OK(ex_parse("wide.ex", b.data, b.len, &f));
	TH_ASSERT_INT_EQ(f->errors.len, 0);
	struct facts_module *m = gi_vec_get(&f->modules, 0);
	struct facts_function *fn = gi_vec_get(&m->functions, 0);
	TH_ASSERT_INT_EQ(fn->calls.len, 50000);
	facts_file_free(f);
	gi_buf_destroy(&b);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--dump") == 0)
		return dump(argv[2]);
	static const struct th_test tests[] = {
	    TH_TEST(fixtures_match_expected_facts),
	    TH_TEST(fixtures_all_have_expected_facts),
	    TH_TEST(parses_a_module),
	    TH_TEST(directives_are_lexically_scoped),
	    TH_TEST(calls_inside_parenthesised_captures),
	    TH_TEST(dispatch_references),
	    TH_TEST(module_body_and_injections),
	    TH_TEST(macro_generated_functions),
	    TH_TEST(compiler_made_calls),
	    TH_TEST(refuses_binary_and_huge_files),
	    TH_TEST(empty_and_blank_files),
	    TH_TEST(truncated_prefixes),
	    TH_TEST(garbage_does_not_crash),
	    TH_TEST(deep_nesting),
	    TH_TEST(huge_line),
	    TH_END,
	};
	return th_main(argc, argv, "unit_elixir", tests);
}
