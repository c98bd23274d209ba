/*
 * term.c - Erlang external terms (as ei decodes them) to JSON.
 *
 * The session process answers with small terms built for this mapping:
 *   integers -> numbers (bignums beyond 64 bits -> null)
 *   floats -> numbers
 *   atoms true/false -> booleans; null, undefined -> null; other atoms -> strings
 *   binaries -> strings (invalid UTF-8 -> null)
 *   lists, tuples -> arrays (a "string" list of small integers too)
 *   maps -> objects with atom, binary or string keys (other keys dropped)
 *   pids -> "<0.N.S>"; refs, ports, funs, bit strings -> GI_EPARSE
 * The input comes from the network: every size is checked against the
 * buffer before anything is allocated, and nesting is limited to
 * TERM_MAX_DEPTH.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/str.h"
#include "observe/observe_int.h"
#include "observe/term.h"

/* What a decode reads, and where a checking pass (out == NULL: nothing
 * built) records the end of each container (obs_term_doc). */
struct dctx {
	const char *buf;
	int len;
	int *ends; /* indexed by a container's first byte; NULL: not recorded */
};

static int decode(const struct dctx *c, int *index, int depth, json_t **out);

static unsigned be16(const unsigned char *p)
{
	return ((unsigned)p[0] << 8) | p[1];
}

static unsigned long be32(const unsigned char *p)
{
	return ((unsigned long)p[0] << 24) | ((unsigned long)p[1] << 16) |
	       ((unsigned long)p[2] << 8) | p[3];
}

/* Size in bytes of the atom at `at` (tag included), or -1 when it does not fit. */
static long atom_size(const unsigned char *b, long at, long len)
{
	if (at + 2 > len)
		return -1;
	long size;
	switch (b[at]) {
	case ERL_ATOM_EXT:
	case ERL_ATOM_UTF8_EXT:
		if (at + 3 > len)
			return -1;
		size = 3 + (long)be16(b + at + 1);
		break;
	case ERL_SMALL_ATOM_EXT:
	case ERL_SMALL_ATOM_UTF8_EXT:
		size = 2 + (long)b[at + 1];
		break;
	default:
		return -1;
	}
	return at + size <= len ? size : -1;
}

/* ei reads headers without knowing the buffer's length: check that the whole
 * header of the term at `at` (and the payload of flat terms) is inside the
 * buffer before ei looks at it. */
static int header_fits(const char *buf, long at, long len)
{
	const unsigned char *b = (const unsigned char *)buf;
	if (at < 0 || at >= len)
		return GI_EPARSE;
	long need;
	switch (b[at]) {
	case ERL_SMALL_INTEGER_EXT:
		need = 2;
		break;
	case ERL_INTEGER_EXT:
		need = 5;
		break;
	case NEW_FLOAT_EXT:
		need = 9;
		break;
	case ERL_FLOAT_EXT:
		need = 32;
		break;
	case ERL_ATOM_EXT:
	case ERL_ATOM_UTF8_EXT:
	case ERL_SMALL_ATOM_EXT:
	case ERL_SMALL_ATOM_UTF8_EXT:
		return atom_size(b, at, len) > 0 ? 0 : GI_EPARSE;
	case ERL_SMALL_BIG_EXT:
		need = at + 2 <= len ? 3 + (long)b[at + 1] : 3;
		break;
	case ERL_LARGE_BIG_EXT:
		need = at + 5 <= len ? 6 + (long)be32(b + at + 1) : 6;
		break;
	case ERL_BINARY_EXT:
		need = at + 5 <= len ? 5 + (long)be32(b + at + 1) : 5;
		break;
	case ERL_STRING_EXT:
		need = at + 3 <= len ? 3 + (long)be16(b + at + 1) : 3;
		break;
	case ERL_NIL_EXT:
		need = 1;
		break;
	case ERL_LIST_EXT:
	case ERL_LARGE_TUPLE_EXT:
	case ERL_MAP_EXT:
		need = 5;
		break;
	case ERL_SMALL_TUPLE_EXT:
		need = 2;
		break;
	case ERL_NEW_PID_EXT:
	case ERL_PID_EXT: {
		long a = atom_size(b, at + 1, len);
		if (a < 0)
			return GI_EPARSE;
		need = 1 + a + (b[at] == ERL_NEW_PID_EXT ? 12 : 9);
		break;
	}
	default:
		return GI_EPARSE; /* refs, ports, funs, bit strings: never in our replies */
	}
	return at + need <= len ? 0 : GI_EPARSE;
}

