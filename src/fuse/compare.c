/*
 * compare.c - what changed between two profiles of the same node (before and
 * after a fix): metric deltas, hot modules that entered or left the hot list
 * (with share changes of those that stayed), recommendations resolved, new
 * or still present (matched by rule id and subject), and those that cannot
 * be called resolved because the second profile did not observe their
 * subject the same way (not traced, too few snapshots, another view).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "fuse/fuse.h"
#include "fuse/fuse_int.h"
#include "fuse/profile_view.h"

/* The compared metrics: `path` is what the comparison says it compared
 * (docs/PROFILE.md); the value is read from the typed view, at `stat`
 * (a struct fuse_view_stat in struct fuse_view_metrics) and `field` (a
 * double in it). */
#define METRIC(label, stat, field, kind)                      \
	{                                                     \
		label, "metrics." #stat "." #field, kind,     \
		    offsetof(struct fuse_view_metrics, stat), \
		    offsetof(struct fuse_view_stat, field)    \
	}
static const struct {
	const char *label, *path;
	int kind; /* 0 count, 1 bytes, 2 share */
	size_t stat, field;
} metrics[] = {
    METRIC("memory avg", memory_bytes, avg, 1),
    METRIC("memory peak", memory_bytes, peak, 1),
    METRIC("memory growth", memory_bytes, growth_bytes, 1),
    METRIC("processes avg", process_count, avg, 0),
    METRIC("processes peak", process_count, peak, 0),
    METRIC("run queue avg", run_queue, avg, 0),
    METRIC("run queue peak", run_queue, peak, 0),
    METRIC("utilisation avg", scheduler_utilisation, avg, 2),
    METRIC("utilisation peak", scheduler_utilisation, peak, 2),
    METRIC("reductions/s avg", reductions_per_second, avg, 0),
    METRIC("reductions/s peak", reductions_per_second, peak, 0),
};

static double metric_value(const struct fuse_view *v, size_t i)
{
	const char *stat = (const char *)&v->metrics + metrics[i].stat;
	return *(const double *)(const void *)(stat + metrics[i].field);
}

/* The logger processes' share of all reductions (processes.logger): 0
 * when no logger process was among the busiest, NAN without the list. */
static double logger_share(const struct fuse_view *v)
{
	double sum = 0;
	if (!v->has_loggers)
		return NAN;
	for (size_t i = 0; i < v->loggers.len; i++) {
		double x = v->loggers.items[i].reductions_share;
		if (isfinite(x))
			sum += x;
	}
	return sum;
}

/* Signals the verdict weighs, all "lower is better": a change counts when
 * it is at least VERDICT_RELATIVE of the before value and at least `floor`
 * in absolute terms (noise of a shared machine stays out). */
#define VERDICT_RELATIVE 0.2
static const struct {
	const char *label, *path;
	double floor;
} signals[] = {
    {"run queue avg", "metrics.run_queue.avg", 0.1},
    {"logger share", NULL, 0.01},
    {"blocked callers", "executing.blocked.share_of_samples", 0.01},
    {"blocked in log calls", "executing.blocked.logger_share_of_samples", 0.01},
};

static double signal_value(const struct fuse_view *v, size_t i)
{
	switch (i) {
	case 0:
		return v->metrics.run_queue.avg;
	case 1:
		return logger_share(v);
	case 2:
		return v->executing.blocked.share_of_samples;
	default:
		return v->executing.blocked.logger_share_of_samples;
	}
}

/* The verdict: "better", "worse", "mixed" or "unchanged", with the reasons
 * (the signals that moved, and the recommendations resolved and new). */
