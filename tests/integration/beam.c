/*
 * Integration tests of the BEAM reader against OTP itself: the opcode table
 * against the live beam_opcodes module; for OTP's stdlib and kernel and for
 * Elixir modules compiled here with elixirc, the exported functions against
 * M:module_info(exports), the callbacks of behaviours against behaviour_info/1,
 * specs against the debug information's -spec attributes, docs against the
 * EEP 48 Docs chunk as OTP decodes it, the calls of each
 * function against beam_disasm and the module call edges against xref
 * (tests/integration/beam_oracle.erl computes the expected facts with the conventions of
 * docs/BEAM.md).
 * needs: erlang-base elixir erlang-tools
 */
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/str.h"
#include "base/vec.h"
#include "harness.h"
#include "source/beam.h"
#include "source/beam_ops.h"
#include "support.h"

static int str_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void lines_add(struct gi_vec *lines, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void lines_add(struct gi_vec *lines, const char *fmt, ...)
{
	struct gi_buf b;
	va_list ap;
	gi_buf_init(&b, 0);
	va_start(ap, fmt);
	gi_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	char *s = gi_buf_take(&b);
	gi_vec_push(lines, &s);
}

static void lines_sort_unique(struct gi_vec *lines)
{
	gi_vec_sort(lines, str_compare);
	size_t w = 0;
	for (size_t i = 0; i < lines->len; i++) {
		char *s = GI_VEC_AT(lines, char *, i);
		if (w > 0 && strcmp(GI_VEC_AT(lines, char *, w - 1), s) == 0) {
			gi_free(s);
			continue;
		}
		GI_VEC_AT(lines, char *, w++) = s;
	}
	lines->len = w;
}

static void lines_free(struct gi_vec *lines)
{
	for (size_t i = 0; i < lines->len; i++)
		gi_free(GI_VEC_AT(lines, char *, i));
	gi_vec_destroy(lines);
}

/* The facts of one file in the oracle's line format. */
static void facts_lines(const struct facts_file *f, struct gi_vec *lines)
{
	const struct facts_module *m = gi_vec_get(&f->modules, 0);
	for (size_t i = 0; i < m->functions.len; i++) {
		const struct facts_function *fn = gi_vec_get(&m->functions, i);
		if (fn->is_public)
			lines_add(lines, "X %s %s/%d", m->name, fn->name, fn->arity);
		if (fn->has_spec)
			lines_add(lines, "S %s %s/%d", m->name, fn->name, fn->arity);
		if (fn->doc_false)
			lines_add(lines, "H %s %s/%d", m->name, fn->name, fn->arity);
		else if (fn->has_doc)
			lines_add(lines, "D %s %s/%d", m->name, fn->name, fn->arity);
		for (size_t j = 0; j < fn->calls.len; j++) {
			const struct facts_call *c = gi_vec_get(&fn->calls, j);
			if (c->kind == FACTS_CALL_DYNAMIC)
				lines_add(lines, "C %s %s/%d dynamic ?/%d", m->name, fn->name,
				          fn->arity, c->arity);
			else
				lines_add(lines, "C %s %s/%d %s %s.%s/%d", m->name, fn->name,
				          fn->arity, facts_call_kind_name(c->kind), c->module,
				          c->function, c->arity);
		}
	}
	if (m->moduledoc_false)
		lines_add(lines, "MH %s", m->name);
	else if (m->has_moduledoc)
		lines_add(lines, "MD %s", m->name);
	for (size_t i = 0; m->kind != FACTS_PROTOCOL && i < m->callbacks.len; i++)
		lines_add(lines, "B %s %s", m->name, GI_VEC_AT(&m->callbacks, const char *, i));
	if (m->name[0] != ':')
		return;
	for (size_t i = 0; i < m->refs.len; i++) {
		const struct facts_ref *r = gi_vec_get(&m->refs, i);
		if (r->kind == FACTS_REF_CALL && strcmp(r->target, ":erlang") != 0)
			lines_add(lines, "M %s %s", m->name, r->target);
	}
}

static void file_lines(const char *path, struct gi_vec *lines)
{
	char *data = NULL, *save = NULL;
	size_t len;
	TH_ASSERT_OK(gi_fs_read_file(path, 1u << 30, &data, &len));
	for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		lines_add(lines, "%s", line);
	gi_free(data);
}

/* Runs the oracle on `files` (with `xref_dir` or "none") and compares its facts
 * with ours; fails listing the first differences. */
static void compare_with_otp(const char *const *files, size_t nfiles, const char *xref_dir,
                             const char *extra_path)
{
	char oracle_src[4096], out[4096];
	snprintf(oracle_src, sizeof(oracle_src), "%s/tests/integration/beam_oracle.erl",
	         th_srcdir());
	snprintf(out, sizeof(out), "%s/oracle.txt", th_tmpdir());
	const char *erlc[] = {"erlc", "-o", th_tmpdir(), oracle_src, NULL};
	char *err = NULL;
	TH_ASSERT_MSG(ts_run(erlc, NULL, 120000, NULL, &err) == 0, "erlc: %s", err ? err : "");
	free(err);
	const char **argv = gi_calloc(nfiles + 24, sizeof(char *));
	size_t a = 0;
	argv[a++] = "erl";
	argv[a++] = "-noshell";
	argv[a++] = "-pa";
	argv[a++] = th_tmpdir();
	argv[a++] = "-pa"; /* elixir_erl, to turn Elixir debug info into Erlang forms */
	argv[a++] = "/usr/lib/elixir/lib/elixir/ebin";
	if (extra_path) {
		argv[a++] = "-pa";
		argv[a++] = extra_path;
	}
	argv[a++] = "-run";
	argv[a++] = "beam_oracle";
	argv[a++] = "main";
	argv[a++] = out;
	argv[a++] = xref_dir;
	for (size_t i = 0; i < nfiles; i++)
		argv[a++] = files[i];
	argv[a++] = "-s";
	argv[a++] = "init";
	argv[a++] = "stop";
	char *eout = NULL;
	err = NULL;
	int status = ts_run(argv, NULL, 600000, &eout, &err);
	TH_ASSERT_MSG(status == 0, "oracle failed: %s %s", eout ? eout : "", err ? err : "");
	free(eout);
	free(err);
	gi_free(argv);

	struct gi_vec ours, theirs;
	gi_vec_init(&ours, sizeof(char *));
	gi_vec_init(&theirs, sizeof(char *));
	for (size_t i = 0; i < nfiles; i++) {
		struct facts_file *f = NULL;
		char msg[1024];
		int rc = beam_read_file(files[i], &f, msg, sizeof(msg));
		TH_ASSERT_MSG(rc == 0, "%s", msg);
		TH_ASSERT_MSG(f->errors.len == 0, "%s: %s", files[i],
		              ((struct facts_error *)gi_vec_get(&f->errors, 0))->message);
		facts_lines(f, &ours);
		facts_file_free(f);
	}
	file_lines(out, &theirs);
	lines_sort_unique(&ours);
	lines_sort_unique(&theirs);
	struct gi_buf diff;
	gi_buf_init(&diff, 0);
	size_t i = 0, j = 0, shown = 0, differences = 0;
	while (i < ours.len || j < theirs.len) {
		int cmp = i == ours.len ? 1
		          : j == theirs.len
		              ? -1
		              : strcmp(GI_VEC_AT(&ours, char *, i), GI_VEC_AT(&theirs, char *, j));
		if (cmp == 0) {
			i++, j++;
			continue;
		}
		differences++;
		if (shown++ < 30)
			gi_buf_printf(&diff, "\n  %s %s", cmp < 0 ? "giulia only:" : "OTP only:   ",
			              cmp < 0 ? GI_VEC_AT(&ours, char *, i)
			                      : GI_VEC_AT(&theirs, char *, j));
		if (cmp < 0)
			i++;
		else
			j++;
	}
	printf("    %zu facts compared, %zu files\n", theirs.len, nfiles);
	TH_ASSERT_MSG(differences == 0, "%zu differences with OTP:%s", differences,
	              gi_buf_str(&diff));
	TH_ASSERT_INT_GE(theirs.len, nfiles);
	gi_buf_destroy(&diff);
	lines_free(&ours);
	lines_free(&theirs);
}

static void compare_otp_app(const char *app)
{
	char pattern[4200];
	glob_t g;
	snprintf(pattern, sizeof(pattern), "/usr/lib/erlang/lib/%s-*/ebin", app);
	TH_ASSERT_MSG(glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc >= 1, "no %s", pattern);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", g.gl_pathv[g.gl_pathc - 1]);
	globfree(&g);
	snprintf(pattern, sizeof(pattern), "%s/*.beam", dir);
	TH_ASSERT(glob(pattern, 0, NULL, &g) == 0);
	TH_ASSERT_INT_GE(g.gl_pathc, 30);
	compare_with_otp((const char *const *)g.gl_pathv, g.gl_pathc, dir, NULL);
	globfree(&g);
}

static void elixir_stdlib_matches_otp(void)
{
	glob_t g;
	TH_NEED(glob("/usr/lib/elixir/lib/elixir/ebin/*.beam", 0, NULL, &g) == 0, "elixir",
	        "no /usr/lib/elixir/lib/elixir/ebin/*.beam");
	TH_ASSERT_INT_GE(g.gl_pathc, 100);
	compare_with_otp((const char *const *)g.gl_pathv, g.gl_pathc,
	                 "/usr/lib/elixir/lib/elixir/ebin", NULL);
	globfree(&g);
}

static void stdlib_matches_otp(void)
{
	compare_otp_app("stdlib");
}

static void kernel_matches_otp(void)
{
	compare_otp_app("kernel");
}

static const char elixir_fixture[] =
    "defmodule Fx.Point do\n"
    "  @moduledoc \"A point.\"\n"
    "  defstruct x: 0, y: 0\n"
    "  @doc \"Builds a point.\"\n"
    "  @spec new(integer, integer) :: %Fx.Point{}\n"
    "  def new(x, y), do: %Fx.Point{x: x, y: y}\n"
    "end\n"
    "defprotocol Fx.Shape do\n"
    "  def area(s)\n"
    "end\n"
    "defimpl Fx.Shape, for: Fx.Point do\n"
    "  def area(%Fx.Point{x: x, y: y}), do: x * y\n"
    "end\n"
    "defmodule Fx.Store do\n"
    "  @moduledoc false\n"
    "  @callback put(term) :: :ok\n"
    "  defmacro __using__(_), do: quote(do: @behaviour Fx.Store)\n"
    "end\n"
    "defmodule Fx.Server do\n"
    "  use GenServer\n"
    "  @behaviour Fx.Store\n"
    "  def start_link(a), do: GenServer.start_link(__MODULE__, a)\n"
    "  def init(a), do: {:ok, a}\n"
    "  @doc false\n"
    "  def put(_), do: :ok\n"
    "  def handle_call(:names, _f, s), do: {:reply, Enum.map(s, &String.upcase/1), s}\n"
    "  def handle_call({:area, p}, _f, s), do: {:reply, Fx.Shape.area(p), s}\n"
    "  def sum(list), do: Enum.reduce(list, 0, fn x, acc -> helper(x) + acc end)\n"
    "  def origin?(%Fx.Point{x: 0, y: 0}), do: true\n"
    "  def origin?(_), do: false\n"
    "  def dyn(m, f), do: apply(m, f, [1])\n"
    "  def grade(n) do\n"
    "    cond do\n"
    "      n > 90 -> :a\n"
    "      n > 50 -> :b\n"
    "      true -> :c\n"
    "    end\n"
    "  end\n"
    "  defp helper(x) when is_integer(x), do: :erlang.abs(x)\n"
    "  defp helper(_), do: 0\n"
    "end\n";

static const struct facts_module *module_of(const struct facts_file *f)
{
	return gi_vec_get(&f->modules, 0);
}

static const struct facts_function *function_of(const struct facts_module *m, const char *name,
                                                int arity)
{
	for (size_t i = 0; i < m->functions.len; i++) {
		const struct facts_function *fn = gi_vec_get(&m->functions, i);
		if (strcmp(fn->name, name) == 0 && fn->arity == arity)
			return fn;
	}
	th_fail(__FILE__, __LINE__, "%s has no %s/%d", m->name, name, arity);
}

static bool ref_present(const struct facts_module *m, enum facts_ref_kind kind, const char *target)
{
	for (size_t i = 0; i < m->refs.len; i++) {
		const struct facts_ref *r = gi_vec_get(&m->refs, i);
		if (r->kind == kind && strcmp(r->target, target) == 0)
			return true;
	}
	return false;
}

static bool call_present(const struct facts_function *fn, enum facts_call_kind kind,
                         const char *module, const char *function, int arity)
{
	for (size_t i = 0; i < fn->calls.len; i++) {
		const struct facts_call *c = gi_vec_get(&fn->calls, i);
		if (c->kind == kind && (!module || (c->module && strcmp(c->module, module) == 0)) &&
		    (!function || (c->function && strcmp(c->function, function) == 0)) &&
		    c->arity == arity)
			return true;
	}
	return false;
}

static struct facts_file *read_compiled(const char *dir, const char *module)
{
	char path[4096], err[1024];
	struct facts_file *f = NULL;
	snprintf(path, sizeof(path), "%s/Elixir.%s.beam", dir, module);
	TH_ASSERT_MSG(beam_read_file(path, &f, err, sizeof(err)) == 0, "%s", err);
	TH_ASSERT_INT_EQ(f->errors.len, 0);
	TH_ASSERT_INT_EQ(f->origin, FACTS_FROM_BEAM);
	return f;
}

static void elixir_modules_match_otp(void)
{
	char src[4096], outdir[4096];
	snprintf(src, sizeof(src), "%s/fx.ex", th_tmpdir());
	snprintf(outdir, sizeof(outdir), "%s/ebin", th_tmpdir());
	TH_ASSERT_OK(gi_fs_write_file(src, elixir_fixture, strlen(elixir_fixture)));
	TH_ASSERT_OK(gi_fs_mkdir_p(outdir));
	const char *elixirc[] = {"elixirc", "--ignore-module-conflict", "-o", outdir, src, NULL};
	char *err = NULL;
	TH_ASSERT_MSG(ts_run(elixirc, NULL, 300000, NULL, &err) == 0, "elixirc: %s",
	              err ? err : "");
	free(err);

	char pattern[4200];
	glob_t g;
	snprintf(pattern, sizeof(pattern), "%s/*.beam", outdir);
	TH_ASSERT(glob(pattern, 0, NULL, &g) == 0);
	TH_ASSERT_INT_EQ(g.gl_pathc, 5);
	compare_with_otp((const char *const *)g.gl_pathv, g.gl_pathc, "none", outdir);
	globfree(&g);

	struct facts_file *f = read_compiled(outdir, "Fx.Point");
	const struct facts_module *m = module_of(f);
	TH_ASSERT_STR_EQ(m->name, "Fx.Point");
	TH_ASSERT(m->has_struct);
	TH_ASSERT_INT_EQ(m->struct_fields.len, 2);
	TH_ASSERT(function_of(m, "new", 2)->is_public);
	TH_ASSERT(function_of(m, "new", 2)->has_spec);
	TH_ASSERT(function_of(m, "new", 2)->has_doc);
	TH_ASSERT(m->has_moduledoc && !m->moduledoc_false);
	facts_file_free(f);

	f = read_compiled(outdir, "Fx.Shape");
	m = module_of(f);
	TH_ASSERT_INT_EQ(m->kind, FACTS_PROTOCOL);
	TH_ASSERT_INT_EQ(function_of(m, "area", 1)->kind, FACTS_DEFCALLBACK);
	TH_ASSERT_INT_EQ(m->callbacks.len, 1);
	TH_ASSERT_STR_EQ(GI_VEC_AT(&m->callbacks, const char *, 0), "area/1");
	facts_file_free(f);

	f = read_compiled(outdir, "Fx.Shape.Fx.Point");
	m = module_of(f);
	TH_ASSERT_INT_EQ(m->kind, FACTS_IMPL);
	TH_ASSERT_STR_EQ(m->protocol, "Fx.Shape");
	TH_ASSERT_STR_EQ(m->impl_for, "Fx.Point");
	TH_ASSERT(ref_present(m, FACTS_REF_STRUCT, "Fx.Point"));
	facts_file_free(f);

	f = read_compiled(outdir, "Fx.Store");
	m = module_of(f);
	TH_ASSERT_INT_EQ(function_of(m, "__using__", 1)->kind, FACTS_DEFMACRO);
	TH_ASSERT(m->moduledoc_false);
	TH_ASSERT_INT_EQ(m->callbacks.len, 1);
	TH_ASSERT_STR_EQ(GI_VEC_AT(&m->callbacks, const char *, 0), "put/1");
	facts_file_free(f);

	f = read_compiled(outdir, "Fx.Server");
	m = module_of(f);
	TH_ASSERT(ref_present(m, FACTS_REF_BEHAVIOUR, "GenServer"));
	TH_ASSERT(ref_present(m, FACTS_REF_BEHAVIOUR, "Fx.Store"));
	TH_ASSERT(ref_present(m, FACTS_REF_CAPTURE, "String"));
	TH_ASSERT(ref_present(m, FACTS_REF_STRUCT, "Fx.Point"));
	TH_ASSERT(ref_present(m, FACTS_REF_CALL, "Fx.Shape"));
	TH_ASSERT(ref_present(m, FACTS_REF_CALL, "Enum"));
	TH_ASSERT(!ref_present(m, FACTS_REF_CALL, "Fx.Server"));
	TH_ASSERT(function_of(m, "put", 1)->doc_false);
	const struct facts_function *hc = function_of(m, "handle_call", 3);
	TH_ASSERT(call_present(hc, FACTS_CALL_CAPTURE, "String", "upcase", 1));
	TH_ASSERT(call_present(hc, FACTS_CALL_REMOTE, "Enum", "map", 2));
	TH_ASSERT(call_present(hc, FACTS_CALL_REMOTE, "Fx.Shape", "area", 1));
	/* the anonymous fn's body belongs to sum/1 */
	const struct facts_function *sum = function_of(m, "sum", 1);
	TH_ASSERT(call_present(sum, FACTS_CALL_LOCAL, "Fx.Server", "helper", 1));
	TH_ASSERT(call_present(sum, FACTS_CALL_REMOTE, "Enum", "reduce", 3));
	TH_ASSERT(call_present(function_of(m, "dyn", 2), FACTS_CALL_DYNAMIC, NULL, NULL, 1));
	const struct facts_function *helper = function_of(m, "helper", 1);
	TH_ASSERT(!helper->is_public);
	TH_ASSERT_INT_EQ(helper->kind, FACTS_DEFP);
	TH_ASSERT(helper->line_start > 0);
	TH_ASSERT_INT_GE(function_of(m, "grade", 1)->cyclomatic, 3);
	TH_ASSERT_INT_GE(hc->cyclomatic, 2);
	TH_ASSERT_INT_EQ(function_of(m, "init", 1)->cyclomatic, 1);
	facts_file_free(f);
}

static void opcodes_match_live_otp(void)
{
	const char *erl[] = {
	    "erl", "-noshell", "-eval",
	    "[case catch beam_opcodes:opname(N) of {Name, A} when is_integer(A) -> "
	    "io:format(\"~b ~s ~b~n\", [N, Name, A]); _ -> ok end "
	    "|| N <- lists:seq(1, 255)], halt().",
	    NULL};
	char *out = NULL, *save = NULL;
	TH_ASSERT_INT_EQ(ts_run(erl, NULL, 60000, &out, NULL), 0);
	int checked = 0;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned n;
		int arity;
		char name[64];
		if (sscanf(line, "%u %63s %d", &n, name, &arity) != 3)
			continue;
		const struct beam_op *op = beam_op_lookup(n);
		TH_ASSERT_MSG(op, "opcode %u (%s) missing", n, name);
		TH_ASSERT_MSG(strcmp(op->name, name) == 0 && op->arity == arity,
		              "opcode %u: ours %s/%d, OTP %s/%d", n, op->name, op->arity, name,
		              arity);
		checked++;
	}
	free(out);
	TH_ASSERT_INT_GE(checked, 180);
}

