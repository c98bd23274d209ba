/*
 * obs_store.c - the observation store's front: picks the backend from the
 * location, forwards each call to the backend's table of operations
 * (obs_store_int.h), and holds what both backends must compute the same way
 * (the gap walk, snapshots gathered into one array).
 */
#include "store/obs_store_int.h"

#include <string.h>

#include "base/error.h"
#include "base/str.h"

bool obs_store_location_is_postgres(const char *location)
{
	return location &&
	       (GI_STR_STARTS(location, "postgres://") || GI_STR_STARTS(location, "postgresql://"));
}

void obs_store_location_redact(const char *location, char *buf, size_t n)
{
	if (n == 0)
		return;
	buf[0] = '\0';
	if (!location)
		return;
	/* scheme://user:password@host... : the password is between the first ':'
	 * after the scheme and the last '@' of the authority. */
	const char *auth = strstr(location, "://");
	const char *end = auth ? auth + 3 + strcspn(auth + 3, "/?") : NULL;
	const char *at = NULL;
	for (const char *p = auth ? auth + 3 : NULL; p && p < end; p++)
		if (*p == '@')
			at = p;
	const char *colon = at ? memchr(auth + 3, ':', (size_t)(at - (auth + 3))) : NULL;
	size_t out = 0;
	for (const char *p = location; *p && out + 1 < n; p++) {
		if (colon && p == colon + 1) {
			for (const char *r = "***"; *r && out + 1 < n; r++)
				buf[out++] = *r;
			p = at - 1;
			continue;
		}
		buf[out++] = *p;
	}
	buf[out] = '\0';
	/* A password in the query string (password=...) is hidden too. */
	char *q = strchr(buf, '?');
	for (char *p = q ? strstr(q, "password=") : NULL; p; p = strstr(p, "password=")) {
		char *v = p + 9;
		size_t len = strcspn(v, "&");
		if (len > 3) {
			memcpy(v, "***", 3);
			memmove(v + 3, v + len, strlen(v + len) + 1);
		}
		p = v;
	}
}

int obs_store_open_location(const char *data_dir, const char *location, struct obs_store **out)
{
	*out = NULL;
	if (!location || !*location)
		return obs_sqlite_open(data_dir, out);
	if (obs_store_location_is_postgres(location))
		return obs_pg_open(location, out);
	return GI_EINVAL;
}

int obs_store_open(const char *data_dir, struct obs_store **out)
{
	return obs_sqlite_open(data_dir, out);
}

const char *obs_store_backend(const struct obs_store *st)
{
	return st->ops->name;
}

void obs_store_close(struct obs_store *st)
{
	if (st)
		st->ops->close(st);
}

int obs_store_snapshot_add(struct obs_store *st, const char *session_id, const char *node,
                           long long seq, json_t *snapshot, bool *duplicate)
{
	return st->ops->snapshot_add(st, session_id, node, seq, snapshot, duplicate);
}

int obs_store_finalize(struct obs_store *st, json_t *finalize)
{
	return st->ops->finalize(st, finalize);
}

int obs_store_snapshots_each(struct obs_store *st, const char *session_id, long *count,
                             int (*fn)(void *ctx, json_t *snapshot), void *ctx)
{
	return st->ops->snapshots_each(st, session_id, count, fn, ctx);
}

static int snapshot_append(void *ctx, json_t *snapshot)
{
	json_array_append(ctx, snapshot);
	return 0;
}

int obs_store_snapshots(struct obs_store *st, const char *session_id, json_t **out)
{
	json_t *arr = json_array();
	int rc = obs_store_snapshots_each(st, session_id, NULL, snapshot_append, arr);
	if (rc) {
		json_decref(arr);
		arr = NULL;
	}
	*out = arr;
	return rc;
}

int obs_store_gaps(struct obs_store *st, const char *session_id, long long interval_ms,
                   long long next_seq, json_t **gaps_out, long long *missing_out)
{
	return st->ops->gaps(st, session_id, interval_ms, next_seq, gaps_out, missing_out);
}

