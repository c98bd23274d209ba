/*
 * table.h - text tables that fit a width: columns sized to their contents,
 * then, when the whole is wider than the terminal, the least important
 * columns dropped first and the elidable ones (names) cut in the middle
 * ("Phoenix.Socke…handle_call/3"), never at the front. Width 0 is no limit
 * (output to a pipe stays whole unless COLUMNS says otherwise).
 *
 * Not thread-safe: one table per caller.
 */
#ifndef GIULIA_BASE_TABLE_H
#define GIULIA_BASE_TABLE_H

#include <stddef.h>

#include "base/buf.h"

enum gi_table_flags {
	GI_COL_RIGHT = 1, /* right-aligned (numbers) */
	GI_COL_ELIDE = 2, /* may be cut in the middle, down to `min` columns */
};

struct gi_table_column {
	const char *header;
	int flags; /* enum gi_table_flags */
	int drop;  /* 0: always shown; else dropped when too wide, highest first */
	int min;   /* GI_COL_ELIDE: narrowest it is cut to (0: 12; never below the header) */
};

struct gi_table;

/* A table of `ncols` columns (borrowed: `cols` must outlive the table),
 * rows indented by `indent` spaces. Free with gi_table_free. */
struct gi_table *gi_table_new(const struct gi_table_column *cols, int ncols, int indent);
/* Adds a row of `ncols` cells (copied; NULL is an empty cell). */
void gi_table_add(struct gi_table *t, const char *const *cells);
/* Appends the header and rows, fitted to `width` columns (0: no limit), to
 * `out`. Returns 0 or GI_ENOMEM / GI_ETOOBIG from the buffer. */
int gi_table_render(const struct gi_table *t, int width, struct gi_buf *out);
/* Attaches `text` (copied) to the last row: printed under it, indented by
 * the table's indent + 4 and word-wrapped to the width. */
void gi_table_note(struct gi_table *t, const char *text);
/* Number of rows added. */
size_t gi_table_rows(const struct gi_table *t);
void gi_table_free(struct gi_table *t);

#endif