static json_t *verdict(const struct fuse_view *a, const struct fuse_view *b, size_t resolved,
                       size_t added, size_t remaining, size_t not_comparable)
{
	int better = 0, worse = 0;
	json_t *reasons = json_array();
	/* The work the node did: a run queue that moves with it (a fix that
	 * lets the node serve more) is not a change of its own. */
	double wa = a->metrics.reductions_per_second.avg;
	double wb = b->metrics.reductions_per_second.avg;
	double work = isfinite(wa) && isfinite(wb) && wa > 0 ? (wb - wa) / wa : NAN;
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		double x = signal_value(a, i), y = signal_value(b, i);
		if (!isfinite(x) || !isfinite(y) || fabs(y - x) < signals[i].floor ||
		    (x != 0 && fabs(y - x) / fabs(x) < VERDICT_RELATIVE))
			continue;
		char text[200];
		bool down = y < x;
		bool with_work = i == 0 && isfinite(work) && fabs(work) >= VERDICT_RELATIVE &&
		                 (work > 0) == !down;
		if (with_work) {
			snprintf(
			    text, sizeof(text),
			    "%s %s with the work done (%.3g -> %.3g, reductions/s %+.0f%%): not "
			    "counted",
			    signals[i].label, down ? "down" : "up", x, y, work * 100);
			json_array_append_new(reasons, json_string(text));
			continue;
		}
		snprintf(text, sizeof(text), "%s %s (%.3g -> %.3g)", signals[i].label,
		         down ? "down" : "up", x, y);
		json_array_append_new(reasons, json_string(text));
		if (down)
			better++;
		else
			worse++;
	}
	if (resolved > 0) {
		char text[64];
		snprintf(text, sizeof(text), "%zu recommendation%s resolved", resolved,
		         resolved == 1 ? "" : "s");
		json_array_append_new(reasons, json_string(text));
		better++;
	}
	if (added > 0) {
		char text[64];
		snprintf(text, sizeof(text), "%zu new recommendation%s", added,
		         added == 1 ? "" : "s");
		json_array_append_new(reasons, json_string(text));
		worse++;
	}
	if (not_comparable > 0) {
		char text[160];
		snprintf(text, sizeof(text),
		         "%zu recommendation%s not comparable (the second profile did not observe "
		         "%s the same way)",
		         not_comparable, not_comparable == 1 ? "" : "s",
		         not_comparable == 1 ? "its subject" : "their subjects");
		json_array_append_new(reasons, json_string(text));
	}
	const char *v = better && worse ? "mixed"
	                : better        ? "better"
	                : worse         ? "worse"
	                                : "unchanged";
	json_t *o = json_object();
	json_object_set_new(o, "verdict", json_string(v));
	json_object_set_new(o, "reasons", reasons);
	json_object_set_new(o, "remaining", json_integer((json_int_t)remaining));
	return o;
}

/* Whether names `list` holds `s`. */
static bool list_has(const struct fuse_view_names *list, const char *s)
{
	for (size_t i = 0; s && i < list->len; i++)
		if (strcmp(list->items[i], s) == 0)
			return true;
	return false;
}

/* Whether recommendation `r` carries `id`, as its own or as one merged
 * into it ("ids", docs/RULES.md: one finding per subject and remedy). */
static bool rec_has_id(const struct fuse_view_recommendation *r, const char *id)
{
	return (r->id && strcmp(r->id, id) == 0) || list_has(&r->ids, id);
}

/* Same subject, and an id in common: a finding merged with another in one
 * profile still matches its unmerged self in the other. */
static bool same_rec(const struct fuse_view_recommendation *x,
                     const struct fuse_view_recommendation *y)
{
	const char *ix = x->id, *iy = y->id;
	if (!ix || !iy)
		return false;
	bool common = rec_has_id(y, ix) || rec_has_id(x, iy);
	for (size_t i = 0; !common && i < x->ids.len; i++)
		common = rec_has_id(y, x->ids.items[i]);
	if (!common)
		return false;
	const char *sx = x->subject, *sy = y->subject;
	if (!sx || !sy)
		return sx == sy;
	return strcmp(sx, sy) == 0;
}

