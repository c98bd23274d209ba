/*
 * runtime.h - process-wide set-up that every program linking libgiulia runs
 * once, before its first other call into the library: the `giulia` binary,
 * the test harness, the fuzz targets and the benchmark programs.
 *
 * Today it puts jansson inside the project's allocation policy (base/alloc.h):
 * jansson then allocates through gi_malloc and never sees NULL, so a
 * json_object_set_new() or json_array_append_new() can no longer drop a value
 * silently on out-of-memory; the process aborts with a message instead.
 *
 * Thread-safe: concurrent and repeated calls run the set-up exactly once
 * (pthread_once). It must still happen before any thread uses jansson, since
 * jansson reads its allocator without synchronisation: call it first in main.
 */
#ifndef GIULIA_BASE_RUNTIME_H
#define GIULIA_BASE_RUNTIME_H

/* Runs the process-wide set-up once; later calls do nothing. */
void gi_runtime_init(void);

#endif
