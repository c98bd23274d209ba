/*
 * fuse_int.h - what the files of src/fuse share and nobody else needs:
 * tolerant JSON readers (profiles and snapshots come from outside, so every
 * field may be missing, null or of the wrong type) and number writers.
 */
#ifndef GIULIA_FUSE_FUSE_INT_H
#define GIULIA_FUSE_FUSE_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "base/buf.h"
#include "base/json_read.h"
#include "observe/snapshot_view.h"

/* Caps on sizes that come from input. */
#define FUSE_MAX_SNAPSHOTS 200000
#define FUSE_MAX_LIST      1000   /* entries read from one list of one snapshot */
#define FUSE_MAX_PROCESSES 100000 /* distinct pids tracked over a session */
#define FUSE_MAX_FUNCTIONS 20000  /* distinct traced functions */
#define FUSE_MAX_SERIES    240    /* points kept per time series */
#define FUSE_MAX_NAME      512    /* longest module/function/pid text kept */

/* A JSON number for `x`: null for NAN, an integer when integral, else a
 * real rounded to 4 decimals. New reference. */
json_t *fuse_json_num(double x);

/* A JSON string for `s`, or null for NULL. New reference. */
json_t *fuse_json_str(const char *s);

/* Human forms for reports: "61.2 MB", "1.23 M", "42.0%". */
void fuse_fmt_bytes(double bytes, char *out, size_t size);
void fuse_fmt_count(double n, char *out, size_t size);
void fuse_fmt_pct(double share, char *out, size_t size);

/* Whether `module` (display name, docs/SNAPSHOT.md) is process plumbing:
 * code that says how a process was started or how it waits (proc_lib, the
 * generic behaviours' loops, a spawn(fn) trampoline, erl_eval, Elixir's
 * script compiler, Task), never what the application does. Attribution
 * sees through these, and no recommendation is ever about one of them. */
bool fuse_module_is_wrapper(const char *module);

/* Platform modules (platform.c): OTP's and Elixir's own, recognised by
 * name where the graph cannot tell (it marks modules outside the project
 * "external"). A recommendation never asks to change one of them: what to
 * change is the project's use of it. Wrappers are platform modules too. */
bool fuse_module_is_platform(const char *module);
/* Whether `module` (display form) is part of a logging framework: Elixir's
 * Logger (and Logger.*), OTP's :logger and its :logger_* handlers,
 * :error_logger. Platform knowledge, never an application's name. */
bool fuse_module_is_logger(const char *module);

/* What a database function does to the data (datalayer.c, docs/RULES.md). */
enum fuse_effect {
	FUSE_EFFECT_NONE,    /* connection management: not an operation */
	FUSE_EFFECT_READ,    /* reads only */
	FUSE_EFFECT_WRITE,   /* changes data */
	FUSE_EFFECT_UNKNOWN, /* the statement or the fun decides */
};

/* Whether `module` (display form) is a database driver or Ecto's SQL/Repo
 * machinery of the table in datalayer.c. */
bool fuse_driver_module(const char *module);
/* The effect of `module`.`function` when the module is in the table: sets
 * *effect and returns true; false for any other module. */
bool fuse_driver_effect(const char *module, const char *function, enum fuse_effect *effect);
/* The effect of an Ecto.Repo API function of that name (all, get, insert,
 * ...), or FUSE_EFFECT_NONE when it is not one. */
enum fuse_effect fuse_repo_api_effect(const char *function);
/* Where a driver's data lives (docs/RULES.md, "Where data lives"). */
enum fuse_storage {
	FUSE_STORAGE_NONE,     /* not a driver of the table */
	FUSE_STORAGE_EXTERNAL, /* outside the VM: sockets or ports (SQL, Redis, Mongo) */
	FUSE_STORAGE_MNESIA,   /* mnesia: ETS for ram/disc_copies, DETS for disc_only */
	FUSE_STORAGE_DETS,     /* a DETS file behind its server process */
};
/* Where the data of driver `module` (display form) lives. */
enum fuse_storage fuse_driver_storage(const char *module);
/* "external", "mnesia", "dets", "none" (static strings). */
const char *fuse_storage_name(enum fuse_storage s);
/* "read", "write", "unknown", "none" (static strings). */
const char *fuse_effect_name(enum fuse_effect e);

/* ---- the executing view (executing.c) ---------------------------------- */

/* Hot lists keep entries with at least this share of the node's reductions. */
#define FUSE_HOT_FLOOR 0.005
/* Below this share of the node's work explained by the executing view, the
 * profile says first that most of the work is unattributed. */
#define FUSE_EXPLAINED_LOW 0.5

/* A module or a function of the executing view: the reductions its samples
 * stand for, how many samples, and whether it belongs to the project. */
struct fuse_exec_entry {
	const char *module, *function; /* function NULL for a module entry */
	long arity;
	double reductions, samples;
	bool project;
};

struct fuse_executing;

/* A new, empty accumulator (fuse_executing_free). Not thread-safe. */
struct fuse_executing *fuse_executing_new(void);
void fuse_executing_free(struct fuse_executing *x);
/* Adds the sampler section of `v` (borrowed), if any. */
void fuse_executing_take(struct fuse_executing *x, const struct obs_view *v);
/* Whether any snapshot carried executing samples. */
bool fuse_executing_has_samples(const struct fuse_executing *x);
/* What the target said of `module`'s object code ("otp", "elixir",
 * "preloaded", "other", "unknown"), or NULL when it did not say (borrowed). */
const char *fuse_executing_origin(const struct fuse_executing *x, const char *module);
/* Attributes every stack once: to its first frame whose module
 * `in_project` accepts (wrappers are skipped whatever it says), else to its
 * first frame that is not a wrapper, else to plumbing. */
void fuse_executing_attribute(struct fuse_executing *x,
                              bool (*in_project)(void *ctx, const char *module), void *ctx);
/* Whether `pred` accepts the module of any sampled frame. */
bool fuse_executing_any_module(const struct fuse_executing *x,
                               bool (*pred)(void *ctx, const char *module), void *ctx);
/* The attributed modules / functions, most reductions first (borrowed,
 * valid until fuse_executing_free). */
size_t fuse_executing_modules(const struct fuse_executing *x,
                              const struct fuse_exec_entry *const **out);
size_t fuse_executing_functions(const struct fuse_executing *x,
                                const struct fuse_exec_entry *const **out);
/* The profile's "executing" summary (docs/PROFILE.md); new reference. */
json_t *fuse_executing_summary(const struct fuse_executing *x, double total_reductions,
                               const char *project_rule);
/* Splits "Mod.fun/arity" (":lists.foldl/3", "A.B.-run/1-fun-0-/0"); -1 when
 * `frame` is not of that form or a part does not fit. */
int fuse_frame_split(const char *frame, char *module, size_t msize, char *function, size_t fsize,
                     long *arity);

struct fuse_view_hotspot;
/* A trace hotspot's calls as the reports print them: the count; under a
 * budget, an estimate with the half-width of its 95% interval ("29.7k
 * +/-3%"); an estimate the budget cannot stand behind (`firm` false) as
 * its range, marked "?1.2k-9.8k". Returns false for that last case, so
 * that a report can say how to count exactly (--overhead 0). */
bool fuse_fmt_hotspot_calls(const struct fuse_view_hotspot *f, char *buf, size_t size);

/* Appends `s` to `out` escaped for HTML text and attributes. */
int fuse_html_escape(struct gi_buf *out, const char *s);

#endif
