/*
 * beam_pull.h - object code pulled from a live node for `giulia index --node`:
 * the modules of the named applications are fetched over the observer's
 * deadline-bounded connection (observe/dist.h, code:get_object_code/1 on the
 * target; nothing is loaded there) and cached as DEST/APP/ebin/MODULE.beam,
 * which the indexer then reads like any --beam directory.
 *
 * Thread-safe: each call opens and closes its own connection.
 */
#ifndef GIULIA_SOURCE_BEAM_PULL_H
#define GIULIA_SOURCE_BEAM_PULL_H

#include <stddef.h>

struct beam_pull_summary {
	int apps;      /* applications found on the node */
	int modules;   /* modules listed by them */
	int written;   /* .beam files created or changed in the cache */
	int unchanged; /* already cached with the same bytes (mtime kept) */
	int missing;   /* listed but without object code on the node */
};

/* Connects to `node` (cookie: `cookie`, else $GIULIA_COOKIE, else
 * ~/.erlang.cookie; never printed), and caches the object code of every
 * module of each application in the NULL-terminated `apps` under `dest`
 * (created). A file is rewritten only when its bytes changed, so that
 * re-indexing stays incremental. Application and module names that cannot
 * be file names (a '/', a leading '.') are refused or skipped. Returns 0 or
 * a GI_E* code (the dist ones: GI_EEPMD, GI_ENONODE, GI_ECOOKIE,
 * GI_ETIMEOUT, ...; GI_ENOTFOUND for an application the node does not
 * know) with a message for users in `err`. */
int beam_pull_apps(const char *node, const char *cookie, int timeout_ms, const char *const *apps,
                   const char *dest, struct beam_pull_summary *summary, char *err, size_t err_size);

#endif