static bool has_rec(const struct fuse_view *v, const struct fuse_view_recommendation *rec)
{
	for (size_t i = 0; i < v->nrecommendations; i++)
		if (same_rec(&v->recommendations[i], rec))
			return true;
	return false;
}

/* The module of a subject "Mod" or "Mod.fun/arity", into `buf`. */
static const char *subject_module(const char *subject, char *buf, size_t size)
{
	snprintf(buf, size, "%s", subject ? subject : "");
	char *slash = strrchr(buf, '/');
	if (slash) {
		*slash = '\0';
		char *dot = strrchr(buf, '.');
		if (dot)
			*dot = '\0';
	}
	return buf;
}

/* Whether profile `b` observed what recommendation `rec` of profile `a`
 * rests on the way `a` did, so that its absence from `b` means it was
 * resolved; when not, why, in `why`. Counts need the subject traced again;
 * trends need as many snapshots as the rules ask; the hot modules need the
 * same view (executing or ownership) and a graph. */
static bool comparable(const struct fuse_view_recommendation *rec, const struct fuse_view *a,
                       const struct fuse_view *b, char *why, size_t size)
{
	double rule = rec->rule;
	double snaps = b->session.snapshot_count;
	const char *subject = rec->subject;
	const struct fuse_view_names *traced_a = &a->session.traced_modules;
	const struct fuse_view_names *traced_b = &b->session.traced_modules;
	char mod[FUSE_MAX_NAME];
	subject_module(subject, mod, sizeof(mod));
	why[0] = '\0';
	if (!isfinite(snaps) || snaps < 3) {
		snprintf(why, size, "the second profile has %.0f snapshots (the rules need 3)",
		         isfinite(snaps) ? snaps : 0);
		return false;
	}
	bool counted = rule == 3 || rule == 4 || (rule == 5 && subject && strchr(subject, '/'));
	if (counted && !list_has(traced_b, mod)) {
		snprintf(why, size, "%s was not traced in the second profile", mod);
		return false;
	}
	if (rule == 10) {
		const char *reader = rec->reader;
		if (!b->storage.present) {
			snprintf(why, size, "the second profile did not read the node's tables");
			return false;
		}
		if (reader && !list_has(traced_b, reader)) {
			snprintf(why, size, "%s, which read the table, was not traced", reader);
			return false;
		}
	}
	if (rule == 8) {
		bool any = false;
		for (size_t i = 0; i < traced_a->len; i++)
			any |= list_has(traced_b, traced_a->items[i]);
		if (traced_a->len > 0 && !any) {
			snprintf(why, size,
			         "none of the first profile's traced modules was traced");
			return false;
		}
	}
	if (rule == 5 && subject && !strchr(subject, '/')) {
		const char *ba = a->hot_modules_basis, *bb = b->hot_modules_basis;
		if (ba && bb && strcmp(ba, bb) != 0) {
			snprintf(why, size, "the hot modules are of another view (%s, then %s)", ba,
			         bb);
			return false;
		}
		if (!b->graph.answered) {
			snprintf(why, size, "the second profile has no knowledge graph");
			return false;
		}
	}
	return true;
}

static json_t *rec_brief(const struct fuse_view_recommendation *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "rule", fuse_json_num(r->rule));
	json_object_set_new(o, "id", fuse_json_str(r->id));
	json_object_set_new(o, "subject", fuse_json_str(r->subject));
	json_object_set_new(o, "priority", fuse_json_num(r->priority));
	json_object_set_new(o, "severity", fuse_json_str(r->severity));
	json_object_set_new(o, "finding", fuse_json_str(r->finding));
	return o;
}

