/*
 * term_util.c - JSON replies as external terms (see term_util.h).
 */
#include "term_util.h"

#include <ei.h>
#include <string.h>

#include "harness.h"
#include "observe/snapshot.h"
#include "observe/term.h"

static int encode_string(ei_x_buff *x, const char *s, size_t len)
{
	static const char *const words[] = {"true", "false", "null", "undefined", NULL};
	bool word = false;
	for (const char *const *w = words; *w; w++)
		word = word || (strlen(*w) == len && memcmp(*w, s, len) == 0);
	if (len < 256 && !word && !memchr(s, '\0', len))
		return ei_x_encode_atom_len_as(x, s, (int)len, ERLANG_UTF8, ERLANG_UTF8);
	return ei_x_encode_binary(x, s, (long)len);
}

/* `tuple`: an array becomes a tuple rather than a list. */
static int encode(ei_x_buff *x, json_t *v, bool tuple)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		if (ei_x_encode_map_header(x, (long)json_object_size(v)) < 0)
			return -1;
		const char *key;
		json_t *item;
		json_object_foreach(v, key, item)
		{
			if (ei_x_encode_atom(x, key) < 0 || encode(x, item, false) < 0)
				return -1;
		}
		return 0;
	}
	case JSON_ARRAY: {
		size_t n = json_array_size(v);
		int rc = tuple ? ei_x_encode_tuple_header(x, (long)n)
		               : ei_x_encode_list_header(x, (long)n);
		for (size_t i = 0; rc == 0 && i < n; i++)
			rc = encode(x, json_array_get(v, i), false);
		return rc == 0 && !tuple && n > 0 ? ei_x_encode_empty_list(x) : rc;
	}
	case JSON_STRING:
		return encode_string(x, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return ei_x_encode_longlong(x, json_integer_value(v));
	case JSON_REAL:
		return ei_x_encode_double(x, json_real_value(v));
	case JSON_TRUE:
		return ei_x_encode_atom(x, "true");
	case JSON_FALSE:
		return ei_x_encode_atom(x, "false");
	default:
		return ei_x_encode_atom(x, "undefined");
	}
}

/* The term of `v`, checked into `doc` (its buffer in `x`). */
static struct obs_term checked(json_t *v, bool tuple, ei_x_buff *x, struct obs_term_doc *doc)
{
	ei_x_new(x);
	TH_ASSERT(encode(x, v, tuple) == 0);
	int index = 0;
	struct obs_term root;
	TH_ASSERT_OK(obs_term_doc_parse(doc, x->buff, x->index, &index, &root));
	TH_ASSERT_INT_EQ(index, x->index);
	return root;
}

json_t *ts_snapshot_build(json_t *reply, const char *node, const char *session_id, long seq,
                          int64_t timestamp_ms, json_t *extra_errors)
{
	ei_x_buff x;
	struct obs_term_doc doc = {0};
	struct obs_term root = checked(reply, false, &x, &doc);
	json_t *snap = obs_snapshot_build(root, node, session_id, seq, timestamp_ms, extra_errors);
	obs_term_doc_destroy(&doc);
	ei_x_free(&x);
	return snap;
}

char *ts_mfa_display(json_t *mfa)
{
	ei_x_buff x;
	struct obs_term_doc doc = {0};
	struct obs_term root = checked(mfa, true, &x, &doc);
	char *text = obs_mfa_display(root);
	obs_term_doc_destroy(&doc);
	ei_x_free(&x);
	return text;
}