static int check_room(int len, int index, long need)
{
	return need >= 0 && (long)index + need <= (long)len ? 0 : GI_EPARSE;
}

/* The bytes of the UTF-8 atom at buf[*index] (header_fits checked it is
 * whole), moving past it; false for a Latin-1 atom (ei converts those). */
static bool atom_utf8_bytes(const char *buf, int *index, const char **text, size_t *len)
{
	const unsigned char *b = (const unsigned char *)buf + *index;
	if (b[0] == ERL_SMALL_ATOM_UTF8_EXT) {
		*len = b[1];
		*text = buf + *index + 2;
	} else if (b[0] == ERL_ATOM_UTF8_EXT) {
		*len = be16(b + 1);
		*text = buf + *index + 3;
	} else {
		return false;
	}
	*index += (int)(*text - (buf + *index)) + (int)*len;
	return true;
}

static bool text_is(const char *text, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(text, word, len) == 0;
}

/* An atom's JSON: true, false, null (null, undefined), else a string, or
 * null when it is not valid UTF-8. */
static json_t *atom_json(const char *text, size_t len)
{
	if (text_is(text, len, "true"))
		return json_true();
	if (text_is(text, len, "false"))
		return json_false();
	if (text_is(text, len, "null") || text_is(text, len, "undefined"))
		return json_null();
	json_t *v = gi_utf8_valid(text, len) ? json_stringn_nocheck(text, len) : NULL;
	return v ? v : json_null();
}

/* The JSON type of an atom: true, false, null (null, undefined), else a
 * string when it is valid UTF-8, else null. */
static json_type atom_type(const char *text, size_t len)
{
	if (text_is(text, len, "true"))
		return JSON_TRUE;
	if (text_is(text, len, "false"))
		return JSON_FALSE;
	if (text_is(text, len, "null") || text_is(text, len, "undefined"))
		return JSON_NULL;
	return gi_utf8_valid(text, len) ? JSON_STRING : JSON_NULL;
}

/* An atom's text, as UTF-8: from the buffer for a UTF-8 atom, converted into
 * `scratch` (MAXATOMLEN_UTF8 bytes) for a Latin-1 one; moves past it. */
static int atom_text(const char *buf, int *index, char *scratch, const char **text, size_t *len)
{
	if (atom_utf8_bytes(buf, index, text, len))
		return 0;
	erlang_char_encoding enc;
	if (ei_decode_atom_as(buf, index, scratch, MAXATOMLEN_UTF8, ERLANG_UTF8, &enc, NULL) < 0)
		return GI_EPARSE;
	*text = scratch;
	*len = strlen(scratch);
	return 0;
}

static int decode_atom(const char *buf, int *index, json_t **out)
{
	const char *text;
	size_t len;
	char scratch[MAXATOMLEN_UTF8];
	if (atom_text(buf, index, scratch, &text, &len) != 0)
		return GI_EPARSE;
	if (out)
		*out = atom_json(text, len);
	return 0;
}

static int decode_binary(const struct dctx *c, int *index, int size, json_t **out)
{
	/* header_fits checked that the 5-byte header and the bytes are inside */
	if (size < 0 || check_room(c->len, *index, 5L + size) != 0)
		return GI_EPARSE;
	const char *data = c->buf + *index + 5;
	*index += 5 + size;
	if (!out)
		return 0;
	*out = gi_utf8_valid(data, (size_t)size) ? json_stringn_nocheck(data, (size_t)size) : NULL;
	if (!*out)
		*out = json_null();
	return 0;
}

