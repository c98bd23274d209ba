/*
 * term.h - Erlang external term format to JSON, for the replies of the
 * target-side probes (mapping in term.c), and checked terms read in place
 * (obs_term): the same mapping, value by value, without building the JSON
 * of what is only looked at. Thread-safe (no shared state).
 */
#ifndef GIULIA_OBSERVE_TERM_H
#define GIULIA_OBSERVE_TERM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Decodes the term at buf[*index] (no version byte there) into JSON; *index
 * moves past it. *out is the caller's (json_decref). GI_EPARSE on a
 * malformed or too deeply nested term; never reads past buf[len - 1] for the
 * sizes it checks. */
int obs_term_to_json(const char *buf, int len, int *index, json_t **out);

/* A term checked whole once (obs_term_doc_parse: the rules and limits of
 * obs_term_to_json), then read in place. The doc records where each
 * container ends, so that stepping over a value costs nothing; it borrows
 * the buffer, and is reused from one parse to the next (one allocation,
 * grown as needed). */
struct obs_term_doc {
	const char *buf;
	int len;
	int *ends; /* by a container's first byte: the index past it */
	size_t cap;
};
/* A value in a doc, valid while the doc and its buffer are; `byte` >= 0 is
 * an element of a string list (a list of small integers sent as bytes). An
 * absent value (a key not there, an index past the end) reads as JSON reads
 * a missing member: not present, no type but null, number 0, no items. */
struct obs_term {
	const struct obs_term_doc *doc;
	int at;
	int byte;
};
struct obs_term_iter {
	const struct obs_term_doc *doc;
	int next, left;
	bool bytes;
};
/* Scratch for obs_term_text: an atom's UTF-8 text, or a pid's. */
#define OBS_TERM_SCRATCH 1024

/* Checks the term at buf[*index] (as obs_term_to_json, GI_EPARSE when it
 * would fail) and gives its root; *index moves past it. */
int obs_term_doc_parse(struct obs_term_doc *d, const char *buf, int len, int *index,
                       struct obs_term *root);
void obs_term_doc_destroy(struct obs_term_doc *d);

bool obs_term_present(struct obs_term t);
/* The type the value has in JSON (obs_term_to_json's mapping). */
json_type obs_term_type(struct obs_term t);
/* The value as JSON (a new reference), NULL when absent. */
json_t *obs_term_json(struct obs_term t);
/* json_number_value and json_integer_value of the value's JSON. */
double obs_term_number(struct obs_term t);
long long obs_term_integer(struct obs_term t);
/* A string value's bytes and length (as json_string_value and
 * json_string_length give them, not NUL-terminated): in the buffer, or in
 * `scratch` (OBS_TERM_SCRATCH bytes); NULL when it is not a string. */
const char *obs_term_text(struct obs_term t, char *scratch, size_t *len);
/* A string value as C reads json_string_value: up to its first NUL, copied
 * into `out`; false when it is not a string or does not fit in `cap`. */
bool obs_term_cstr(struct obs_term t, char *out, size_t cap);
/* A map's member `key` (keys as obs_term_to_json takes them; the last of
 * equal keys); absent when `map` is not a map or has no such key. */
struct obs_term obs_term_get(struct obs_term map, const char *key);
/* The members `keys` (NULL-terminated, at most OBS_TERM_FIELDS_MAX) of a
 * map in one pass, into out[i] as obs_term_get gives each. */
#define OBS_TERM_FIELDS_MAX 24
void obs_term_fields(struct obs_term map, const char *const *keys, struct obs_term *out);
/* The items of a list or tuple (an array in JSON; none for anything else). */
struct obs_term_iter obs_term_items(struct obs_term seq);
bool obs_term_next(struct obs_term_iter *it, struct obs_term *out);
size_t obs_term_size(struct obs_term seq);
struct obs_term obs_term_item(struct obs_term seq, size_t index);

#endif
