/*
 * eex.c - the Elixir code of EEx templates, for the graph (see eex.h).
 *
 * Invariant: the synthetic source is never longer than 64 bytes plus twice
 * the template, so that EX_MAX_FILE_SIZE bounds it as it bounds the text.
 */
#include "source/eex.h"

#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/arena.h"
#include "base/buf.h"
#include "base/str.h"
#include "base/vec.h"
#include "source/elixir.h"

#define EEX_MODULE_PLACEHOLDER "GiuliaEExTemplate"

bool eex_is_template(const char *path)
{
	return gi_str_ends_with(path, ".eex") || gi_str_ends_with(path, ".heex") ||
	       gi_str_ends_with(path, ".leex");
}

/* Appends to `out` the code of the tags of `text`: each tag's code on a
 * line of its own, and the newlines of the text between tags (so that most
 * code keeps its line). */
static void code_extract(const char *text, size_t len, struct gi_buf *out)
{
	size_t i = 0;
	while (i < len) {
		const char *open = memmem(text + i, len - i, "<%", 2);
		size_t stop = open ? (size_t)(open - text) : len;
		bool newline = false;
		for (size_t k = i; k < stop; k++)
			if (text[k] == '\n') {
				GI_BUF_LIT(out, "\n");
				newline = true;
			}
		if (!open)
			break;
		size_t start = stop + 2;
		bool skip = false;
		if (start < len && (text[start] == '%' || text[start] == '#'))
			skip = true; /* <%% is a literal <%, <%# a comment */
		while (start < len &&
		       (text[start] == '=' || text[start] == '/' || text[start] == '|'))
			start++;
		const char *close = memmem(text + start, len - start, "%>", 2);
		size_t end = close ? (size_t)(close - text) : len;
		if (!skip) {
			if (!newline)
				GI_BUF_LIT(out, "\n");
			gi_buf_append(out, text + start, end - start);
		} else {
			for (size_t k = start; k < end; k++)
				if (text[k] == '\n')
					GI_BUF_LIT(out, "\n");
		}
		i = close ? end + 2 : len;
	}
}

int eex_parse(const char *path, const char *text, size_t len, struct facts_file **out)
{
	*out = NULL;
	if (len > EX_MAX_FILE_SIZE)
		return GI_ETOOBIG;
	struct gi_buf src;
	gi_buf_init(&src, 0);
	gi_buf_printf(&src, "defmodule %s do def render(assigns) do ", EEX_MODULE_PLACEHOLDER);
	code_extract(text, len, &src);
	gi_buf_printf(&src, "\nend end\n");
	int rc = ex_parse_with(path, gi_buf_str(&src), src.len, EX_PARSE_NO_BODY_HASHES, out);
	gi_buf_destroy(&src);
	if (rc)
		return rc;
	struct facts_file *f = *out;
	f->errors.len = 0;       /* a tag alone is seldom a whole expression */
	f->bodies_hashed = true; /* nothing for `duplicates` to compare */
	for (size_t i = 0; i < f->modules.len; i++) {
		struct facts_module *m = gi_vec_get(&f->modules, i);
		if (strcmp(m->name, EEX_MODULE_PLACEHOLDER) != 0)
			continue;
		m->name = gi_arena_printf(&f->arena, EEX_MODULE_PREFIX "%s", path);
		m->moduledoc_false = m->has_moduledoc = true; /* not API to document */
		for (size_t k = 0; k < m->functions.len; k++) {
			struct facts_function *fn = gi_vec_get(&m->functions, k);
			fn->generated_by = "EEx template"; /* whoever renders it calls it */
		}
	}
	return 0;
}