static int decode_string_list(const struct dctx *c, int *index, int size, json_t **out)
{
	/* header_fits checked the 3-byte header and the bytes */
	if (check_room(c->len, *index, 3L + size) != 0)
		return GI_EPARSE;
	const unsigned char *data = (const unsigned char *)c->buf + *index + 3;
	*index += 3 + size;
	if (!out)
		return 0;
	json_t *arr = json_array();
	for (int i = 0; i < size; i++)
		json_array_append_new(arr, json_integer(data[i]));
	*out = arr;
	return 0;
}

static int decode_sequence(const struct dctx *c, int *index, int depth, int arity, json_t **out)
{
	/* each element takes at least one byte: a cheap bound against huge arities */
	if (check_room(c->len, *index, arity) != 0)
		return GI_EPARSE;
	json_t *arr = out ? json_array() : NULL;
	for (int i = 0; i < arity; i++) {
		json_t *item = NULL;
		int rc = decode(c, index, depth + 1, out ? &item : NULL);
		if (rc != 0) {
			json_decref(arr);
			return rc;
		}
		if (arr)
			json_array_append_new(arr, item);
	}
	if (out)
		*out = arr;
	return 0;
}

/* The text of a map key as a JSON object takes it: UTF-8 atom keys (all of
 * ours) straight from the buffer, else the key decoded (a string, or the
 * key is dropped: *text NULL); true, false, null and undefined are not
 * strings. *key holds what *text points into (caller decrefs). Moves past
 * the key. With `key` NULL the key is only checked, as decode checks with
 * `out` NULL: *text is then not to be read. */
static int map_key(const struct dctx *c, int *index, int depth, json_t **key, const char **text,
                   size_t *len)
{
	if (key)
		*key = NULL;
	*text = NULL;
	int rc = header_fits(c->buf, *index, c->len);
	if (rc == 0 && atom_utf8_bytes(c->buf, index, text, len)) {
		if (key && atom_type(*text, *len) != JSON_STRING)
			*text = NULL;
	} else if (rc == 0) {
		rc = decode(c, index, depth + 1, key);
		if (rc == 0 && key && json_is_string(*key)) {
			*text = json_string_value(*key);
			*len = json_string_length(*key);
		}
	}
	if (key && *text) /* a C string's key, as json_object_set_new took it */
		*len = strnlen(*text, *len);
	return rc;
}

static int decode_map(const struct dctx *c, int *index, int depth, json_t **out)
{
	int arity = 0;
	if (ei_decode_map_header(c->buf, index, &arity) < 0 ||
	    check_room(c->len, *index, 2L * arity) != 0)
		return GI_EPARSE;
	json_t *obj = out ? json_object() : NULL;
	for (int i = 0; i < arity; i++) {
		json_t *key = NULL, *value = NULL;
		const char *key_text = NULL;
		size_t key_len = 0;
		int rc = map_key(c, index, depth, obj ? &key : NULL, &key_text, &key_len);
		if (rc == 0)
			rc = decode(c, index, depth + 1, obj ? &value : NULL);
		if (rc != 0) {
			json_decref(key);
			json_decref(obj);
			return rc;
		}
		if (obj && key_text)
			json_object_setn_new_nocheck(obj, key_text, key_len, value);
		else
			json_decref(value);
		json_decref(key);
	}
	if (out)
		*out = obj;
	return 0;
}

/* An integer's JSON type and value (*v when it fits 64 bits signed, *d in
 * any case): an integer, a real when only unsigned 64 bits hold it, else
 * null (a bignum; *index is then left where it was). */
static json_type integer_value(const char *buf, int *index, long long *v, double *d)
{
	int save = *index;
	unsigned long long u = 0;
	*v = 0;
	*d = 0;
	if (ei_decode_longlong(buf, index, v) == 0) {
		*d = (double)*v;
		return JSON_INTEGER;
	}
	*index = save;
	if (ei_decode_ulonglong(buf, index, &u) == 0) {
		*d = (double)u;
		return JSON_REAL;
	}
	*index = save;
	return JSON_NULL;
}

