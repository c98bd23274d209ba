/*
 * beam_facts.c - a .beam's raw records to facts (see beam_int.h,
 * docs/BEAM.md): functions with their lines and branches, calls resolved
 * (imports, locals, lambdas to their parents, compiler-generated functions
 * to theirs, operators dropped), references; then the docs (EEP 48 Docs
 * chunk) and specs (Dbgi) that mark documented and specced functions.
 * Calls and references are capped at BEAM_MAX_CALLS.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/map.h"
#include "base/modname.h"
#include "base/str.h"
#include "base/vec.h"
#include "source/beam_int.h"
#include "source/beam_ops.h"

/* ------------------------------------------------------------------------ */
/* Facts                                                                    */

void beam_ref_add(struct beam_ctx *c, enum facts_ref_kind kind, const char *atom, uint32_t line)
{
	char display[600], key[620];
	if (!atom || strcmp(atom, c->module_atom) == 0)
		return;
	if (gi_module_display_name(atom, display, sizeof(display)) != 0)
		return;
	snprintf(key, sizeof(key), "%d:%s", (int)kind, display);
	if (gi_map_get(&c->refs, key))
		return;
	gi_map_put(&c->refs, key, (void *)1);
	facts_ref_add(c->facts, c->module, kind, display, line);
}

/* Operators compiled to BIF calls (a + b, a and b) are not calls in the source. */
static bool bif_is_operator(const char *module, const char *name)
{
	static const char *const words[] = {"div", "rem",  "band", "bor", "bxor", "bsl",
	                                    "bsr", "bnot", "and",  "or",  "xor",  "not"};
	if (strcmp(module, "erlang") != 0)
		return false;
	if (!(name[0] >= 'a' && name[0] <= 'z'))
		return true;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(name, words[i]) == 0)
			return true;
	return false;
}

/* For a generated function "-parent/2-fun-0-" (or "-inlined-parent/2-"), the
 * index of its parent among c->funcs, or -1. */
static int generated_parent(struct beam_ctx *c, const char *name, const struct gi_map *by_name)
{
	const char *s = name + 1;
	if (gi_str_starts_with(s, "inlined-"))
		s += 8;
	for (const char *p = s; *p; p++) {
		if (*p != '/' || p == s)
			continue;
		const char *q = p + 1;
		while (*q >= '0' && *q <= '9')
			q++;
		if (q == p + 1 || *q != '-' || q - p > 4)
			continue;
		char key[600];
		int n = snprintf(key, sizeof(key), "%.*s", (int)(q - s), s);
		if (n < 0 || (size_t)n >= sizeof(key))
			return -1;
		void *v = gi_map_get(by_name, key);
		return v ? (int)((intptr_t)v - 1) : -1;
	}
	(void)c;
	return -1;
}

static bool func_is_skipped(const struct beam_ctx *c, const char *name, uint32_t arity)
{
	if (strcmp(name, "module_info") == 0 && arity <= 1)
		return true;
	if (strcmp(name, "behaviour_info") == 0 && arity == 1)
		return true;
	if (!c->elixir)
		return false;
	if ((strcmp(name, "__info__") == 0 && arity == 1) ||
	    (strcmp(name, "__struct__") == 0 && arity <= 1) ||
	    (strcmp(name, "__impl__") == 0 && arity == 1))
		return true;
	return c->module->kind == FACTS_PROTOCOL && arity == 1 &&
	       (strcmp(name, "__protocol__") == 0 || strcmp(name, "impl_for") == 0 ||
	        strcmp(name, "impl_for!") == 0);
}

