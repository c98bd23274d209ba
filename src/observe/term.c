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
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/str.h"
#include "observe/observe_int.h"
#include "observe/term.h"

static int decode(const char *buf, int len, int *index, int depth, json_t **out);

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

static int decode_atom(const char *buf, int *index, json_t **out)
{
	const char *text;
	size_t len;
	if (atom_utf8_bytes(buf, index, &text, &len)) {
		*out = atom_json(text, len);
		return 0;
	}
	char atom[MAXATOMLEN_UTF8];
	erlang_char_encoding enc;
	if (ei_decode_atom_as(buf, index, atom, sizeof(atom), ERLANG_UTF8, &enc, NULL) < 0)
		return GI_EPARSE;
	*out = atom_json(atom, strlen(atom));
	return 0;
}

static int decode_binary(const char *buf, int len, int *index, int size, json_t **out)
{
	/* header_fits checked that the 5-byte header and the bytes are inside */
	if (size < 0 || check_room(len, *index, 5L + size) != 0)
		return GI_EPARSE;
	const char *data = buf + *index + 5;
	*index += 5 + size;
	*out = gi_utf8_valid(data, (size_t)size) ? json_stringn_nocheck(data, (size_t)size) : NULL;
	if (!*out)
		*out = json_null();
	return 0;
}

static int decode_string_list(const char *buf, int len, int *index, int size, json_t **out)
{
	if (check_room(len, *index, size) != 0)
		return GI_EPARSE;
	char *data = gi_malloc((size_t)size + 1);
	if (ei_decode_string(buf, index, data) < 0) {
		gi_free(data);
		return GI_EPARSE;
	}
	json_t *arr = json_array();
	for (int i = 0; i < size; i++)
		json_array_append_new(arr, json_integer((unsigned char)data[i]));
	gi_free(data);
	*out = arr;
	return 0;
}

static int decode_sequence(const char *buf, int len, int *index, int depth, int arity, json_t **out)
{
	/* each element takes at least one byte: a cheap bound against huge arities */
	if (check_room(len, *index, arity) != 0)
		return GI_EPARSE;
	json_t *arr = json_array();
	for (int i = 0; i < arity; i++) {
		json_t *item = NULL;
		int rc = decode(buf, len, index, depth + 1, &item);
		if (rc != 0) {
			json_decref(arr);
			return rc;
		}
		json_array_append_new(arr, item);
	}
	*out = arr;
	return 0;
}

static int decode_map(const char *buf, int len, int *index, int depth, json_t **out)
{
	int arity = 0;
	if (ei_decode_map_header(buf, index, &arity) < 0 ||
	    check_room(len, *index, 2L * arity) != 0)
		return GI_EPARSE;
	json_t *obj = json_object();
	for (int i = 0; i < arity; i++) {
		json_t *key = NULL, *value = NULL;
		const char *key_text = NULL;
		size_t key_len = 0;
		int rc = header_fits(buf, *index, len);
		/* UTF-8 atom keys (all of ours) straight from the buffer; true,
		 * false, null and undefined are not strings: dropped, as any
		 * key that does not decode to one */
		if (rc == 0 && atom_utf8_bytes(buf, index, &key_text, &key_len)) {
			if (text_is(key_text, key_len, "true") ||
			    text_is(key_text, key_len, "false") ||
			    text_is(key_text, key_len, "null") ||
			    text_is(key_text, key_len, "undefined") ||
			    !gi_utf8_valid(key_text, key_len))
				key_text = NULL;
		} else if (rc == 0) {
			rc = decode(buf, len, index, depth + 1, &key);
			if (rc == 0 && json_is_string(key)) {
				key_text = json_string_value(key);
				key_len = json_string_length(key);
			}
		}
		if (rc == 0)
			rc = decode(buf, len, index, depth + 1, &value);
		if (rc != 0) {
			json_decref(key);
			json_decref(obj);
			return rc;
		}
		if (key_text) /* a C string's key, as json_object_set_new took it */
			json_object_setn_new_nocheck(obj, key_text, strnlen(key_text, key_len),
			                             value);
		else
			json_decref(value);
		json_decref(key);
	}
	*out = obj;
	return 0;
}

