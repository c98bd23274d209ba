/*
 * libFuzzer target for the EEx template reader: eex_parse over arbitrary
 * bytes (unclosed tags, `<%%` escapes, `<%#` comments, code that is no
 * expression) must return 0 or an error code, never crash, and every fact
 * it returns must be readable (each string is touched, so that ASan sees a
 * bad pointer).
 * needs:
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/runtime.h"
#include "source/eex.h"
#include "source/facts.h"

static volatile size_t sink;

static void touch(const char *s)
{
	if (s)
		sink += strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	struct facts_file *f = NULL;
	if (eex_parse("fuzz.html.eex", (const char *)data, size, &f) != 0)
		return 0;
	for (size_t i = 0; i < f->modules.len; i++) {
		const struct facts_module *m = gi_vec_get(&f->modules, i);
		touch(m->name);
		for (size_t k = 0; k < m->functions.len; k++) {
			const struct facts_function *fn = gi_vec_get(&m->functions, k);
			touch(fn->name);
			touch(fn->generated_by);
			for (size_t j = 0; j < fn->calls.len; j++) {
				const struct facts_call *c = gi_vec_get(&fn->calls, j);
				touch(c->module);
				touch(c->function);
			}
		}
	}
	facts_file_free(f);
	return 0;
}
