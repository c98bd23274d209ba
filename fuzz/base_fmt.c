/*
 * base_fmt.c - libFuzzer target for the name formatting and table fitting
 * that every text output applies to names read from nodes and snapshots
 * (src/base/fmt.c, src/base/table.c): any bytes as a function name, a
 * "Mod.fun/arity" string or a table cell give NUL-terminated output within
 * the buffer, a middle elision is never wider than asked, and tables of
 * any cells and widths render without fault.
 * needs:
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fmt.h"
#include "base/runtime.h"
#include "base/table.h"

int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	char *s = gi_strndup((const char *)data, size);
	char out[64];
	gi_fmt_mfa(s, out, sizeof(out));
	if (strlen(out) >= sizeof(out))
		abort();
	gi_fmt_function(s, s, (long long)size, out, sizeof(out));
	gi_fmt_registered_name(s, out, sizeof(out));
	(void)gi_fmt_is_anonymous(s);
	char cut[256];
	size_t width = size % 40;
	gi_fmt_elide_middle(s, width, cut, sizeof(cut));
	if (gi_fmt_width(cut) > width && gi_fmt_width(s) > width)
		abort();
	static const struct gi_table_column cols[] = {
	    {.header = "NAME", .flags = GI_COL_ELIDE, .drop = 0, .min = 8},
	    {.header = "N", .flags = GI_COL_RIGHT, .drop = 1},
	    {.header = "MORE", .flags = GI_COL_ELIDE, .drop = 2, .min = 4},
	};
	struct gi_table *t = gi_table_new(cols, 3, (int)(size % 3));
	const char *row[] = {s, "12", s};
	gi_table_add(t, row);
	gi_table_note(t, s);
	struct gi_buf b;
	gi_buf_init(&b, 0);
	gi_table_render(t, (int)(size % 100), &b);
	gi_buf_destroy(&b);
	gi_table_free(t);
	gi_free(s);
	return 0;
}