static int decode_integer(const struct dctx *c, int *index, json_t **out)
{
	long long v;
	double d;
	json_type type = integer_value(c->buf, index, &v, &d);
	if (type == JSON_NULL && (ei_skip_term(c->buf, index) < 0 || *index > c->len))
		return GI_EPARSE;
	if (out)
		*out = type == JSON_INTEGER ? json_integer(v)
		       : type == JSON_REAL  ? json_real(d)
		                            : json_null();
	return 0;
}

static int decode_container(const struct dctx *c, int *index, int depth, int type, json_t **out)
{
	int arity = 0, rc;
	switch (type) {
	case ERL_LIST_EXT: {
		if (ei_decode_list_header(c->buf, index, &arity) < 0)
			return GI_EPARSE;
		rc = decode_sequence(c, index, depth, arity, out);
		if (rc != 0)
			return rc;
		/* the tail: [] for a proper list, else an improper tail we drop */
		json_t *tail = NULL;
		if (decode(c, index, depth + 1, out ? &tail : NULL) != 0) {
			if (out) {
				json_decref(*out);
				*out = NULL;
			}
			return GI_EPARSE;
		}
		json_decref(tail);
		return 0;
	}
	case ERL_SMALL_TUPLE_EXT:
	case ERL_LARGE_TUPLE_EXT:
		if (ei_decode_tuple_header(c->buf, index, &arity) < 0)
			return GI_EPARSE;
		return decode_sequence(c, index, depth, arity, out);
	default:
		return decode_map(c, index, depth, out);
	}
}

static int decode(const struct dctx *c, int *index, int depth, json_t **out)
{
	if (out)
		*out = NULL;
	if (depth > TERM_MAX_DEPTH || header_fits(c->buf, *index, c->len) != 0)
		return GI_EPARSE;
	int type = 0, size = 0, start = *index;
	if (ei_get_type(c->buf, index, &type, &size) < 0)
		return GI_EPARSE;
	switch (type) {
	case ERL_SMALL_INTEGER_EXT:
	case ERL_INTEGER_EXT:
		if (!out) { /* checking only: header_fits checked it whole */
			*index =
			    start + ((unsigned char)c->buf[start] == ERL_SMALL_INTEGER_EXT ? 2 : 5);
			return 0;
		}
		return decode_integer(c, index, out);
	case ERL_SMALL_BIG_EXT:
	case ERL_LARGE_BIG_EXT:
		return decode_integer(c, index, out);
	case ERL_FLOAT_EXT:
	case NEW_FLOAT_EXT: {
		double d = 0;
		if (ei_decode_double(c->buf, index, &d) < 0)
			return GI_EPARSE;
		if (out) {
			*out = json_real(d);
			if (!*out)
				*out = json_null(); /* NaN or infinity cannot be JSON */
		}
		return 0;
	}
	case ERL_ATOM_EXT:
	case ERL_SMALL_ATOM_EXT:
	case ERL_ATOM_UTF8_EXT:
	case ERL_SMALL_ATOM_UTF8_EXT:
		return decode_atom(c->buf, index, out);
	case ERL_BINARY_EXT:
		return decode_binary(c, index, size, out);
	case ERL_STRING_EXT:
		return decode_string_list(c, index, size, out);
	case ERL_NIL_EXT:
		if (ei_decode_list_header(c->buf, index, &size) < 0)
			return GI_EPARSE;
		if (out)
			*out = json_array();
		return 0;
	case ERL_LIST_EXT:
	case ERL_SMALL_TUPLE_EXT:
	case ERL_LARGE_TUPLE_EXT:
	case ERL_MAP_EXT: {
		int rc = decode_container(c, index, depth, type, out);
		if (rc == 0 && c->ends)
			c->ends[start] = *index;
		return rc;
	}
	case ERL_PID_EXT:
	case ERL_NEW_PID_EXT: {
		erlang_pid pid;
		if (ei_decode_pid(c->buf, index, &pid) < 0)
			return GI_EPARSE;
		if (out) {
			char text[64];
			snprintf(text, sizeof(text), "<0.%u.%u>", pid.num, pid.serial);
			*out = json_string(text);
		}
		return 0;
	}
	default:
		return GI_EPARSE;
	}
}