static void emit_call(struct beam_ctx *c, struct facts_function *fn, const struct raw_call *rc,
                      const char *self_display)
{
	char display[600];
	if (++c->emitted > BEAM_MAX_CALLS) {
		c->overflow = true;
		return;
	}
	switch (rc->kind) {
	case RAW_IMPORT: {
		if (rc->index >= c->import_count)
			return;
		const struct import *im = &c->imports[rc->index];
		const char *mod = c->atoms[im->module], *fun = c->atoms[im->function];
		if (bif_is_operator(mod, fun))
			return;
		if (gi_module_display_name(mod, display, sizeof(display)) != 0)
			return;
		facts_call_add(c->facts, fn, FACTS_CALL_REMOTE, display, fun, (int)im->arity,
		               rc->line);
		beam_ref_add(c, FACTS_REF_CALL, mod, rc->line);
		return;
	}
	case RAW_LOCAL: {
		if (rc->index > c->label_count || c->label_func[rc->index] < 0)
			return;
		const struct raw_func *t = gi_vec_get(&c->funcs, (size_t)c->label_func[rc->index]);
		const char *name = c->atoms[t->name];
		if (name[0] == '-' || func_is_skipped(c, name, t->arity))
			return; /* a lambda or comprehension body (folded), or generated code */
		facts_call_add(c->facts, fn, FACTS_CALL_LOCAL, self_display, name, (int)t->arity,
		               rc->line);
		return;
	}
	case RAW_LAMBDA: {
		if (rc->index >= c->lambda_count ||
		    !beam_atom_at(c, c->lambdas[rc->index].function))
			return;
		const char *name = c->atoms[c->lambdas[rc->index].function];
		if (name[0] == '-' || func_is_skipped(c, name, c->lambdas[rc->index].arity))
			return;
		facts_call_add(c->facts, fn, FACTS_CALL_CAPTURE, self_display, name,
		               (int)c->lambdas[rc->index].arity, rc->line);
		return;
	}
	case RAW_LITERAL: {
		const struct lit_range *lr = &c->lits[rc->index];
		for (uint32_t i = 0; i < lr->count; i++) {
			const struct lit_find *lf = gi_vec_get(&c->finds, lr->first + i);
			if (++c->emitted > BEAM_MAX_CALLS) {
				c->overflow = true;
				return;
			}
			if (lf->kind == FIND_STRUCT) {
				beam_ref_add(c, FACTS_REF_STRUCT, lf->module, rc->line);
				continue;
			}
			if (lf->kind != FIND_CAPTURE)
				continue;
			if (gi_module_display_name(lf->module, display, sizeof(display)) != 0)
				continue;
			facts_call_add(c->facts, fn, FACTS_CALL_CAPTURE, display, lf->function,
			               lf->arity, rc->line);
			beam_ref_add(c, FACTS_REF_CAPTURE, lf->module, rc->line);
		}
		return;
	}
	case RAW_APPLY:
		facts_call_add(c->facts, fn, FACTS_CALL_DYNAMIC, NULL, NULL, (int)rc->index,
		               rc->line);
		return;
	case RAW_STRUCT:
		beam_ref_add(c, FACTS_REF_STRUCT, beam_atom_at(c, rc->index), rc->line);
		return;
	}
}

/* The line-table file of most functions: the module's own source file. */
static uint32_t main_file_of(struct beam_ctx *c)
{
	uint32_t files[32], counts[32], n = 0, best = 0;
	for (size_t i = 0; i < c->funcs.len; i++) {
		const struct raw_func *f = gi_vec_get(&c->funcs, i);
		uint32_t k = 0;
		if (!f->line_first)
			continue;
		while (k < n && files[k] != f->file)
			k++;
		if (k == n && n < 32) {
			files[n] = f->file;
			counts[n++] = 0;
		}
		if (k < n)
			counts[k]++;
	}
	for (uint32_t k = 1; k < n; k++)
		if (counts[k] > counts[best])
			best = k;
	return n ? files[best] : 0;
}