struct scan {
	int files, modules, functions, calls;
};

static int scan_file(const char *path, void *ctx)
{
	struct scan *s = ctx;
	if (!gi_str_ends_with(path, ".beam"))
		return 0;
	struct facts_file *f = NULL;
	char err[1024];
	int rc = beam_read_file(path, &f, err, sizeof(err));
	TH_ASSERT_MSG(rc == 0, "%s", err);
	TH_ASSERT_MSG(f->errors.len == 0, "%s: %s", path,
	              ((struct facts_error *)gi_vec_get(&f->errors, 0))->message);
	const struct facts_module *m = module_of(f);
	s->files++;
	s->modules += (int)f->modules.len;
	s->functions += (int)m->functions.len;
	for (size_t i = 0; i < m->functions.len; i++)
		s->calls += (int)((struct facts_function *)gi_vec_get(&m->functions, i))->calls.len;
	facts_file_free(f);
	return 0;
}

static void every_installed_beam_reads_cleanly(void)
{
	struct scan s = {0};
	TH_ASSERT_OK(gi_fs_walk("/usr/lib/erlang", NULL, scan_file, &s));
	if (access("/usr/lib/elixir", F_OK) == 0)
		TH_ASSERT_OK(gi_fs_walk("/usr/lib/elixir", NULL, scan_file, &s));
	printf("    %d files, %d functions, %d calls\n", s.files, s.functions, s.calls);
	TH_ASSERT_INT_GE(s.files, 500);
	TH_ASSERT_INT_EQ(s.modules, s.files);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(opcodes_match_live_otp),
	    TH_TEST(every_installed_beam_reads_cleanly),
	    TH_TEST(stdlib_matches_otp),
	    TH_TEST(kernel_matches_otp),
	    TH_TEST(elixir_stdlib_matches_otp),
	    TH_TEST(elixir_modules_match_otp),
	    TH_END,
	};
	return th_main(argc, argv, "integration_beam", tests);
}