int obs_term_to_json(const char *buf, int len, int *index, json_t **out)
{
	*out = NULL;
	struct dctx c = {buf, len, NULL};
	int rc = decode(&c, index, 0, out);
	if (rc != 0 || *index > len) {
		json_decref(*out);
		*out = NULL;
		return GI_EPARSE;
	}
	return 0;
}

/* ---- checked terms read in place ---- */

_Static_assert(MAXATOMLEN_UTF8 <= OBS_TERM_SCRATCH, "an atom's UTF-8 text fits the scratch");

int obs_term_doc_parse(struct obs_term_doc *d, const char *buf, int len, int *index,
                       struct obs_term *root)
{
	*root = (struct obs_term){NULL, -1, -1};
	if (len < 0 || *index < 0 || *index >= len)
		return GI_EPARSE;
	if ((size_t)len > d->cap) {
		gi_free(d->ends);
		d->cap = (size_t)len + (size_t)len / 4;
		d->ends = gi_malloc(d->cap * sizeof(int));
	}
	d->buf = buf;
	d->len = len;
	struct dctx c = {buf, len, d->ends};
	int start = *index;
	if (decode(&c, index, 0, NULL) != 0 || *index > len)
		return GI_EPARSE;
	*root = (struct obs_term){d, start, -1};
	return 0;
}

void obs_term_doc_destroy(struct obs_term_doc *d)
{
	gi_free(d->ends);
	memset(d, 0, sizeof(*d));
}

static const struct obs_term NO_TERM = {NULL, -1, -1};

bool obs_term_present(struct obs_term t)
{
	return t.at >= 0 || t.byte >= 0;
}

static int term_tag(struct obs_term t)
{
	return t.at >= 0 ? (unsigned char)t.doc->buf[t.at] : -1;
}

/* Where the term after `at` starts (the term at `at` was checked whole:
 * every size below is inside the buffer). */
static int term_end(const struct obs_term_doc *d, int at)
{
	const unsigned char *b = (const unsigned char *)d->buf + at;
	switch (b[0]) {
	case ERL_LIST_EXT:
	case ERL_SMALL_TUPLE_EXT:
	case ERL_LARGE_TUPLE_EXT:
	case ERL_MAP_EXT:
		return d->ends[at];
	case ERL_SMALL_INTEGER_EXT:
		return at + 2;
	case ERL_INTEGER_EXT:
		return at + 5;
	case NEW_FLOAT_EXT:
		return at + 9;
	case ERL_FLOAT_EXT:
		return at + 32;
	case ERL_SMALL_ATOM_EXT:
	case ERL_SMALL_ATOM_UTF8_EXT:
		return at + 2 + b[1];
	case ERL_ATOM_EXT:
	case ERL_ATOM_UTF8_EXT:
		return at + 3 + (int)be16(b + 1);
	case ERL_BINARY_EXT:
		return at + 5 + (int)be32(b + 1);
	case ERL_STRING_EXT:
		return at + 3 + (int)be16(b + 1);
	case ERL_NIL_EXT:
		return at + 1;
	case ERL_SMALL_BIG_EXT:
		return at + 3 + b[1];
	case ERL_LARGE_BIG_EXT:
		return at + 6 + (int)be32(b + 1);
	default: { /* pids */
		int i = at;
		return ei_skip_term(d->buf, &i) < 0 ? d->len : i;
	}
	}
}

