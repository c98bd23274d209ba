/*
 * Fuzz target: Erlang external terms from a node (src/observe/term.c).
 * The input is a term without version byte, decoded to JSON and checked in
 * place (obs_term_doc_parse), which must agree; what checks is also read as
 * a sample reply (src/observe/snapshot.c), call_time section included, and
 * through every in-place accessor.
 * needs:
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/runtime.h"
#include "observe/snapshot.h"
#include "observe/term.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	if (size > 1 << 20)
		return 0;
	/* an exact-size copy so that any read past the end is caught */
	char *copy = gi_malloc(size ? size : 1);
	if (size)
		memcpy(copy, data, size);
	int index = 0, checked = 0;
	json_t *out = NULL;
	int rc = obs_term_to_json(copy, (int)size, &index, &out);
	struct obs_term_doc doc = {0};
	struct obs_term root;
	if ((obs_term_doc_parse(&doc, copy, (int)size, &checked, &root) == 0) != (rc == 0) ||
	    (rc == 0 && checked != index))
		abort(); /* the two readings of one term disagree */
	if (rc == 0) {
		json_t *again = obs_term_json(root);
		if (!json_equal(out, again) && !(json_is_null(out) && json_is_null(again)))
			abort();
		json_decref(again);
		json_decref(obs_snapshot_build(root, "n@h", NULL, 0, 0, NULL));
		struct obs_term_iter it = obs_term_items(root);
		struct obs_term item;
		char scratch[OBS_TERM_SCRATCH];
		size_t len;
		while (obs_term_next(&it, &item)) {
			(void)obs_term_number(item);
			(void)obs_term_text(item, scratch, &len);
			(void)obs_term_get(item, "window_ms");
		}
		json_decref(out);
	}
	obs_term_doc_destroy(&doc);
	gi_free(copy);
	return 0;
}
