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

/* ---- tests ------------------------------------------------------------------ */

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
	struct facts_module *m = gi_vec_get(&f->modules, 0);
	TH_ASSERT_STR_EQ(m->name, "A.B");
	TH_ASSERT_INT_EQ(m->functions.len, 1);
	struct facts_function *fn = gi_vec_get(&m->functions, 0);
	TH_ASSERT_STR_EQ(fn->name, "f");
	TH_ASSERT_INT_EQ(fn->arity, 1);
	TH_ASSERT_INT_EQ(fn->calls.len, 1);
	facts_file_free(f);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--dump") == 0)
		return dump(argv[2]);
	static const struct th_test tests[] = {
	    TH_TEST(parses_a_module),
	    TH_END,
	};
	return th_main(argc, argv, "unit_elixir", tests);
}