static json_t *compare_views(const struct fuse_view *a, const struct fuse_view *b)
{
	json_t *c = json_object();
	json_t *ids = json_object();
	json_object_set_new(ids, "a", fuse_json_str(a->session.id));
	json_object_set_new(ids, "b", fuse_json_str(b->session.id));
	json_object_set_new(c, "profiles", ids);
	const char *na = a->session.node, *nb = b->session.node;
	json_object_set_new(c, "node_a", na ? json_string(na) : json_null());
	json_object_set_new(c, "node_b", nb ? json_string(nb) : json_null());
	json_object_set_new(c, "same_node", json_boolean(na && nb && strcmp(na, nb) == 0));

	json_t *deltas = json_array();
	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++) {
		double x = metric_value(a, i), y = metric_value(b, i);
		json_t *d = json_object();
		json_object_set_new(d, "metric", json_string(metrics[i].label));
		json_object_set_new(d, "path", json_string(metrics[i].path));
		json_object_set_new(d, "kind",
		                    json_string(metrics[i].kind == 1   ? "bytes"
		                                : metrics[i].kind == 2 ? "share"
		                                                       : "count"));
		json_object_set_new(d, "a", fuse_json_num(x));
		json_object_set_new(d, "b", fuse_json_num(y));
		json_object_set_new(d, "delta", fuse_json_num(y - x));
		json_object_set_new(d, "change_ratio",
		                    fuse_json_num(x != 0 && isfinite(x) ? (y - x) / fabs(x) : NAN));
		json_array_append_new(deltas, d);
	}
	/* The measured parts of a logging change beside the node's figures. */
	for (size_t i = 1; i < sizeof(signals) / sizeof(signals[0]); i++) {
		double x = signal_value(a, i), y = signal_value(b, i);
		json_t *d = json_object();
		json_object_set_new(d, "metric", json_string(signals[i].label));
		json_object_set_new(d, "path",
		                    signals[i].path ? json_string(signals[i].path)
		                                    : json_string("processes.logger"));
		json_object_set_new(d, "kind", json_string("share"));
		json_object_set_new(d, "a", fuse_json_num(x));
		json_object_set_new(d, "b", fuse_json_num(y));
		json_object_set_new(d, "delta", fuse_json_num(y - x));
		json_object_set_new(d, "change_ratio",
		                    fuse_json_num(x != 0 && isfinite(x) ? (y - x) / fabs(x) : NAN));
		json_array_append_new(deltas, d);
	}
	json_object_set_new(c, "metrics", deltas);
	json_object_set_new(c, "hot_modules_basis_a", fuse_json_str(a->hot_modules_basis));
	json_object_set_new(c, "hot_modules_basis_b", fuse_json_str(b->hot_modules_basis));

	json_t *entered = json_array(), *left = json_array(), *stayed = json_array();
	for (size_t i = 0; i < b->nhot_modules; i++) {
		const struct fuse_view_module *m = &b->hot_modules[i];
		const char *name = m->module;
		if (!name)
			continue;
		const struct fuse_view_module *old = fuse_view_hot_module(a, name);
		json_t *e = json_object();
		json_object_set_new(e, "module", json_string(name));
		json_object_set_new(e, "share_a", fuse_json_num(old ? old->reductions_share : NAN));
		json_object_set_new(e, "share_b", fuse_json_num(m->reductions_share));
		json_array_append_new(old ? stayed : entered, e);
	}
	for (size_t i = 0; i < a->nhot_modules; i++) {
		const struct fuse_view_module *m = &a->hot_modules[i];
		const char *name = m->module;
		if (!name || fuse_view_hot_module(b, name))
			continue;
		json_t *e = json_object();
		json_object_set_new(e, "module", json_string(name));
		json_object_set_new(e, "share_a", fuse_json_num(m->reductions_share));
		json_object_set_new(e, "share_b", json_null());
		json_array_append_new(left, e);
	}
	json_t *hot = json_object();
	json_object_set_new(hot, "entered", entered);
	json_object_set_new(hot, "left", left);
	json_object_set_new(hot, "stayed", stayed);
	json_object_set_new(c, "hot_modules", hot);

	json_t *resolved = json_array(), *added = json_array(), *still = json_array();
	json_t *unknown = json_array();
	for (size_t i = 0; i < a->nrecommendations; i++) {
		const struct fuse_view_recommendation *r = &a->recommendations[i];
		char why[FUSE_MAX_NAME + 128];
		if (has_rec(b, r)) {
			json_array_append_new(still, rec_brief(r));
		} else if (!comparable(r, a, b, why, sizeof(why))) {
			json_t *e = rec_brief(r);
			json_object_set_new(e, "why", json_string(why));
			json_array_append_new(unknown, e);
		} else {
			json_array_append_new(resolved, rec_brief(r));
		}
	}
	for (size_t i = 0; i < b->nrecommendations; i++) {
		const struct fuse_view_recommendation *r = &b->recommendations[i];
		if (!has_rec(a, r))
			json_array_append_new(added, rec_brief(r));
	}
	json_t *recs = json_object();
	json_object_set_new(recs, "resolved", resolved);
	json_object_set_new(recs, "new", added);
	json_object_set_new(recs, "remaining", still);
	json_object_set_new(recs, "not_comparable", unknown);
	json_object_set_new(c, "recommendations", recs);
	json_object_set_new(c, "verdict",
	                    verdict(a, b, json_array_size(resolved), json_array_size(added),
	                            json_array_size(still), json_array_size(unknown)));
	return c;
}

