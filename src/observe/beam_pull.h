/*
 * beam_pull.h - object code pulled from a live node for `giulia index --node`:
 * the modules of the named applications are fetched over the observer's
 * deadline-bounded connection (observe/dist.h, code:get_object_code/1 on the
 * target; nothing is loaded there) and cached as DEST/APP/ebin/MODULE.beam,
 * which the indexer then reads like any --beam directory.
 *
 * Thread-safe: each call opens and closes its own connection.
 */
#ifndef GIULIA_OBSERVE_BEAM_PULL_H
#define GIULIA_OBSERVE_BEAM_PULL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BEAM_PULL_MODULES_MAX 2000

struct beam_pull_summary {
	int apps;       /* applications found on the node */
	int modules;    /* modules listed by them */
	int written;    /* .beam files created or changed in the cache */
	int unchanged;  /* already cached with the same bytes (mtime kept) */
	int missing;    /* listed but without object code on the node */
	bool truncated; /* beam_pull_modules stopped at its cap or deadline */
	/* With beam_pull_request.storage: where the node keeps its tables
	 * (dist_storage_facts' lines; NULL when not asked or not answered),
	 * the caller's, freed with dist_strings_free(storage, storage_count). */
	char **storage;
	size_t storage_count;
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

/* Receives one pulled module: its atom text ("Elixir.Foo", "lists") and
 * object code, both borrowed for the call. A non-zero return stops the pull
 * and is returned by beam_pull_modules. */
typedef int (*beam_pull_sink)(void *ctx, const char *atom, const unsigned char *code, size_t len);

struct beam_pull_request {
	const char *const *modules; /* atom texts; each is only looked up on the node */
	size_t count;
	bool siblings;       /* also the other modules of their applications (except
	                        OTP's and Elixir's own: kernel, stdlib, elixir, ...) */
	size_t max_modules;  /* cap on modules pulled; 0 or above: BEAM_PULL_MODULES_MAX */
	int64_t deadline_ms; /* gi_clock_mono_ms() after which no more is pulled; 0: none */
	bool storage;        /* also read where the node keeps its tables (summary.storage) */
};

/* Pulls the object code of rq->modules (and, with rq->siblings, of their
 * applications' modules, up to the cap) from `node` and hands each to
 * `sink`, instead of writing files. Modules without object code on the node
 * are counted as missing; names that cannot be module names are skipped.
 * Reaching the cap or the deadline is not an error (summary->truncated).
 * summary->modules counts the modules asked for, written those delivered,
 * apps the applications whose siblings were added. Returns 0 or a GI_E*
 * code with a message in `err` (never containing the cookie). */
int beam_pull_modules(const char *node, const char *cookie, int timeout_ms,
                      const struct beam_pull_request *rq, beam_pull_sink sink, void *ctx,
                      struct beam_pull_summary *summary, char *err, size_t err_size);

#endif