json_type obs_term_type(struct obs_term t)
{
	if (t.byte >= 0)
		return JSON_INTEGER;
	const char *buf = t.at >= 0 ? t.doc->buf : NULL;
	int i = t.at;
	switch (term_tag(t)) {
	case ERL_SMALL_INTEGER_EXT:
	case ERL_INTEGER_EXT:
	case ERL_SMALL_BIG_EXT:
	case ERL_LARGE_BIG_EXT: {
		long long v;
		double d;
		return integer_value(buf, &i, &v, &d);
	}
	case ERL_FLOAT_EXT:
	case NEW_FLOAT_EXT: {
		double d = 0;
		return ei_decode_double(buf, &i, &d) == 0 && isfinite(d) ? JSON_REAL : JSON_NULL;
	}
	case ERL_ATOM_EXT:
	case ERL_SMALL_ATOM_EXT:
	case ERL_ATOM_UTF8_EXT:
	case ERL_SMALL_ATOM_UTF8_EXT: {
		const char *text;
		size_t len;
		char scratch[MAXATOMLEN_UTF8];
		return atom_text(buf, &i, scratch, &text, &len) == 0 ? atom_type(text, len)
		                                                     : JSON_NULL;
	}
	case ERL_BINARY_EXT: {
		const unsigned char *b = (const unsigned char *)buf + i;
		return gi_utf8_valid(buf + i + 5, be32(b + 1)) ? JSON_STRING : JSON_NULL;
	}
	case ERL_STRING_EXT:
	case ERL_NIL_EXT:
	case ERL_LIST_EXT:
	case ERL_SMALL_TUPLE_EXT:
	case ERL_LARGE_TUPLE_EXT:
		return JSON_ARRAY;
	case ERL_MAP_EXT:
		return JSON_OBJECT;
	case ERL_PID_EXT:
	case ERL_NEW_PID_EXT:
		return JSON_STRING;
	default:
		return JSON_NULL; /* no term: obs_term_present tells */
	}
}

json_t *obs_term_json(struct obs_term t)
{
	if (t.byte >= 0)
		return json_integer(t.byte);
	if (t.at < 0)
		return NULL;
	struct dctx c = {t.doc->buf, t.doc->len, NULL};
	int i = t.at;
	json_t *out = NULL;
	return decode(&c, &i, 0, &out) == 0 ? out : NULL;
}

double obs_term_number(struct obs_term t)
{
	if (t.byte >= 0)
		return t.byte;
	const char *buf = t.at >= 0 ? t.doc->buf : NULL;
	int i = t.at;
	long long v;
	double d;
	switch (term_tag(t)) {
	case ERL_SMALL_INTEGER_EXT:
	case ERL_INTEGER_EXT:
	case ERL_SMALL_BIG_EXT:
	case ERL_LARGE_BIG_EXT:
		integer_value(buf, &i, &v, &d);
		return d;
	case ERL_FLOAT_EXT:
	case NEW_FLOAT_EXT:
		return ei_decode_double(buf, &i, &d) == 0 && isfinite(d) ? d : 0;
	default:
		return 0;
	}
}

long long obs_term_integer(struct obs_term t)
{
	if (t.byte >= 0)
		return t.byte;
	long long v = 0;
	double d;
	int i = t.at;
	switch (term_tag(t)) {
	case ERL_SMALL_INTEGER_EXT:
	case ERL_INTEGER_EXT:
	case ERL_SMALL_BIG_EXT:
	case ERL_LARGE_BIG_EXT:
		return integer_value(t.doc->buf, &i, &v, &d) == JSON_INTEGER ? v : 0;
	default:
		return 0;
	}
}

const char *obs_term_text(struct obs_term t, char *scratch, size_t *len)
{
	if (obs_term_type(t) != JSON_STRING)
		return NULL;
	const char *buf = t.doc->buf;
	int i = t.at;
	switch (term_tag(t)) {
	case ERL_BINARY_EXT:
		*len = be32((const unsigned char *)buf + i + 1);
		return buf + i + 5;
	case ERL_PID_EXT:
	case ERL_NEW_PID_EXT: {
		erlang_pid pid;
		if (ei_decode_pid(buf, &i, &pid) < 0)
			return NULL;
		int n = snprintf(scratch, OBS_TERM_SCRATCH, "<0.%u.%u>", pid.num, pid.serial);
		*len = n > 0 ? (size_t)n : 0;
		return scratch;
	}
	default: {
		const char *text;
		if (atom_text(buf, &i, scratch, &text, len) != 0)
			return NULL;
		return text;
	}
	}
}