static int decode(const char *buf, int len, int *index, int depth, json_t **out)
{
	*out = NULL;
	if (depth > TERM_MAX_DEPTH || header_fits(buf, *index, len) != 0)
		return GI_EPARSE;
	int type = 0, size = 0;
	if (ei_get_type(buf, index, &type, &size) < 0)
		return GI_EPARSE;
	switch (type) {
	case ERL_SMALL_INTEGER_EXT:
	case ERL_INTEGER_EXT:
	case ERL_SMALL_BIG_EXT:
	case ERL_LARGE_BIG_EXT: {
		long long v = 0;
		unsigned long long u = 0;
		int save = *index;
		if (ei_decode_longlong(buf, index, &v) == 0) {
			*out = json_integer(v);
		} else if ((*index = save, ei_decode_ulonglong(buf, index, &u) == 0)) {
			*out = json_real((double)u);
		} else {
			*index = save;
			if (ei_skip_term(buf, index) < 0 || *index > len)
				return GI_EPARSE;
			*out = json_null();
		}
		return 0;
	}
	case ERL_FLOAT_EXT:
	case NEW_FLOAT_EXT: {
		double d = 0;
		if (ei_decode_double(buf, index, &d) < 0)
			return GI_EPARSE;
		*out = json_real(d);
		if (!*out)
			*out = json_null(); /* NaN or infinity cannot be JSON */
		return 0;
	}
	case ERL_ATOM_EXT:
	case ERL_SMALL_ATOM_EXT:
	case ERL_ATOM_UTF8_EXT:
	case ERL_SMALL_ATOM_UTF8_EXT:
		return decode_atom(buf, index, out);
	case ERL_BINARY_EXT:
		return decode_binary(buf, len, index, size, out);
	case ERL_STRING_EXT:
		return decode_string_list(buf, len, index, size, out);
	case ERL_NIL_EXT:
		if (ei_decode_list_header(buf, index, &size) < 0)
			return GI_EPARSE;
		*out = json_array();
		return 0;
	case ERL_LIST_EXT: {
		int arity = 0;
		if (ei_decode_list_header(buf, index, &arity) < 0)
			return GI_EPARSE;
		int rc = decode_sequence(buf, len, index, depth, arity, out);
		if (rc != 0)
			return rc;
		/* the tail: [] for a proper list, else an improper tail we drop */
		json_t *tail = NULL;
		if (decode(buf, len, index, depth + 1, &tail) != 0) {
			json_decref(*out);
			*out = NULL;
			return GI_EPARSE;
		}
		json_decref(tail);
		return 0;
	}
	case ERL_SMALL_TUPLE_EXT:
	case ERL_LARGE_TUPLE_EXT: {
		int arity = 0;
		if (ei_decode_tuple_header(buf, index, &arity) < 0)
			return GI_EPARSE;
		return decode_sequence(buf, len, index, depth, arity, out);
	}
	case ERL_MAP_EXT:
		return decode_map(buf, len, index, depth, out);
	case ERL_PID_EXT:
	case ERL_NEW_PID_EXT: {
		erlang_pid pid;
		if (ei_decode_pid(buf, index, &pid) < 0)
			return GI_EPARSE;
		char text[64];
		snprintf(text, sizeof(text), "<0.%u.%u>", pid.num, pid.serial);
		*out = json_string(text);
		return 0;
	}
	default:
		return GI_EPARSE;
	}
}

int obs_term_to_json(const char *buf, int len, int *index, json_t **out)
{
	*out = NULL;
	int rc = decode(buf, len, index, 0, out);
	if (rc != 0 || *index > len) {
		json_decref(*out);
		*out = NULL;
		return GI_EPARSE;
	}
	return 0;
}
