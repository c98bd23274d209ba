/*
 * libFuzzer target for the Elixir reader: ex_parse over arbitrary bytes must
 * return 0 or an error code, never crash, and every fact it returns must be
 * readable (each string is touched, so that ASan sees a bad pointer).
 * needs:
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/runtime.h"
#include "source/elixir.h"
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
	if (ex_parse("fuzz.ex", (const char *)data, size, &f) != 0)
		return 0;
	for (size_t i = 0; i < f->modules.len; i++) {
		const struct facts_module *m = gi_vec_get(&f->modules, i);
		touch(m->name);
		touch(m->protocol);
		touch(m->impl_for);
		for (size_t k = 0; k < m->refs.len; k++)
			touch(((const struct facts_ref *)gi_vec_get(&m->refs, k))->target);
		for (size_t k = 0; k < m->struct_fields.len; k++)
			touch(GI_VEC_AT(&m->struct_fields, const char *, k));
		for (size_t k = 0; k < m->callbacks.len; k++)
			touch(GI_VEC_AT(&m->callbacks, const char *, k));
		for (size_t k = 0; k < m->functions.len; k++) {
			const struct facts_function *fn = gi_vec_get(&m->functions, k);
			touch(fn->name);
			touch(fn->delegate_to);
			for (size_t j = 0; j < fn->calls.len; j++) {
				const struct facts_call *c = gi_vec_get(&fn->calls, j);
				touch(c->module);
				touch(c->function);
			}
		}
	}
	for (size_t i = 0; i < f->errors.len; i++)
		touch(((const struct facts_error *)gi_vec_get(&f->errors, i))->message);
	facts_file_free(f);
	return 0;
}