int fuse_compare(json_t *a, json_t *b, json_t **out)
{
	*out = NULL;
	struct fuse_view va, vb;
	int rc = fuse_view_parse(a, &va);
	if (rc == 0)
		rc = fuse_view_parse(b, &vb);
	else
		fuse_view_parse(NULL, &vb); /* empty, for the destroy below */
	if (rc == 0)
		*out = compare_views(&va, &vb);
	fuse_view_destroy(&va);
	fuse_view_destroy(&vb);
	return rc;
}

static void fmt_value(double v, const char *kind, char *out, size_t size)
{
	if (strcmp(kind, "bytes") == 0)
		fuse_fmt_bytes(v, out, size);
	else if (strcmp(kind, "share") == 0)
		fuse_fmt_pct(v, out, size);
	else if (isfinite(v) && v != floor(v) && fabs(v) < 100)
		snprintf(out, size, "%.2f", v);
	else
		fuse_fmt_count(v, out, size);
}

static void put_recs(struct gi_buf *out, const char *title, json_t *list)
{
	gi_buf_printf(out, "\n%s (%zu)\n", title, json_array_size(list));
	for (size_t i = 0; i < json_array_size(list); i++) {
		json_t *r = json_array_get(list, i);
		const char *finding = gi_json_str(r, "finding"), *id = gi_json_str(r, "id");
		/* One line of at most 80 columns: the finding is cut to what is left. */
		int room = 80 - 6 - (int)strlen(id ? id : "?");
		gi_buf_printf(out, "  - %s: %.*s\n", id ? id : "?", room > 20 ? room : 20,
		              finding ? finding : "");
	}
}

