/*
 * runtime.c - process-wide set-up (see runtime.h).
 */
#include "base/runtime.h"

#include <jansson.h>
#include <pthread.h>

#include "base/alloc.h"

static pthread_once_t runtime_once = PTHREAD_ONCE_INIT;

static void runtime_setup(void)
{
	/* gi_malloc aborts rather than return NULL; gi_free is free(), so blocks
	 * jansson allocated before this call are still released correctly. */
	json_set_alloc_funcs(gi_malloc, gi_free);
}

void gi_runtime_init(void)
{
	pthread_once(&runtime_once, runtime_setup);
}