int obs_store_observation_get(struct obs_store *st, const char *session_id, json_t **out)
{
	return st->ops->observation_get(st, session_id, out);
}

int obs_store_observations_list(struct obs_store *st, int limit, json_t **out)
{
	return st->ops->observations_list(st, limit, out);
}

void obs_store_owner_set(struct obs_store *st, const char *owner)
{
	if (st)
		gi_strlcpy(st->owner, owner ? owner : "", sizeof(st->owner));
}

int obs_store_interrupt_running(struct obs_store *st, const char *reason, int *count)
{
	return st->ops->interrupt_running(st, reason, count);
}

int obs_store_running_list(struct obs_store *st, json_t **out)
{
	return st->ops->running_list(st, out);
}

int obs_store_profile_add(struct obs_store *st, const char *session_id, const char *node,
                          const char *project, json_t *profile, long long *id_out)
{
	return st->ops->profile_add(st, session_id, node, project, profile, id_out);
}

int obs_store_profile_get(struct obs_store *st, long long id, json_t **out)
{
	return st->ops->profile_get(st, id, out);
}

int obs_store_profiles_list(struct obs_store *st, int limit, json_t **out)
{
	return st->ops->profiles_list(st, limit, out);
}

int obs_store_project_put(struct obs_store *st, const char *path, json_t *summary)
{
	return st->ops->project_put(st, path, summary);
}

int obs_store_projects_list(struct obs_store *st, json_t **out)
{
	return st->ops->projects_list(st, out);
}

/* ---- shared by the backends ---- */

static void gap_add(json_t *gaps, long long after, long long before, long long from_ms,
                    long long to_ms, long long missing, const char *cause)
{
	json_t *g = json_pack("{s:I, s:I, s:I, s:s}", "after_seq", (json_int_t)after, "before_seq",
	                      (json_int_t)before, "missing", (json_int_t)missing, "cause", cause);
	json_object_set_new(g, "from_ms", from_ms >= 0 ? json_integer(from_ms) : json_null());
	json_object_set_new(g, "to_ms", to_ms >= 0 ? json_integer(to_ms) : json_null());
	json_array_append_new(gaps, g);
}

void obs_gaps_init(struct obs_gaps *g, long long interval_ms)
{
	g->gaps = json_array();
	g->interval_ms = interval_ms;
	g->prev_seq = -1;
	g->prev_ts = -1;
	g->missing = 0;
}

void obs_gaps_row(struct obs_gaps *g, long long seq, long long ts)
{
	long long by_seq = seq - g->prev_seq - 1;
	long long by_time = 0;
	if (g->prev_seq >= 0 && g->interval_ms > 0 && ts >= 0 && g->prev_ts >= 0 &&
	    ts - g->prev_ts > 2 * g->interval_ms)
		by_time = (ts - g->prev_ts + g->interval_ms / 2) / g->interval_ms - 1;
	long long n = by_seq > by_time ? by_seq : by_time;
	if (n > 0) {
		gap_add(g->gaps, g->prev_seq, seq, g->prev_ts, ts, n,
		        by_seq >= by_time ? "seq" : "time");
		g->missing += n;
	}
	g->prev_seq = seq;
	g->prev_ts = ts;
}

void obs_gaps_finish(struct obs_gaps *g, long long next_seq, json_t **gaps_out,
                     long long *missing_out)
{
	if (next_seq > g->prev_seq + 1) {
		/* Taken after the last that arrived, and lost on the way. */
		gap_add(g->gaps, g->prev_seq, next_seq, g->prev_ts, -1, next_seq - g->prev_seq - 1,
		        "seq");
		g->missing += next_seq - g->prev_seq - 1;
	}
	*gaps_out = g->gaps;
	*missing_out = g->missing;
	g->gaps = NULL;
}

void obs_gaps_destroy(struct obs_gaps *g)
{
	json_decref(g->gaps);
	g->gaps = NULL;
}

long long obs_json_int_or(json_t *o, const char *k, long long dflt)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

const char *obs_json_str_or_null(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}