bool obs_term_cstr(struct obs_term t, char *out, size_t cap)
{
	char scratch[OBS_TERM_SCRATCH];
	size_t len = 0;
	const char *text = obs_term_text(t, scratch, &len);
	if (!text || cap == 0)
		return false;
	len = strnlen(text, len);
	if (len >= cap)
		return false;
	memcpy(out, text, len);
	out[len] = '\0';
	return true;
}

void obs_term_fields(struct obs_term map, const char *const *keys, struct obs_term *out)
{
	size_t nkeys = 0, want[OBS_TERM_FIELDS_MAX];
	for (; nkeys < OBS_TERM_FIELDS_MAX && keys[nkeys]; nkeys++) {
		want[nkeys] = strlen(keys[nkeys]);
		out[nkeys] = NO_TERM;
	}
	if (term_tag(map) != ERL_MAP_EXT)
		return;
	const struct obs_term_doc *d = map.doc;
	struct dctx c = {d->buf, d->len, NULL};
	int i = map.at, arity = 0;
	if (ei_decode_map_header(d->buf, &i, &arity) < 0)
		return;
	for (int k = 0; k < arity; k++) {
		const char *text = NULL;
		size_t len = 0, full = 0;
		json_t *held = NULL;
		/* UTF-8 atom keys (all of ours) compared where they lie, and
		 * checked (valid, not an atom that is no string) only when equal */
		const unsigned char *b = (const unsigned char *)d->buf + i;
		bool direct = b[0] == ERL_SMALL_ATOM_UTF8_EXT || b[0] == ERL_ATOM_UTF8_EXT;
		if (direct) {
			atom_utf8_bytes(d->buf, &i, &text, &full);
			len = strnlen(text, full); /* as map_key takes it */
		} else if (map_key(&c, &i, 0, &held, &text, &len) != 0) {
			json_decref(held);
			return;
		}
		for (size_t j = 0; text && j < nkeys; j++)
			if (want[j] == len && memcmp(text, keys[j], len) == 0 &&
			    (!direct || atom_type(text, full) == JSON_STRING))
				out[j] = (struct obs_term){d, i, -1}; /* the last of equal keys */
		json_decref(held);
		i = term_end(d, i);
	}
}

struct obs_term obs_term_get(struct obs_term map, const char *key)
{
	const char *const keys[] = {key, NULL};
	struct obs_term out;
	obs_term_fields(map, keys, &out);
	return out;
}

struct obs_term_iter obs_term_items(struct obs_term seq)
{
	struct obs_term_iter it = {NULL, 0, 0, false};
	if (seq.at < 0)
		return it;
	const struct obs_term_doc *d = seq.doc;
	int i = seq.at, n = 0;
	switch (term_tag(seq)) {
	case ERL_STRING_EXT:
		it.bytes = true;
		n = (int)be16((const unsigned char *)d->buf + i + 1);
		i += 3;
		break;
	case ERL_LIST_EXT:
		if (ei_decode_list_header(d->buf, &i, &n) < 0)
			return it;
		break;
	case ERL_SMALL_TUPLE_EXT:
	case ERL_LARGE_TUPLE_EXT:
		if (ei_decode_tuple_header(d->buf, &i, &n) < 0)
			return it;
		break;
	default:
		return it;
	}
	it.doc = d;
	it.next = i;
	it.left = n;
	return it;
}

bool obs_term_next(struct obs_term_iter *it, struct obs_term *out)
{
	if (it->left <= 0)
		return false;
	it->left--;
	if (it->bytes) {
		*out = (struct obs_term){it->doc, -1, (unsigned char)it->doc->buf[it->next++]};
		return true;
	}
	*out = (struct obs_term){it->doc, it->next, -1};
	it->next = term_end(it->doc, it->next);
	return true;
}

size_t obs_term_size(struct obs_term seq)
{
	struct obs_term_iter it = obs_term_items(seq);
	return it.left > 0 ? (size_t)it.left : 0;
}

struct obs_term obs_term_item(struct obs_term seq, size_t index)
{
	struct obs_term_iter it = obs_term_items(seq);
	struct obs_term t;
	for (size_t k = 0; obs_term_next(&it, &t); k++)
		if (k == index)
			return t;
	return NO_TERM;
}