int beam_facts_build(struct beam_ctx *c)
{
	struct gi_map by_name; /* "name/arity" -> index + 1 */
	char key[600];
	const char *self_display = c->module->name;
	size_t nf = c->funcs.len;
	bool *exported = gi_arena_calloc(&c->scratch, nf + 1, sizeof(bool));
	gi_map_init(&by_name);
	for (size_t i = 0; i < nf; i++) {
		struct raw_func *f = gi_vec_get(&c->funcs, i);
		snprintf(key, sizeof(key), "%s/%u", c->atoms[f->name], f->arity);
		gi_map_put(&by_name, key, (void *)(intptr_t)(i + 1));
	}
	for (uint32_t i = 0; i < c->export_count; i++) {
		snprintf(key, sizeof(key), "%s/%u", c->atoms[c->exports[i].function],
		         c->exports[i].arity);
		void *v = gi_map_get(&by_name, key);
		if (v)
			exported[(intptr_t)v - 1] = true;
	}
	/* Owners: a generated function's facts go to its parent. */
	for (size_t i = 0; i < nf; i++) {
		struct raw_func *f = gi_vec_get(&c->funcs, i);
		const char *name = c->atoms[f->name];
		if (func_is_skipped(c, name, f->arity)) {
			if (strcmp(name, "__struct__") == 0)
				c->module->has_struct = true;
			if (strcmp(name, "behaviour_info") == 0 &&
			    c->module->kind != FACTS_PROTOCOL)
				beam_callbacks_collect(c, f);
			continue;
		}
		f->owner = (int)i;
		if (name[0] == '-' && !exported[i]) {
			int p = generated_parent(c, name, &by_name);
			for (int hops = 0; p >= 0 && hops < 8; hops++) {
				struct raw_func *pf = gi_vec_get(&c->funcs, (size_t)p);
				const char *pn = c->atoms[pf->name];
				if (pn[0] != '-')
					break;
				p = generated_parent(c, pn, &by_name);
			}
			if (p >= 0) {
				struct raw_func *pf = gi_vec_get(&c->funcs, (size_t)p);
				f->owner =
				    func_is_skipped(c, c->atoms[pf->name], pf->arity) ? -1 : p;
			}
		}
	}
	uint32_t main_file = main_file_of(c);
	/* Functions, in code order. */
	for (size_t i = 0; i < nf; i++) {
		struct raw_func *f = gi_vec_get(&c->funcs, i);
		if (f->owner != (int)i)
			continue;
		const char *name = c->atoms[f->name];
		int arity = (int)f->arity;
		enum facts_function_kind kind = exported[i] ? FACTS_DEF : FACTS_DEFP;
		if (c->elixir && gi_str_starts_with(name, "MACRO-") && arity >= 1) {
			name += 6;
			arity--;
			kind = exported[i] ? FACTS_DEFMACRO : FACTS_DEFMACROP;
		} else if (c->module->kind == FACTS_PROTOCOL && exported[i]) {
			kind = FACTS_DEFCALLBACK;
		}
		struct facts_function *fn = facts_function_add(c->facts, c->module, name, arity);
		fn->kind = kind;
		fn->is_public = exported[i];
		if (f->file == main_file) { /* code injected from elsewhere has foreign lines */
			fn->line_start = f->line_first;
			fn->line_end = f->line_last;
		}
		fn->lines = fn->line_start ? fn->line_end - fn->line_start + 1 : 0;
		fn->clauses = 1;
		f->facts_index = (int)(c->module->functions.len - 1);
	}
	/* Calls and branches, generated functions folded into their owners. */
	for (size_t i = 0; i < nf; i++) {
		struct raw_func *f = gi_vec_get(&c->funcs, i);
		if (f->owner < 0)
			continue;
		struct raw_func *o = gi_vec_get(&c->funcs, (size_t)f->owner);
		struct facts_function *fn =
		    gi_vec_get(&c->module->functions, (size_t)o->facts_index);
		fn->cyclomatic += f->branches;
		for (size_t k = 0; k < f->call_count; k++) {
			const struct raw_call *rc = gi_vec_get(&c->calls, f->first_call + k);
			emit_call(c, fn, rc, self_display);
			if (c->overflow)
				goto overflow;
		}
	}
	uint32_t first = 0, last = 0;
	for (size_t i = 0; i < c->module->functions.len; i++) {
		struct facts_function *fn = gi_vec_get(&c->module->functions, i);
		fn->cyclomatic += 1;
		if (fn->line_start && (first == 0 || fn->line_start < first))
			first = fn->line_start;
		if (fn->line_end > last)
			last = fn->line_end;
	}
	c->module->line_start = first;
	c->module->line_end = last;
	if (c->module->kind == FACTS_PROTOCOL) {
		for (size_t i = 0; i < c->module->functions.len; i++) {
			struct facts_function *fn = gi_vec_get(&c->module->functions, i);
			if (fn->kind != FACTS_DEFCALLBACK)
				continue;
			const char *cb =
			    gi_arena_printf(&c->facts->arena, "%s/%d", fn->name, fn->arity);
			gi_vec_push(&c->module->callbacks, &cb);
		}
	}
overflow:
	gi_map_destroy(&by_name);
	if (c->overflow) {
		c->chunk = "Code";
		return beam_ctx_fail(c, GI_ETOOBIG, "more than %d calls and references",
		                     BEAM_MAX_CALLS);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Docs (EEP 48) and specs (Dbgi)                                           */

static struct facts_function *fn_find(struct beam_ctx *c, const char *name, size_t len,
                                      int64_t arity)
{
	char key[600];
	int n = snprintf(key, sizeof(key), "%.*s/%lld", (int)len, name, (long long)arity);
	if (n < 0 || (size_t)n >= sizeof(key))
		return NULL;
	void *v = gi_map_get(&c->fn_index, key);
	return v ? gi_vec_get(&c->module->functions, (size_t)((intptr_t)v - 1)) : NULL;
}

void beam_fn_index_build(struct beam_ctx *c)
{
	char key[600];
	for (size_t i = 0; i < c->module->functions.len; i++) {
		const struct facts_function *fn = gi_vec_get(&c->module->functions, i);
		snprintf(key, sizeof(key), "%s/%d", fn->name, fn->arity);
		gi_map_put(&c->fn_index, key, (void *)(intptr_t)(i + 1));
	}
}

void beam_spec_mark(struct beam_ctx *c, const struct etf_value *name, int64_t arity)
{
	const char *text = name->text;
	size_t len = name->len;
	if (c->elixir && len > 6 && GI_MEM_IS(text, 6, "MACRO-") && arity >= 1) {
		text += 6;
		len -= 6;
		arity--;
	}
	struct facts_function *fn = fn_find(c, text, len, arity);
	if (fn)
		fn->has_spec = true;
}

/* Opens a term_to_binary blob (version byte, maybe compressed, tag 80): *r
 * reads the term; *buf (caller frees) holds the inflated bytes, if any. */
static bool etf_open(struct beam_ctx *c, const struct chunk *ch, uint8_t **buf, struct rd *r)
{
	uint8_t version, tag;
	uint32_t size;
	*buf = NULL;
	rd_init(r, ch->data, ch->size);
	if (!rd_u8(r, &version) || version != ETF_TAG_VERSION) {
		beam_ctx_note(c, "bad version byte");
		return false;
	}
	if (rd_left(r) == 0 || r->p[0] != ETF_TAG_COMPRESSED)
		return true;
	rd_u8(r, &tag);
	if (!rd_u32(r, &size) || size > BEAM_MAX_LITERALS_SIZE) {
		beam_ctx_note(c, "compressed term larger than the cap of %u bytes",
		              BEAM_MAX_LITERALS_SIZE);
		return false;
	}
	uLongf out_len = size;
	*buf = gi_malloc((size_t)size + 1);
	if (uncompress(*buf, &out_len, r->p, (uLong)rd_left(r)) != Z_OK) {
		beam_ctx_note(c, "zlib data is corrupt or larger than the declared %u bytes", size);
		gi_free(*buf);
		*buf = NULL;
		return false;
	}
	rd_init(r, *buf, out_len);
	return true;
}

/* What a docs entry's Doc is: a non-empty map (documented), hidden, or none. */
static bool doc_read(struct etf_walk *w, struct rd *r, bool *has, bool *hidden)
{
	struct etf_value v;
	*has = *hidden = false;
	if (rd_left(r) > 0 && r->p[0] == ETF_TAG_MAP_EXT) {
		*has = rd_left(r) >= 5 && (r->p[1] | r->p[2] | r->p[3] | r->p[4]) != 0;
		return beam_etf_term(w, r, 1, &v);
	}
	if (!beam_etf_term(w, r, 1, &v))
		return false;
	*has = *hidden = beam_etf_is_atom(&v, "hidden");
	return true;
}

/* Reads {docs_v1, Anno, Lang, Format, ModuleDoc, Meta, [{{Kind, Name, Arity}, Anno, Sig, Doc,
 * Meta}]} into has_moduledoc, moduledoc_false, has_doc and doc_false. */
void beam_docs_parse(struct beam_ctx *c, const struct chunk *ch)
{
	struct rd r;
	uint8_t *buf = NULL, tag, arity;
	uint32_t n;
	struct etf_walk w = {.c = c};
	struct etf_value v;
	bool has, hidden;
	c->chunk = "Docs";
	if (!ch->present || !etf_open(c, ch, &buf, &r))
		goto done;
	if (!rd_u8(&r, &tag) || tag != ETF_TAG_SMALL_TUPLE_EXT || !rd_u8(&r, &arity) ||
	    arity != 7 || !beam_etf_atom(&w, &r, &v) || !beam_etf_is_atom(&v, "docs_v1"))
		goto bad;
	for (int i = 0; i < 3; i++) /* anno, language, format */
		if (!beam_etf_term(&w, &r, 1, &v))
			goto bad;
	if (!doc_read(&w, &r, &has, &hidden) || !beam_etf_term(&w, &r, 1, &v))
		goto bad;
	c->module->has_moduledoc = has;
	c->module->moduledoc_false = hidden;
	if (!rd_u8(&r, &tag))
		goto bad;
	if (tag == ETF_TAG_NIL_EXT)
		goto done;
	if (tag != ETF_TAG_LIST_EXT || !rd_u32(&r, &n) || n > rd_left(&r))
		goto bad;
	for (uint32_t i = 0; i < n; i++) {
		struct etf_value kind, name, ar;
		if (!rd_u8(&r, &tag) || tag != ETF_TAG_SMALL_TUPLE_EXT || !rd_u8(&r, &arity) ||
		    arity != 5 || !rd_u8(&r, &tag) || tag != ETF_TAG_SMALL_TUPLE_EXT ||
		    !rd_u8(&r, &arity) || arity != 3 || !beam_etf_atom(&w, &r, &kind) ||
		    !beam_etf_atom(&w, &r, &name) || !beam_etf_term(&w, &r, 2, &ar) ||
		    ar.kind != ETF_INT)
			goto bad;
		if (!beam_etf_term(&w, &r, 1, &v) || !beam_etf_term(&w, &r, 1, &v) ||
		    !doc_read(&w, &r, &has, &hidden) || !beam_etf_term(&w, &r, 1, &v))
			goto bad;
		if (!beam_etf_is_atom(&kind, "function") && !beam_etf_is_atom(&kind, "macro"))
			continue;
		struct facts_function *fn = fn_find(c, name.text, name.len, ar.integer);
		if (fn) {
			fn->has_doc = has;
			fn->doc_false = hidden;
		}
	}
	goto done;
bad:
	beam_ctx_note(c, "not an EEP 48 docs_v1 term%s%s", w.error ? ": " : "",
	              w.error ? w.error : "");
done:
	gi_free(buf);
}

/* Walks the debug information (abstract code, or Elixir's) for -spec attributes. */
void beam_specs_parse(struct beam_ctx *c, const struct chunk *ch)
{
	struct rd r;
	uint8_t *buf = NULL;
	struct etf_walk w = {.c = c, .specs = true, .max_depth = BEAM_MAX_DEBUG_DEPTH};
	struct etf_value v;
	c->chunk = "Dbgi";
	if (ch->present && etf_open(c, ch, &buf, &r) && !beam_etf_term(&w, &r, 0, &v))
		beam_ctx_note(c, "%s", w.error ? w.error : "malformed");
	gi_free(buf);
}