int fuse_compare_text(json_t *cmp, struct gi_buf *out)
{
	if (!json_is_object(cmp) || !out)
		return GI_EINVAL;
	const char *a = gi_json_str_path(cmp, "profiles.a"),
	           *b = gi_json_str_path(cmp, "profiles.b");
	gi_buf_printf(out, "Giulia compare  %s (before) -> %s (after)\n", a ? a : "-", b ? b : "-");
	if (!gi_json_true(cmp, "same_node"))
		gi_buf_printf(out, "  note: the profiles are of different nodes (%s, %s)\n",
		              gi_json_str(cmp, "node_a") ? gi_json_str(cmp, "node_a") : "-",
		              gi_json_str(cmp, "node_b") ? gi_json_str(cmp, "node_b") : "-");
	gi_buf_printf(out, "\n  %-20s %14s %14s %14s %8s\n", "metric", "before", "after", "delta",
	              "change");
	json_t *ms = json_object_get(cmp, "metrics");
	for (size_t i = 0; i < json_array_size(ms); i++) {
		json_t *m = json_array_get(ms, i);
		const char *kind = gi_json_str(m, "kind") ? gi_json_str(m, "kind") : "count";
		char x[32], y[32], d[32], signed_d[40], ch[32];
		fmt_value(gi_json_num(m, "a"), kind, x, sizeof(x));
		fmt_value(gi_json_num(m, "b"), kind, y, sizeof(y));
		double delta = gi_json_num(m, "delta");
		fmt_value(delta, kind, d, sizeof(d));
		snprintf(signed_d, sizeof(signed_d), "%s%s",
		         isfinite(delta) && delta > 0 ? "+" : "", d);
		double r = gi_json_num(m, "change_ratio");
		if (isfinite(r))
			snprintf(ch, sizeof(ch), "%+.0f%%", r * 100);
		else
			snprintf(ch, sizeof(ch), "-");
		gi_buf_printf(out, "  %-20s %14s %14s %14s %8s\n", gi_json_str(m, "metric"), x, y,
		              signed_d, ch);
	}
	json_t *hot = json_object_get(cmp, "hot_modules");
	static const char *const sections[][2] = {
	    {"entered", "Hot modules that entered"},
	    {"left", "Hot modules that left"},
	    {"stayed", "Hot modules in both"},
	};
	const char *basis = gi_json_str(cmp, "hot_modules_basis_b");
	const char *view = basis && strcmp(basis, "executing") == 0
	                       ? "executing view: where the time went"
	                       : "ownership view";
	for (size_t s = 0; s < 3; s++) {
		json_t *list = json_object_get(hot, sections[s][0]);
		gi_buf_printf(out, "\n%s (%zu; %s)\n", sections[s][1], json_array_size(list), view);
		for (size_t i = 0; i < json_array_size(list) && i < 20; i++) {
			json_t *e = json_array_get(list, i);
			char x[16], y[16];
			fuse_fmt_pct(gi_json_num(e, "share_a"), x, sizeof(x));
			fuse_fmt_pct(gi_json_num(e, "share_b"), y, sizeof(y));
			gi_buf_printf(out, "  %-50.50s %8s -> %8s\n", gi_json_str(e, "module"), x,
			              y);
		}
	}
	json_t *recs = json_object_get(cmp, "recommendations");
	put_recs(out, "Recommendations resolved", json_object_get(recs, "resolved"));
	put_recs(out, "Recommendations new", json_object_get(recs, "new"));
	put_recs(out, "Recommendations remaining", json_object_get(recs, "remaining"));
	json_t *unknown = json_object_get(recs, "not_comparable");
	if (json_array_size(unknown) > 0) {
		put_recs(out, "Recommendations not comparable", unknown);
		for (size_t i = 0; i < json_array_size(unknown); i++) {
			const char *why = gi_json_str(json_array_get(unknown, i), "why");
			gi_buf_printf(out, "    why: %.*s\n", 70, why ? why : "-");
		}
	}
	json_t *v = json_object_get(cmp, "verdict");
	json_t *reasons = json_object_get(v, "reasons");
	struct gi_buf line;
	gi_buf_init(&line, 0);
	for (size_t i = 0; i < json_array_size(reasons); i++)
		gi_buf_printf(&line, "%s%s", i ? "; " : "",
		              json_string_value(json_array_get(reasons, i))
		                  ? json_string_value(json_array_get(reasons, i))
		                  : "");
	gi_buf_printf(out, "\nVerdict: %s%s%s (%lld remaining)\n",
	              gi_json_str(v, "verdict") ? gi_json_str(v, "verdict") : "-",
	              line.len ? ": " : "", line.len ? gi_buf_str(&line) : "",
	              (long long)json_integer_value(json_object_get(v, "remaining")));
	gi_buf_destroy(&line);
	return 0;
}
