/*
 * table.c - tables fitted to a width (see table.h). The fitting works on
 * display widths (UTF-8 code points), in three steps: natural widths; drop
 * columns by `drop`, highest first, while too wide; then cut elidable
 * columns, widest first, down to their `min`. What still does not fit is printed
 * whole rather than losing more.
 */
#include "base/table.h"

#include <stdbool.h>
#include <string.h>

#include "base/alloc.h"
#include "base/fmt.h"

#define TABLE_COLS_MAX 16
#define CELL_MAX       1024

struct gi_table {
	const struct gi_table_column *cols;
	int ncols, indent;
	char **cells; /* rows * ncols */
	char **notes; /* rows, NULL where none */
	size_t rows, cap;
};

struct gi_table *gi_table_new(const struct gi_table_column *cols, int ncols, int indent)
{
	struct gi_table *t = gi_calloc(1, sizeof(*t));
	t->cols = cols;
	t->ncols = ncols > TABLE_COLS_MAX ? TABLE_COLS_MAX : ncols;
	t->indent = indent;
	return t;
}

void gi_table_add(struct gi_table *t, const char *const *cells)
{
	if (t->rows == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->cells = gi_reallocarray(t->cells, t->cap * (size_t)t->ncols, sizeof(char *));
		t->notes = gi_reallocarray(t->notes, t->cap, sizeof(char *));
	}
	t->notes[t->rows] = NULL;
	for (int c = 0; c < t->ncols; c++)
		t->cells[t->rows * (size_t)t->ncols + (size_t)c] =
		    gi_strdup(cells[c] ? cells[c] : "");
	t->rows++;
}

void gi_table_note(struct gi_table *t, const char *text)
{
	if (t->rows == 0 || !text)
		return;
	gi_free(t->notes[t->rows - 1]);
	t->notes[t->rows - 1] = gi_strdup(text);
}

size_t gi_table_rows(const struct gi_table *t)
{
	return t->rows;
}

void gi_table_free(struct gi_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->rows * (size_t)t->ncols; i++)
		gi_free(t->cells[i]);
	for (size_t i = 0; i < t->rows; i++)
		gi_free(t->notes[i]);
	gi_free(t->notes);
	gi_free(t->cells);
	gi_free(t);
}

static int total_width(const struct gi_table *t, const int *w, const bool *shown)
{
	int total = t->indent, n = 0;
	for (int c = 0; c < t->ncols; c++)
		if (shown[c]) {
			total += w[c];
			n++;
		}
	return total + (n > 1 ? 2 * (n - 1) : 0);
}

static int min_of(const struct gi_table *t, int c)
{
	int min = t->cols[c].min ? t->cols[c].min : 12;
	int header = (int)gi_fmt_width(t->cols[c].header);
	return min > header ? min : header;
}

/* Column widths and which columns are shown, fitted to `width`. */
static void fit(const struct gi_table *t, int width, int *w, bool *shown)
{
	for (int c = 0; c < t->ncols; c++) {
		shown[c] = true;
		w[c] = (int)gi_fmt_width(t->cols[c].header);
		for (size_t r = 0; r < t->rows; r++) {
			int cw = (int)gi_fmt_width(t->cells[r * (size_t)t->ncols + (size_t)c]);
			if (cw > w[c])
				w[c] = cw;
		}
	}
	if (width <= 0)
		return;
	/* The least important columns go first, while the table is too wide... */
	while (total_width(t, w, shown) > width) {
		int victim = -1;
		for (int c = 0; c < t->ncols; c++)
			if (shown[c] && t->cols[c].drop > 0 &&
			    (victim < 0 || t->cols[c].drop > t->cols[victim].drop))
				victim = c;
		if (victim < 0)
			break;
		shown[victim] = false;
	}
	/* ...then the names are cut in the middle, widest first. */
	while (total_width(t, w, shown) > width) {
		int widest = -1;
		for (int c = 0; c < t->ncols; c++) {
			if (shown[c] && (t->cols[c].flags & GI_COL_ELIDE) && w[c] > min_of(t, c) &&
			    (widest < 0 || w[c] > w[widest]))
				widest = c;
		}
		if (widest < 0)
			break;
		w[widest]--;
	}
}

static int cell_put(struct gi_buf *out, const char *text, int width, int flags, bool last)
{
	char cut[CELL_MAX * 4];
	int cw = (int)gi_fmt_width(text);
	if (cw > width) {
		gi_fmt_elide_middle(text, (size_t)width, cut, sizeof(cut));
		text = cut;
		cw = (int)gi_fmt_width(text);
	}
	int pad = width - cw, rc = 0;
	if (flags & GI_COL_RIGHT)
		rc = gi_buf_printf(out, "%*s%s", pad, "", text);
	else if (last)
		rc = gi_buf_puts(out, text);
	else
		rc = gi_buf_printf(out, "%s%*s", text, pad, "");
	return rc;
}

static int row_put(const struct gi_table *t, struct gi_buf *out, const char *const *cells,
                   const int *w, const bool *shown)
{
	int last = -1;
	for (int c = 0; c < t->ncols; c++)
		if (shown[c])
			last = c;
	int rc = gi_buf_printf(out, "%*s", t->indent, "");
	bool first = true;
	for (int c = 0; c < t->ncols && rc == 0; c++) {
		if (!shown[c])
			continue;
		if (!first)
			rc = gi_buf_puts(out, "  ");
		first = false;
		if (rc == 0)
			rc = cell_put(out, cells[c], w[c], t->cols[c].flags, c == last);
	}
	return rc ? rc : gi_buf_puts(out, "\n");
}

/* `text` word-wrapped to `width` (0: one line), every line indented. */
static int note_put(struct gi_buf *out, const char *text, int indent, int width)
{
	int rc = 0;
	const char *p = text;
	while (*p && rc == 0) {
		while (*p == ' ')
			p++;
		size_t len = strlen(p), take = len;
		if (width > indent + 10 && gi_fmt_width(p) > (size_t)(width - indent)) {
			size_t room = (size_t)(width - indent);
			/* the byte offset of `room` code points, then back to a space */
			size_t off = 0, seen = 0;
			while (p[off] && seen < room) {
				off++;
				while (((unsigned char)p[off] & 0xC0) == 0x80)
					off++;
				seen++;
			}
			take = off;
			while (take > 0 && p[take] != ' ')
				take--;
			if (take == 0)
				take = off;
		}
		rc = gi_buf_printf(out, "%*s%.*s\n", indent, "", (int)take, p);
		p += take;
	}
	return rc;
}

int gi_table_render(const struct gi_table *t, int width, struct gi_buf *out)
{
	int w[TABLE_COLS_MAX];
	bool shown[TABLE_COLS_MAX];
	fit(t, width, w, shown);
	const char *headers[TABLE_COLS_MAX];
	for (int c = 0; c < t->ncols; c++)
		headers[c] = t->cols[c].header;
	int rc = row_put(t, out, headers, w, shown);
	for (size_t r = 0; r < t->rows && rc == 0; r++) {
		rc =
		    row_put(t, out, (const char *const *)&t->cells[r * (size_t)t->ncols], w, shown);
		if (rc == 0 && t->notes[r])
			rc = note_put(out, t->notes[r], t->indent + 4, width);
	}
	return rc;
}
