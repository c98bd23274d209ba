/*
 * Unit tests for src/fuse: profile building on synthetic snapshot series,
 * each rule's thresholds (fires just above, stays silent just below), quiet
 * series without false alarms, interrupted sessions, the text report and
 * comparisons. No graph: graph-driven rules are checked by setting graph
 * fields in a built profile and re-evaluating the rules.
 * needs:
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "fuse/fuse.h"
#include "fuse/fuse_int.h"
#include "fuse_series.h"
#include "harness.h"
#include "terminal.h"
#include "json_util.h"

static json_t *build(json_t *fin, json_t *snaps)
{
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, NULL, NULL, &p));
	TH_ASSERT(p != NULL);
	json_decref(fin);
	json_decref(snaps);
	return p;
}

/* Compact JSON text of `v` (static buffer, valid until the next call). */
static const char *dump(json_t *v)
{
	static char buf[65536];
	char *s = json_dumps(v, JSON_COMPACT);
	snprintf(buf, sizeof(buf), "%s", s ? s : "");
	free(s);
	return buf;
}

static double num(json_t *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *cur = o;
	for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && cur;
	     k = strtok_r(NULL, ".", &save))
		cur = json_is_array(cur) ? json_array_get(cur, (size_t)strtol(k, NULL, 10))
		                         : json_object_get(cur, k);
	return json_is_number(cur) ? json_number_value(cur) : NAN;
}

/* ---- quiet ------------------------------------------------------------- */

static void quiet_tweak(json_t *s, long seq, void *arg)
{
	(void)arg;
	/* Memory wobbles by a few MB, a few idle processes, a logger that logs
	 * now and then, small mailboxes that come and go. */
	series_set(s, "memory", "total", 50e6 + (double)((seq * 7919) % 5) * 1e6);
	series_add_process(s, "reductions", "<0.80.0>", "Elixir.Logger", ":gen_event.init_it/6",
	                   "Logger", 300 + (seq % 3) * 50, 30000, seq % 2);
	series_add_process(s, "reductions", "<0.90.0>", "code_server", ":code_server.init/3",
	                   ":code_server", 20000, 100000, 0);
	series_add_process(s, "reductions", "<0.91.0>", NULL, ":proc_lib.init_p/5", "Quiet.Worker",
	                   50000, 40000, 0);
	series_add_process(s, "message_queue", "<0.92.0>", NULL, NULL, "Quiet.Sink", 0, 1000,
	                   (double)(seq % 4) * 40);
	series_add_process(s, "memory", "<0.93.0>", NULL, NULL, "Quiet.Cache", 0,
	                   2e6 + (double)(seq % 3) * 1e5, 0);
}

static void quiet_series_has_no_alarms(void)
{
	json_t *p =
	    build(series_finalize("complete", 60, NULL), series_make(60, quiet_tweak, NULL));
	TH_ASSERT(ts_rec_find(p, 1, NULL) == NULL);
	TH_ASSERT(ts_rec_find(p, 2, NULL) == NULL);
	TH_ASSERT(ts_rec_find(p, 7, NULL) == NULL);
	TH_ASSERT(ts_rec_find(p, 6, NULL) == NULL);
	/* No traced calls: not even rule 8. */
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(p, "recommendations")), 0);
	/* The logger is recognised but quiet. */
	json_t *loggers = json_object_get(json_object_get(p, "processes"), "logger");
	TH_ASSERT_INT_EQ(json_array_size(loggers), 1);
	json_decref(p);
}

/* ---- hot modules, hotspots, series ---------------------------------------- */

static void deltas_tweak(json_t *s, long seq, void *arg)
{
	(void)arg;
	series_set(s, "reductions", "delta", 1000);
	series_add_process(s, "reductions", "<0.100.0>", NULL, NULL, "App.A", 100.0 * (seq + 1), 10,
	                   0);
	series_add_process(s, "reductions", "<0.101.0>", NULL, NULL, "App.A", 50, 20, 0);
	if (seq == 1)
		series_add_process(s, "reductions", "<0.102.0>", NULL, NULL, "App.B", 400, 5, 0);
	series_add_call(s, "App.A", "get", 1, seq == 1 ? 0 : 10.0 * (seq + 1));
	series_add_call(s, "App.A", "put", 2, 5);
}

static void hot_modules_sum_interval_deltas(void)
{
	json_t *p = build(series_finalize("complete", 3, NULL), series_make(3, deltas_tweak, NULL));
	json_t *hm = json_object_get(p, "hot_modules");
	TH_ASSERT_INT_EQ(json_array_size(hm), 2);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(hm, 0), "module")),
	                 "App.A");
	/* 100+200+300 + 3*50 over 3000 reductions. */
	TH_ASSERT_DBL_NEAR(num(hm, "0.reductions"), 750, 1e-9);
	TH_ASSERT_DBL_NEAR(num(hm, "0.reductions_share"), 0.25, 1e-9);
	TH_ASSERT_DBL_NEAR(num(hm, "0.sample_count"), 3, 0);
	TH_ASSERT_DBL_NEAR(num(hm, "0.memory_bytes"), 30, 0);
	TH_ASSERT_DBL_NEAR(num(hm, "1.sample_count"), 1, 0);
	TH_ASSERT(
	    json_is_null(json_object_get(json_object_get(json_array_get(hm, 0), "graph"), "ca")));
	/* Hottest functions by trace counts. */
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(
	        json_array_get(json_object_get(json_array_get(hm, 0), "hottest_functions"), 0),
	        "name")),
	    "get");
	/* get: 10, (absent), 30 over 3 windows -> min 0, avg 13.33, max 30. */
	json_t *hs = json_object_get(p, "trace_hotspots");
	TH_ASSERT_INT_EQ(json_array_size(hs), 2);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(hs, 0), "mfa")),
	                 "App.A.get/1");
	TH_ASSERT_DBL_NEAR(num(hs, "0.calls"), 40, 0);
	TH_ASSERT_DBL_NEAR(num(hs, "0.per_window.min"), 0, 0);
	TH_ASSERT_DBL_NEAR(num(hs, "0.per_window.max"), 30, 0);
	TH_ASSERT_DBL_NEAR(num(hs, "0.per_window.avg"), 13.3333, 1e-3);
	TH_ASSERT_DBL_NEAR(num(hs, "0.calls_per_second"), 13.3333, 1e-3);
	TH_ASSERT_DBL_NEAR(num(hs, "1.per_window.min"), 5, 0);
	/* Workload: get is a read, put a write. */
	json_t *wl = json_object_get(p, "workload");
	TH_ASSERT_DBL_NEAR(num(wl, "0.reads"), 40, 0);
	TH_ASSERT_DBL_NEAR(num(wl, "0.writes"), 15, 0);
	TH_ASSERT_DBL_NEAR(num(wl, "0.read_write_ratio"), 40.0 / 15, 1e-3);
	/* Time series present. */
	TH_ASSERT_INT_EQ(
	    json_array_size(json_object_get(json_object_get(p, "series"), "run_queue")), 3);
	json_decref(p);
}

static void long_series_are_downsampled(void)
{
	json_t *p = build(series_finalize("complete", 1000, NULL), series_make(1000, NULL, NULL));
	json_t *series = json_object_get(p, "series");
	size_t n = json_array_size(json_object_get(series, "memory_bytes"));
	TH_ASSERT(n <= 240 && n >= 200);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(series, "t_s")), n);
	TH_ASSERT_DBL_NEAR(num(p, "session.snapshot_count"), 1000, 0);
	json_decref(p);
}

static void classification_is_configurable(void)
{
	TH_ASSERT_STR_EQ(fuse_classify_function(NULL, "get_by"), "read");
	TH_ASSERT_STR_EQ(fuse_classify_function(NULL, "exists?"), "read");
	TH_ASSERT_STR_EQ(fuse_classify_function(NULL, "get!"), "read");
	TH_ASSERT_STR_EQ(fuse_classify_function(NULL, "list_tenants"), "read");
	TH_ASSERT_STR_EQ(fuse_classify_function(NULL, "insert_all"), "write");
	TH_ASSERT_STR_EQ(fuse_classify_function(NULL, "update_all"), "write");
	TH_ASSERT_STR_EQ(fuse_classify_function(NULL, "transaction"), "write");
	TH_ASSERT_STR_EQ(fuse_classify_function(NULL, "prepare_opts"), "pipeline");
	TH_ASSERT_STR_EQ(fuse_classify_function(NULL, "getter"), "other");
	TH_ASSERT_STR_EQ(fuse_classify_function(NULL, "handle_call"), "other");
	static const char *const reads[] = {"peek", NULL};
	static const char *const writes[] = {"poke", NULL};
	static const char *const pipe[] = {"wrap", NULL};
	struct fuse_config cfg = {reads, writes, pipe, NULL, 0};
	TH_ASSERT_STR_EQ(fuse_classify_function(&cfg, "peek_at"), "read");
	TH_ASSERT_STR_EQ(fuse_classify_function(&cfg, "poke"), "write");
	TH_ASSERT_STR_EQ(fuse_classify_function(&cfg, "wrap"), "pipeline");
	TH_ASSERT_STR_EQ(fuse_classify_function(&cfg, "get"), "other");
}

/* ---- rule 1 -------------------------------------------------------------- */

struct cpu_arg {
	long busy_every; /* snapshots with a long run queue: seq % busy_every != 0 */
	double util;
};

static void cpu_tweak(json_t *s, long seq, void *arg)
{
	struct cpu_arg *a = arg;
	bool busy = a->busy_every > 0 && seq % a->busy_every != 0;
	series_set(json_object_get(s, "run_queue"), NULL, "total", busy ? 6 : 1);
	series_set(json_object_get(s, "scheduler_utilisation"), NULL, "total", a->util);
}

static void cpu_saturation_thresholds(void)
{
	/* Run queue 6 > 2 schedulers in 2/3 of snapshots: fires. */
	struct cpu_arg a = {3, 0.6};
	json_t *p = build(series_finalize("complete", 30, NULL), series_make(30, cpu_tweak, &a));
	json_t *r = ts_rec_find(p, 1, NULL);
	TH_ASSERT(r != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "run_queue_peak"), 6, 0);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "run_queue_above_schedulers_share"), 20.0 / 30, 1e-3);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "severity")), "high");
	json_decref(p);
	/* Run queue 1, within the schedulers, at 60%: silent. */
	struct cpu_arg b = {0, 0.6};
	p = build(series_finalize("complete", 30, NULL), series_make(30, cpu_tweak, &b));
	TH_ASSERT(ts_rec_find(p, 1, NULL) == NULL);
	json_decref(p);
	/* Utilisation at 95%: fires; at 85%: silent. */
	struct cpu_arg c = {0, 0.95};
	p = build(series_finalize("complete", 30, NULL), series_make(30, cpu_tweak, &c));
	TH_ASSERT(ts_rec_find(p, 1, NULL) != NULL);
	json_decref(p);
	struct cpu_arg d = {0, 0.85};
	p = build(series_finalize("complete", 30, NULL), series_make(30, cpu_tweak, &d));
	TH_ASSERT(ts_rec_find(p, 1, NULL) == NULL);
	json_decref(p);
	/* Two snapshots are too few to call anything persistent. */
	p = build(series_finalize("complete", 2, NULL), series_make(2, cpu_tweak, &c));
	TH_ASSERT(ts_rec_find(p, 1, NULL) == NULL);
	json_decref(p);
}

/* ---- rule 2 -------------------------------------------------------------- */

struct logger_arg {
	const char *reg, *init, *module;
	double reductions; /* per interval, of 100k */
};

static void logger_tweak(json_t *s, long seq, void *arg)
{
	(void)seq;
	struct logger_arg *a = arg;
	series_add_process(s, "reductions", "<0.70.0>", NULL, NULL, "App.Web", 50000, 1e5, 0);
	series_add_process(s, "reductions", "<0.80.0>", a->reg, a->init, a->module, a->reductions,
	                   1e5, 40);
}

static void logger_bottleneck_elixir_gen_event(void)
{
	struct logger_arg a = {"Elixir.Logger", ":gen_event.init_it/6", "Logger", 30000};
	json_t *p = build(series_finalize("complete", 10, NULL), series_make(10, logger_tweak, &a));
	json_t *r = ts_rec_find(p, 2, NULL);
	TH_ASSERT(r != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "reductions_share"), 0.30, 1e-6);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "reductions_per_second"), 30000, 1e-6);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "best_rank"), 2, 0);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "advice")), "sync_mode_qlen");
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "advice")), "drop_mode_qlen");
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "advice")), "flush_qlen");
	TH_ASSERT_STR_CONTAINS(dump(json_object_get(r, "evidence")), "Elixir.Logger");
	json_decref(p);
	/* 4% of reductions: below the 5% threshold. */
	a.reductions = 4000;
	p = build(series_finalize("complete", 10, NULL), series_make(10, logger_tweak, &a));
	TH_ASSERT(ts_rec_find(p, 2, NULL) == NULL);
	json_decref(p);
}

static void logger_bottleneck_otp_handler(void)
{
	/* OTP's logger_std_h handler: registered logger_std_h_default, run by
	 * logger_olp; attribution gives :logger_olp. */
	struct logger_arg a = {"logger_std_h_default", ":logger_olp.init/1", ":logger_olp", 20000};
	json_t *p = build(series_finalize("complete", 10, NULL), series_make(10, logger_tweak, &a));
	TH_ASSERT(ts_rec_find(p, 2, NULL) != NULL);
	json_decref(p);
	/* An unregistered console backend under a Logger module name. */
	struct logger_arg b = {NULL, ":proc_lib.init_p/5", "Logger.Backends.Console", 20000};
	p = build(series_finalize("complete", 10, NULL), series_make(10, logger_tweak, &b));
	TH_ASSERT(ts_rec_find(p, 2, NULL) != NULL);
	json_decref(p);
	/* Not a logger: an application module whose name merely contains "log". */
	struct logger_arg c = {"audit_log", ":proc_lib.init_p/5", "App.AuditLog", 20000};
	p = build(series_finalize("complete", 10, NULL), series_make(10, logger_tweak, &c));
	TH_ASSERT(ts_rec_find(p, 2, NULL) == NULL);
	json_decref(p);
}

/* ---- the workload model's platform knowledge ---------------------------- */

static enum fuse_effect driver_effect(const char *module, const char *function)
{
	enum fuse_effect e = FUSE_EFFECT_NONE;
	TH_ASSERT_MSG(fuse_driver_effect(module, function, &e), "%s is not a driver", module);
	return e;
}

static void driver_table_knows_effects(void)
{
	TH_ASSERT_INT_EQ(driver_effect(":sqlite3", "read"), FUSE_EFFECT_READ);
	TH_ASSERT_INT_EQ(driver_effect(":sqlite3", "update_timeout"), FUSE_EFFECT_WRITE);
	/* The statement decides: unknown, and the caller's name falls back. */
	TH_ASSERT_INT_EQ(driver_effect(":sqlite3", "sql_exec"), FUSE_EFFECT_UNKNOWN);
	TH_ASSERT_INT_EQ(driver_effect(":sqlite3", "open"), FUSE_EFFECT_NONE);
	TH_ASSERT_INT_EQ(driver_effect(":mnesia", "dirty_read"), FUSE_EFFECT_READ);
	TH_ASSERT_INT_EQ(driver_effect(":mnesia", "dirty_write"), FUSE_EFFECT_WRITE);
	TH_ASSERT_INT_EQ(driver_effect(":mnesia", "transaction"), FUSE_EFFECT_UNKNOWN);
	TH_ASSERT_INT_EQ(driver_effect(":mnesia", "wait_for_tables"), FUSE_EFFECT_NONE);
	TH_ASSERT_INT_EQ(driver_effect("Postgrex", "query!"), FUSE_EFFECT_UNKNOWN);
	TH_ASSERT_INT_EQ(driver_effect(":epgsql", "equery"), FUSE_EFFECT_UNKNOWN);
	TH_ASSERT_INT_EQ(driver_effect("Ecto.Repo.Queryable", "all"), FUSE_EFFECT_READ);
	TH_ASSERT_INT_EQ(driver_effect("Ecto.Repo.Schema", "insert"), FUSE_EFFECT_WRITE);
	/* Local memory is not a database. */
	enum fuse_effect e;
	TH_ASSERT(!fuse_driver_effect(":ets", "lookup", &e));
	TH_ASSERT(!fuse_driver_effect(":persistent_term", "get", &e));
	TH_ASSERT(!fuse_driver_module(":ets"));
	TH_ASSERT(fuse_driver_module(":pgsql"));
	/* Ecto.Repo's API, for modules that use Ecto.Repo. */
	TH_ASSERT_INT_EQ(fuse_repo_api_effect("get!"), FUSE_EFFECT_READ);
	TH_ASSERT_INT_EQ(fuse_repo_api_effect("exists?"), FUSE_EFFECT_READ);
	TH_ASSERT_INT_EQ(fuse_repo_api_effect("insert_all"), FUSE_EFFECT_WRITE);
	TH_ASSERT_INT_EQ(fuse_repo_api_effect("tariff"), FUSE_EFFECT_NONE);
	/* Platform modules and wrappers; the application's own are neither. */
	TH_ASSERT(fuse_module_is_platform("Logger"));
	TH_ASSERT(fuse_module_is_platform("Logger.Backends.Console"));
	TH_ASSERT(fuse_module_is_platform(":httpd_request_handler"));
	TH_ASSERT(fuse_module_is_platform(":elixir_compiler_3"));
	TH_ASSERT(!fuse_module_is_platform("Tariffs.Pricing"));
	TH_ASSERT(!fuse_module_is_platform("LoggerFront"));
	TH_ASSERT(!fuse_module_is_platform(":fleet_registry"));
}

/* ---- rules 3 and 4 ------------------------------------------------------- */

struct calls_arg {
	const char *module;
	double reads, writes, helpers;
};

static void repo_api_tweak(json_t *s, long seq, void *arg);

static void calls_tweak(json_t *s, long seq, void *arg)
{
	(void)seq;
	struct calls_arg *a = arg;
	series_add_call(s, a->module, "get_by_name", 1, a->reads);
	series_add_call(s, a->module, "update_entry", 2, a->writes);
	series_add_call(s, a->module, "prepare_opts", 2, a->helpers);
	series_add_call(s, a->module, "default_options", 1, a->helpers);
}

static void read_through_cache_thresholds(void)
{
	struct calls_arg a = {"App.Registry", 1000, 50, 0};
	json_t *p = build(series_finalize("complete", 10, NULL), series_make(10, calls_tweak, &a));
	json_t *r = ts_rec_find(p, 3, "App.Registry");
	TH_ASSERT(r != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "read_write_ratio"), 20, 1e-9);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "operations_per_second"), 1050, 1e-9);
	/* No helpers and no graph: no database signature, so no rule 4. */
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	json_decref(p);
	/* The reference article's workload: 87% reads, 6.9:1, hundreds of
	 * operations per second is a classic read-through cache candidate. */
	struct calls_arg ref = {"App.Registry", 690, 100, 0};
	p = build(series_finalize("complete", 10, NULL), series_make(10, calls_tweak, &ref));
	r = ts_rec_find(p, 3, "App.Registry");
	TH_ASSERT_MSG(r != NULL, "no read-through-cache advice at 6.9:1");
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "read_write_ratio"), 6.9, 1e-9);
	json_decref(p);
	/* 3:1 (75% reads): a cache would be invalidated too often. Silent. */
	struct calls_arg b = {"App.Registry", 900, 300, 0};
	p = build(series_finalize("complete", 10, NULL), series_make(10, calls_tweak, &b));
	TH_ASSERT(ts_rec_find(p, 3, NULL) == NULL);
	json_decref(p);
	/* 60 calls/s < 100: silent. */
	struct calls_arg c = {"App.Registry", 58, 2, 0};
	p = build(series_finalize("complete", 10, NULL), series_make(10, calls_tweak, &c));
	TH_ASSERT(ts_rec_find(p, 3, NULL) == NULL);
	json_decref(p);
}

/* Sets what the graph join would have said of `module`'s workload entry
 * (its data layer and the share of its work that goes there) and
 * re-evaluates the rules. */
static void link_to_layer(json_t *p, const char *module, const char *layer, double share)
{
	json_t *wl = json_object_get(p, "workload");
	for (size_t i = 0; i < json_array_size(wl); i++) {
		json_t *w = json_array_get(wl, i);
		if (strcmp(json_string_value(json_object_get(w, "module")), module) != 0)
			continue;
		json_t *db = json_object_get(w, "database");
		json_object_set_new(db, "repo", json_string(layer));
		json_object_set_new(db, "repo_call_share", json_real(share));
	}
	json_t *recs = NULL;
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
}

/* Marks `module` a data layer as the graph would (it calls a driver). */
static void mark_data_layer(json_t *p, const char *module, const char *reason)
{
	json_t *wl = json_object_get(p, "workload");
	for (size_t i = 0; i < json_array_size(wl); i++) {
		json_t *w = json_array_get(wl, i);
		if (strcmp(json_string_value(json_object_get(w, "module")), module) != 0)
			continue;
		json_t *db = json_object_get(w, "database");
		json_object_set_new(db, "data_layer", json_true());
		json_object_set_new(db, "data_layer_reason", json_string(reason));
	}
	json_t *recs = NULL;
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
}

static void erlang_layer_tweak(json_t *s, long seq, void *arg)
{
	(void)seq;
	(void)arg;
	series_add_call(s, ":ledger_store", "balance", 1, 850);
	series_add_call(s, ":ledger_store", "post", 2, 150);
}

/* The must-not-say case of issue 20: the data layer itself, read-mostly
 * because the application reads more than it writes, is not a lookup of
 * rarely changing data: its read share mixes every kind of data. Whatever
 * makes it a data layer (Ecto-style callbacks inside, Ecto.Repo, a Repo's
 * shape, driver calls), rule 4 stays silent on it, while rule 3 may still
 * name it a read-through cache candidate. */
static void the_data_layer_is_not_a_lookup(void)
{
	/* Ecto-style pipeline callbacks inside: 500 reads for 1 write. */
	struct calls_arg a = {"Shop.Catalog", 500, 1, 500};
	json_t *p = build(series_finalize("complete", 10, NULL), series_make(10, calls_tweak, &a));
	TH_ASSERT(json_is_true(json_object_get(
	    json_object_get(json_array_get(json_object_get(p, "workload"), 0), "database"),
	    "data_layer")));
	TH_ASSERT_MSG(ts_rec_find(p, 4, NULL) == NULL, "rule 4 on the data layer: %s",
	              dump(json_object_get(p, "recommendations")));
	json_t *r3 = ts_rec_find(p, 3, "Shop.Catalog");
	TH_ASSERT(r3 != NULL);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r3, "advice")),
	                       "It is the data layer");
	/* Pipeline overhead: 2 helpers per operation. */
	TH_ASSERT_DBL_NEAR(num(p, "pipeline_overhead.ratio"), 10000.0 / 5010, 1e-3);
	/* It uses Ecto.Repo: the same. */
	json_t *db = json_object_get(json_array_get(json_object_get(p, "workload"), 0), "database");
	json_object_set_new(db, "pipeline_helper_calls", json_integer(0));
	json_object_set_new(db, "uses_ecto_repo", json_true());
	json_t *recs = NULL;
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	json_decref(p);
	/* Named like a Repo and shaped like one (get/2, all/2, insert/2). */
	p = build(series_finalize("complete", 10, NULL), series_make(10, repo_api_tweak, NULL));
	TH_ASSERT(json_is_true(json_object_get(
	    json_object_get(json_array_get(json_object_get(p, "workload"), 0), "database"),
	    "data_layer")));
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	json_decref(p);
	/* An Erlang store calling its driver (85% reads), traced alone: even
	 * when the graph says it depends on another data layer, it is one. */
	p = build(series_finalize("complete", 10, NULL), series_make(10, erlang_layer_tweak, NULL));
	mark_data_layer(p, ":ledger_store", "it calls the driver :mnesia");
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	link_to_layer(p, ":ledger_store", ":ledger_db", 1.0);
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	json_decref(p);
}

static void db_backed_lookup_from_graph_repo(void)
{
	/* A caller of a Repo, known from the graph: set what the graph join
	 * would have set and re-evaluate. */
	struct calls_arg a = {"Shop.Catalog", 500, 0, 0};
	json_t *p = build(series_finalize("complete", 10, NULL), series_make(10, calls_tweak, &a));
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	link_to_layer(p, "Shop.Catalog", "Shop.Repo", 0.9);
	json_t *r = ts_rec_find(p, 4, "Shop.Catalog");
	TH_ASSERT(r != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "round_trips_saved_per_window"), 450, 0);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "finding")), "Shop.Repo");
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "advice")), "ETS");
	/* Rules 3 and 4 on one subject are one finding that carries both. */
	TH_ASSERT(ts_rec_find(p, 3, "Shop.Catalog") == r);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "ids")), 2);
	size_t on_subject = 0;
	json_t *recs = json_object_get(p, "recommendations");
	for (size_t i = 0; i < json_array_size(recs); i++) {
		const char *sub =
		    json_string_value(json_object_get(json_array_get(recs, i), "subject"));
		on_subject += sub && strcmp(sub, "Shop.Catalog") == 0;
	}
	TH_ASSERT_INT_EQ(on_subject, 1);
	/* Only 30% of its calls reach the Repo: not "most of its work". */
	link_to_layer(p, "Shop.Catalog", "Shop.Repo", 0.3);
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	json_decref(p);
	/* 75% reads: not read-mostly, silent. */
	struct calls_arg b = {"Shop.Catalog", 300, 100, 0};
	p = build(series_finalize("complete", 10, NULL), series_make(10, calls_tweak, &b));
	link_to_layer(p, "Shop.Catalog", "Shop.Repo", 1.0);
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	json_decref(p);
}

static void two_layers_tweak(json_t *s, long seq, void *arg)
{
	struct calls_arg *a = arg;
	calls_tweak(s, seq, arg);
	series_add_call(s, "Shop.Registry", "lookup", 1, a->reads);
	series_add_call(s, "Shop.Registry", "put", 2, a->writes);
}

static void repo_api_tweak(json_t *s, long seq, void *arg)
{
	(void)seq;
	(void)arg;
	series_add_call(s, "Shop.Repo", "get", 2, 400);
	series_add_call(s, "Shop.Repo", "all", 2, 100);
	series_add_call(s, "Shop.Repo", "insert", 2, 1);
}

static void data_layers_defer_to_their_callers(void)
{
	/* A name alone is no evidence: Shop.Repo with functions that are not
	 * Ecto.Repo's API is not known to touch a database. */
	struct calls_arg a = {"Shop.Repo", 500, 1, 0};
	json_t *p = build(series_finalize("complete", 10, NULL), series_make(10, calls_tweak, &a));
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	json_decref(p);
	/* A data layer (helpers inside) and a registry in front of it. Without
	 * the graph nothing says the registry goes to the database, and the
	 * data layer is no lookup: silent. */
	struct calls_arg b = {"Shop.Store", 500, 1, 500};
	p = build(series_finalize("complete", 10, NULL), series_make(10, two_layers_tweak, &b));
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	/* With the graph's dependency, the registry is the place for the table
	 * and the data layer is not reported on its own. */
	link_to_layer(p, "Shop.Registry", "Shop.Store", 1.0);
	json_t *r = ts_rec_find(p, 4, "Shop.Registry");
	TH_ASSERT(r != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "round_trips_saved_per_window"), 499, 0);
	TH_ASSERT(ts_rec_find(p, 4, "Shop.Store") == NULL);
	TH_ASSERT(ts_rec_find(p, 3, "Shop.Store") == NULL);
	json_decref(p);
}

/* ---- rule 5 -------------------------------------------------------------- */

static void hot_hub_thresholds(void)
{
	json_t *p = build(series_finalize("complete", 3, NULL), series_make(3, deltas_tweak, NULL));
	json_t *g = json_object_get(json_array_get(json_object_get(p, "hot_modules"), 0), "graph");
	json_object_set_new(g, "ca", json_integer(25));
	json_object_set_new(g, "hub", json_false());
	json_t *recs = NULL;
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
	json_t *r = ts_rec_find(p, 5, "App.A");
	TH_ASSERT(r != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "dependents"), 25, 0);
	/* The same load on platform code is never advice to change it: not on
	 * Elixir's Logger, not on a spawn(fn) trampoline, not on a module the
	 * graph places outside the project. */
	json_t *hot = json_array_get(json_object_get(p, "hot_modules"), 0);
	const char *platform[] = {"Logger",    ":erlang",         ":elixir_compiler_0",
	                          ":proc_lib", "Task.Supervised", ":httpd_request_handler",
	                          "Deps.Lib"};
	for (size_t i = 0; i < sizeof(platform) / sizeof(platform[0]); i++) {
		json_object_set_new(hot, "module", json_string(platform[i]));
		json_object_set_new(g, "external",
		                    json_boolean(strcmp(platform[i], "Deps.Lib") == 0));
		TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
		json_object_set_new(p, "recommendations", recs);
		TH_ASSERT_MSG(ts_rec_find(p, 5, platform[i]) == NULL, "hot-hub advice on %s",
		              platform[i]);
	}
	json_object_set_new(hot, "module", json_string("App.A"));
	json_object_set_new(g, "external", json_false());
	/* 9 dependents and no hub flag: silent. */
	json_object_set_new(g, "ca", json_integer(9));
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
	TH_ASSERT(ts_rec_find(p, 5, "App.A") == NULL);
	/* A hot complex function: 100+ calls/s and cyclomatic 12. */
	json_t *f = json_array_get(json_object_get(p, "trace_hotspots"), 0);
	json_object_set_new(f, "calls_per_second", json_real(150));
	json_object_set_new(f, "cyclomatic", json_integer(12));
	/* Complexity alone, on a function whose time is not measured: silent. */
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
	TH_ASSERT(ts_rec_find(p, 5, "App.A.get/1") == NULL);
	/* Measured cold (0.27% of the node's time, under the 5% floor): silent. */
	json_t *hf = json_pack("[{s:s, s:s, s:i, s:f}]", "module", "App.A", "function", "get",
	                       "arity", 1, "reductions_share", 0.0027);
	json_object_set(p, "hot_functions", hf);
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
	TH_ASSERT(ts_rec_find(p, 5, "App.A.get/1") == NULL);
	/* Hot (20% of the node's time): the advice, with the share it rests on. */
	json_object_set_new(json_array_get(hf, 0), "reductions_share", json_real(0.2));
	json_decref(hf);
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
	json_t *fr = ts_rec_find(p, 5, "App.A.get/1");
	TH_ASSERT(fr != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(fr, "time_share"), 0.2, 1e-9);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(fr, "finding")), "20.0%");
	json_object_set_new(f, "cyclomatic", json_integer(9));
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
	TH_ASSERT(ts_rec_find(p, 5, NULL) == NULL);
	json_decref(p);
}

/* ---- rule 6 -------------------------------------------------------------- */

static void mailbox_tweak(json_t *s, long seq, void *arg)
{
	const double *queue = arg;
	series_add_process(s, "message_queue", "<0.200.0>", "Elixir.App.Counter",
	                   ":proc_lib.init_p/5", "App.Counter", 0, 1e5, queue[seq]);
}

static void mailbox_buildup_thresholds(void)
{
	double rising[] = {10, 200, 500, 900, 1500, 2400};
	json_t *p =
	    build(series_finalize("complete", 6, NULL), series_make(6, mailbox_tweak, rising));
	json_t *r = ts_rec_find(p, 6, "App.Counter");
	TH_ASSERT(r != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "queue_last"), 2400, 0);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "rising_steps"), 5, 0);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "finding")), "App.Counter");
	json_decref(p);
	/* Bursty but draining: silent. */
	double bursty[] = {300, 20, 310, 10, 290, 30};
	p = build(series_finalize("complete", 6, NULL), series_make(6, mailbox_tweak, bursty));
	TH_ASSERT(ts_rec_find(p, 6, NULL) == NULL);
	json_decref(p);
	/* Rising but tiny: silent. */
	double tiny[] = {1, 2, 3, 5, 8, 13};
	p = build(series_finalize("complete", 6, NULL), series_make(6, mailbox_tweak, tiny));
	TH_ASSERT(ts_rec_find(p, 6, NULL) == NULL);
	json_decref(p);
}

/* ---- rule 7 -------------------------------------------------------------- */

struct mem_arg {
	double start, per_step; /* binary growth per snapshot */
	long spike_at;          /* -1: none */
};

static void memory_tweak(json_t *s, long seq, void *arg)
{
	struct mem_arg *a = arg;
	double binary = 1e6 + a->per_step * (double)seq;
	if (seq == a->spike_at)
		binary += 200e6;
	series_set(s, "memory", "binary", binary);
	series_set(s, "memory", "total", a->start + binary);
	series_add_process(s, "memory", "<0.300.0>", NULL, NULL, "App.Buffer", 0,
	                   1e5 + a->per_step / 2 * (double)seq, 0);
}

/* Memory that grows with the number of processes (each ~2 MB). */
static void ramp_tweak(json_t *s, long seq, void *arg)
{
	memory_tweak(s, seq, arg);
	const struct mem_arg *a = arg;
	double total = a->start + 1e6 + a->per_step * (double)seq;
	series_set(s, "processes", "count", total / 2e6 * 10);
}

static void memory_growth_thresholds(void)
{
	/* 50 MB -> ~110 MB, all in binaries: fires and names them. */
	struct mem_arg a = {50e6, 2e6, -1};
	json_t *p = build(series_finalize("complete", 30, NULL), series_make(30, memory_tweak, &a));
	json_t *r = ts_rec_find(p, 7, NULL);
	TH_ASSERT(r != NULL);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "finding")), "binary");
	TH_ASSERT_STR_CONTAINS(dump(json_object_get(r, "evidence")), "App.Buffer");
	TH_ASSERT(ts_rec_ev(r, "growth_bytes") > 50e6);
	json_decref(p);
	/* +7.5 MB: below 16 MB, silent. */
	struct mem_arg b = {50e6, 0.25e6, -1};
	p = build(series_finalize("complete", 30, NULL), series_make(30, memory_tweak, &b));
	TH_ASSERT(ts_rec_find(p, 7, NULL) == NULL);
	json_decref(p);
	/* One spike in the middle, flat otherwise: silent. */
	struct mem_arg c = {50e6, 0, 15};
	p = build(series_finalize("complete", 30, NULL), series_make(30, memory_tweak, &c));
	TH_ASSERT(ts_rec_find(p, 7, NULL) == NULL);
	json_decref(p);
	/* The same growth with the processes (logins ramping up, memory per
	 * process steady): said as such, at low severity, never as a leak. */
	p = build(series_finalize("complete", 30, NULL), series_make(30, ramp_tweak, &a));
	r = ts_rec_find(p, 7, NULL);
	TH_ASSERT(r != NULL);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "finding")),
	                       "with the processes");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "severity")), "low");
	json_decref(p);
}

/* ---- rule 8 -------------------------------------------------------------- */

static void idle_tweak(json_t *s, long seq, void *arg)
{
	(void)seq;
	const double *calls = arg;
	series_add_call(s, "App.Orders", "get_order", 1, *calls);
}

static void beam_not_bottleneck_thresholds(void)
{
	double calls = 50;
	json_t *p =
	    build(series_finalize("complete", 10, NULL), series_make(10, idle_tweak, &calls));
	json_t *r = ts_rec_find(p, 8, NULL);
	TH_ASSERT(r != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "busiest_module_operations_per_second"), 50, 1e-9);
	/* Nothing says this node has a database: no database steps. */
	TH_ASSERT(strstr(json_string_value(json_object_get(r, "advice")), "pg_stat_statements") ==
	          NULL);
	json_decref(p);
	/* With a data layer seen (Ecto-style callbacks), the database's own
	 * statistics are the next step. */
	struct calls_arg db = {"Shop.Store", 5, 1, 5};
	p = build(series_finalize("complete", 10, NULL), series_make(10, calls_tweak, &db));
	r = ts_rec_find(p, 8, NULL);
	TH_ASSERT(r != NULL);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "advice")),
	                       "pg_stat_statements");
	json_decref(p);
	/* Busy node with the same calls: silent. */
	struct fuse_thresholds t;
	fuse_thresholds_default(&t);
	t.idle_utilisation = 0.01;
	struct fuse_config cfg = {NULL, NULL, NULL, &t, 0};
	json_t *snaps = series_make(10, idle_tweak, &calls),
	       *fin = series_finalize("complete", 10, NULL);
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, NULL, &cfg, &p));
	TH_ASSERT(ts_rec_find(p, 8, NULL) == NULL);
	json_decref(p);
	json_decref(snaps);
	json_decref(fin);
}

/* ---- incremental builder ------------------------------------------------ */

static json_t *build_incrementally(json_t *fin, json_t *snaps, long count_hint)
{
	struct fuse_builder *b = NULL;
	TH_ASSERT_OK(fuse_builder_new(NULL, count_hint, &b));
	for (size_t i = 0; i < json_array_size(snaps); i++)
		TH_ASSERT_OK(fuse_builder_add(b, json_array_get(snaps, i)));
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_builder_finish(b, fin, NULL, &p));
	fuse_builder_free(b);
	return p;
}

static void builder_matches_one_shot_build(void)
{
	struct logger_arg a = {"Elixir.Logger", ":gen_event.init_it/6", "Logger", 30000};
	json_t *snaps = series_make(12, logger_tweak, &a);
	json_t *fin = series_finalize("complete", 12, NULL);
	json_t *whole = NULL;
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, NULL, NULL, &whole));
	json_t *parts = build_incrementally(fin, snaps, 12);
	TH_ASSERT_MSG(json_equal(whole, parts), "incremental and one-shot profiles differ");
	json_decref(whole);
	json_decref(parts);
	json_decref(snaps);
	json_decref(fin);
	/* No count up front: the mailbox trend uses the first and last snapshot. */
	double rising[] = {10, 200, 500, 900, 1500, 2400};
	snaps = series_make(6, mailbox_tweak, rising);
	fin = series_finalize("complete", 6, NULL);
	json_t *p = build_incrementally(fin, snaps, 0);
	json_t *r = ts_rec_find(p, 6, "App.Counter");
	TH_ASSERT(r != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "start_quarter_avg"), 10, 0);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "end_quarter_avg"), 2400, 0);
	json_decref(p);
	/* Misuse is refused. */
	struct fuse_builder *b = NULL;
	TH_ASSERT_INT_EQ(fuse_builder_new(NULL, -1, &b), GI_EINVAL);
	TH_ASSERT_OK(fuse_builder_new(NULL, 0, &b));
	json_t *bad = json_integer(3);
	TH_ASSERT_INT_EQ(fuse_builder_add(b, bad), GI_EINVAL);
	json_decref(bad);
	fuse_builder_free(b);
	fuse_builder_free(NULL);
	json_decref(snaps);
	json_decref(fin);
}

/* ---- sessions, reports, compare ------------------------------------------- */

static void interrupted_sessions_build(void)
{
	/* Node went down after two snapshots. */
	json_t *fin = series_finalize("interrupted", 2, NULL);
	json_object_set_new(fin, "reason", json_string("node went down"));
	struct cpu_arg c = {0, 0.99};
	json_t *p = build(fin, series_make(2, cpu_tweak, &c));
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(json_object_get(p, "session"), "status")),
	    "interrupted");
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(json_object_get(p, "session"), "reason")),
	    "node went down");
	TH_ASSERT(ts_rec_find(p, 1, NULL) == NULL); /* too few snapshots to say */
	struct gi_buf out;
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_report_text(p, &out));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "interrupted");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "node went down");
	gi_buf_destroy(&out);
	json_decref(p);
	/* No finalize at all, no snapshots. */
	p = NULL;
	TH_ASSERT_OK(fuse_profile_build(NULL, NULL, NULL, NULL, &p));
	TH_ASSERT_STR_EQ(
	    json_string_value(json_object_get(json_object_get(p, "session"), "status")),
	    "interrupted");
	TH_ASSERT(json_is_null(json_object_get(
	    json_object_get(json_object_get(p, "metrics"), "memory_bytes"), "peak")));
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_report_text(p, &out));
	TH_ASSERT_OK(fuse_report_html(p, &out));
	gi_buf_destroy(&out);
	json_decref(p);
}

static void hostile_input_is_tolerated(void)
{
	json_t *snaps = json_loads(
	    "[1, \"x\", {\"memory\": 5, \"run_queue\": {\"total\": \"many\"},"
	    " \"top_processes\": {\"reductions\": [7, {\"pid\": 3}, {\"pid\": \"<0.1.0>\","
	    " \"reductions\": -5, \"module\": 9}]},"
	    " \"trace\": {\"modules\": [1], \"calls\": [{\"module\": \"M\", \"function\": \"f\","
	    " \"arity\": 99999, \"count\": 1}, {\"module\": \"M\", \"function\": \"g\", \"arity\": "
	    "0,"
	    " \"count\": \"x\"}]}, \"errors\": [1, \"e\", \"e\"]}]",
	    0, NULL);
	TH_ASSERT(snaps != NULL);
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(NULL, snaps, NULL, NULL, &p));
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(p, "errors")), 1);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(p, "trace_hotspots")), 0);
	json_decref(p);
	json_t *bad = json_string("x");
	TH_ASSERT_INT_EQ(fuse_profile_build(bad, NULL, NULL, NULL, &p), GI_EINVAL);
	TH_ASSERT_INT_EQ(fuse_profile_build(NULL, bad, NULL, NULL, &p), GI_EINVAL);
	json_decref(bad);
	json_decref(snaps);
	struct gi_buf out;
	gi_buf_init(&out, 0);
	json_t *empty = json_object();
	TH_ASSERT_OK(fuse_report_text(empty, &out));
	json_decref(empty);
	gi_buf_destroy(&out);
}

static void text_report_reads_well(void)
{
	struct logger_arg a = {"Elixir.Logger", ":gen_event.init_it/6", "Logger", 30000};
	json_t *p = build(series_finalize("complete", 10, NULL), series_make(10, logger_tweak, &a));
	struct gi_buf out;
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_report_text(p, &out));
	const char *t = gi_buf_str(&out);
	TH_ASSERT_STR_CONTAINS(t, "Giulia profile s1");
	TH_ASSERT_STR_CONTAINS(t, "Recommendations (1)");
	TH_ASSERT_STR_CONTAINS(t, "logger-bottleneck");
	TH_ASSERT_STR_CONTAINS(t, "Hot modules");
	TH_ASSERT_STR_CONTAINS(t, "App.Web");
	/* Every line fits in 80 columns, as every text output. */
	char line[4096];
	size_t w = ts_text_overflow(t, 80, line, sizeof(line));
	TH_ASSERT_MSG(w == 0, "a line of %zu columns: %s", w, line);
	gi_buf_destroy(&out);
	json_decref(p);
}

static void compare_finds_changes(void)
{
	struct logger_arg a = {"Elixir.Logger", ":gen_event.init_it/6", "Logger", 30000};
	json_t *before =
	    build(series_finalize("complete", 10, NULL), series_make(10, logger_tweak, &a));
	json_t *after =
	    build(series_finalize("complete", 10, NULL), series_make(10, quiet_tweak, NULL));
	json_object_set_new(json_object_get(after, "session"), "id", json_string("s2"));
	json_t *c = NULL;
	TH_ASSERT_OK(fuse_compare(before, after, &c));
	json_t *recs = json_object_get(c, "recommendations");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(recs, "resolved")), 1);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(recs, "new")), 0);
	json_t *hot = json_object_get(c, "hot_modules");
	TH_ASSERT_STR_CONTAINS(dump(json_object_get(hot, "left")), "App.Web");
	TH_ASSERT_STR_CONTAINS(dump(json_object_get(hot, "entered")), "Quiet.Worker");
	/* The quiet logger (0.35% of reductions) is under the hot lists' floor. */
	TH_ASSERT_STR_CONTAINS(dump(json_object_get(hot, "left")), "Logger");
	struct gi_buf out;
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_compare_text(c, &out));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "s1 (before) -> s2 (after)");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "Recommendations resolved (1)");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "logger-bottleneck");
	gi_buf_destroy(&out);
	json_decref(c);
	/* A finding merged in one profile (rules 4 and 3 on X) matches the same
	 * subject's unmerged read-through-cache in the other: still present. */
	json_object_set_new(before, "recommendations",
	                    json_pack("[{s:i, s:s, s:s, s:[s,s], s:i}]", "rule", 4, "id",
	                              "db-backed-lookup", "subject", "X", "ids", "db-backed-lookup",
	                              "read-through-cache", "priority", 90));
	json_object_set_new(after, "recommendations",
	                    json_pack("[{s:i, s:s, s:s, s:i}]", "rule", 3, "id",
	                              "read-through-cache", "subject", "X", "priority", 70));
	TH_ASSERT_OK(fuse_compare(before, after, &c));
	recs = json_object_get(c, "recommendations");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(recs, "resolved")), 0);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(recs, "new")), 0);
	json_decref(c);
	json_decref(before);
	json_decref(after);
}

/* A profile of a broker-like node: one process far busier than the others,
 * a roster module reading mnesia (all of it from memory), a
 * disc_only_copies table on the node. */
static json_t *storage_profile(void)
{
	json_t *top = json_array();
	json_array_append_new(top, json_pack("{s:s, s:s, s:f, s:f, s:b}", "pid", "<0.200.0>",
	                                     "module", "App.Queue", "reductions_share", 0.4,
	                                     "reductions_per_second", 2e6, "logger", 0));
	for (int i = 0; i < 6; i++)
		json_array_append_new(top, json_pack("{s:s, s:s, s:f, s:b}", "pid", "<0.300.0>",
		                                     "module", "App.Channel", "reductions_share",
		                                     0.05, "logger", 0));
	json_t *w =
	    json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:{s:s, s:f, s:s, s:f, s:b}}", "module",
	              "App.Roster", "reads", 9000.0, "writes", 100.0, "operations_per_second",
	              910.0, "read_share", 0.989, "reads_per_window", 900.0, "writes_per_window",
	              10.0, "database", "storage", "mnesia", "reads_in_vm_share", 1.0, "repo",
	              "App.Store", "repo_call_share", 1.0, "data_layer", 0);
	return json_pack("{s:{s:i, s:i, s:[s]}, s:{s:{s:f}}, s:[o], s:{s:[{s:s, s:s, s:i}]}, "
	                 "s:{s:o}}",
	                 "session", "snapshot_count", 10, "schedulers_online", 2, "traced_modules",
	                 "App.Roster", "metrics", "scheduler_utilisation", "avg", 0.5, "workload",
	                 w, "storage", "mnesia_tables", "name", "roster", "storage",
	                 "disc_only_copies", "size", 100, "processes", "top_cpu", top);
}

static void storage_decides_cache_advice(void)
{
	json_t *p = storage_profile(), *recs = NULL;
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
	/* mnesia reads are ETS reads: no cache, no ETS table in front of them. */
	TH_ASSERT(ts_rec_find(p, 3, NULL) == NULL);
	TH_ASSERT(ts_rec_find(p, 4, NULL) == NULL);
	/* The disc_only_copies table under those reads: disc_copies, said once. */
	json_t *r = ts_rec_find(p, 10, "roster");
	TH_ASSERT(r != NULL);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(r, "advice")), "disc_copies");
	/* The hot queue process is the single-process ceiling (40% of the work,
	 * 8x the others, 40% of one scheduler); the channels are not. */
	r = ts_rec_find(p, 9, "App.Queue");
	TH_ASSERT(r != NULL);
	TH_ASSERT_DBL_NEAR(ts_rec_ev(r, "scheduler_share"), 0.4, 1e-9);
	TH_ASSERT(ts_rec_find(p, 9, "App.Channel") == NULL);
	/* The same reads through a driver that leaves the VM: the cache advice. */
	json_t *db = json_object_get(json_array_get(json_object_get(p, "workload"), 0), "database");
	json_object_set_new(db, "storage", json_string("external"));
	json_object_set_new(db, "reads_in_vm_share", json_real(0));
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
	TH_ASSERT(ts_rec_find(p, 3, "App.Roster") != NULL);
	/* An idle node's busiest process is no ceiling (50k reductions/s). */
	json_object_set_new(
	    json_array_get(json_object_get(json_object_get(p, "processes"), "top_cpu"), 0),
	    "reductions_per_second", json_real(50e3));
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	json_object_set_new(p, "recommendations", recs);
	TH_ASSERT(ts_rec_find(p, 9, NULL) == NULL);
	json_decref(p);
}

static void compare_needs_the_subject_observed(void)
{
	json_t *before = storage_profile(), *after = storage_profile(), *recs = NULL, *c = NULL;
	json_t *db =
	    json_object_get(json_array_get(json_object_get(before, "workload"), 0), "database");
	json_object_set_new(db, "storage", json_string("external"));
	json_object_set_new(db, "reads_in_vm_share", json_real(0));
	TH_ASSERT_OK(fuse_rules_evaluate(before, NULL, &recs));
	json_object_set_new(before, "recommendations", recs);
	TH_ASSERT(ts_rec_find(before, 3, "App.Roster") != NULL);
	/* The second profile traced nothing: the ETS finding (rules 4 and 3 on
	 * one subject) is not resolved. */
	json_object_set_new(json_object_get(after, "session"), "traced_modules", json_array());
	json_object_set_new(after, "workload", json_array());
	TH_ASSERT_OK(fuse_rules_evaluate(after, NULL, &recs));
	json_object_set_new(after, "recommendations", recs);
	TH_ASSERT_OK(fuse_compare(before, after, &c));
	json_t *cr = json_object_get(c, "recommendations");
	TH_ASSERT_STR_CONTAINS(dump(json_object_get(cr, "not_comparable")), "db-backed-lookup");
	TH_ASSERT_STR_CONTAINS(dump(json_object_get(cr, "not_comparable")),
	                       "App.Roster was not traced");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(cr, "resolved")), 0);
	json_t *v = json_object_get(c, "verdict");
	TH_ASSERT_STR_CONTAINS(dump(json_object_get(v, "reasons")), "not comparable");
	TH_ASSERT(strcmp(json_string_value(json_object_get(v, "verdict")), "better") != 0);
	struct gi_buf out;
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_compare_text(c, &out));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "Recommendations not comparable (");
	gi_buf_destroy(&out);
	json_decref(c);
	/* Traced again and quiet (the reads now from memory): resolved. */
	json_object_set_new(json_object_get(after, "session"), "traced_modules",
	                    json_pack("[s]", "App.Roster"));
	TH_ASSERT_OK(fuse_compare(before, after, &c));
	cr = json_object_get(c, "recommendations");
	TH_ASSERT_STR_CONTAINS(dump(json_object_get(cr, "resolved")), "db-backed-lookup");
	json_decref(c);
	json_decref(before);
	json_decref(after);
}

/* ---- the executing view -------------------------------------------------- */

static void add_stack(json_t *stacks, const char *const *frames, double samples, double reds)
{
	json_t *f = json_array();
	for (const char *const *x = frames; *x; x++)
		json_array_append_new(f, json_string(*x));
	json_array_append_new(stacks, json_pack("{s:o, s:f, s:f}", "frames", f, "samples", samples,
	                                        "reductions", reds));
}

/* Work run from a Task and from spawn(fn), a platform-only stack, plumbing,
 * and a busy process owned by a module that does little itself. */
static void executing_tweak(json_t *s, long seq, void *arg)
{
	(void)seq;
	(void)arg;
	/* The ownership view: who started the processes. */
	series_add_process(s, "reductions", "<0.70.0>", NULL, ":erlang.apply/2", ":erlang", 40000,
	                   1e5, 0);
	series_add_process(s, "reductions", "<0.71.0>", NULL, "Task.Supervised.invoke_mfa/2",
	                   "App.Starter", 30000, 1e5, 0);
	json_t *stacks = json_array();
	static const char *const task[] = {":lists.foldl/3", "App.Calc.run/1",
	                                   "Task.Supervised.invoke_mfa/2",
	                                   ":proc_lib.init_p_do_apply/3", NULL};
	static const char *const spawned[] = {"App.Calc.-crunch/2-fun-0-/1", ":lists.map/2",
	                                      "App.Calc.crunch/2", ":erlang.apply/2", NULL};
	static const char *const platform[] = {":ets.lookup/2", ":httpd_request_handler.loop/1",
	                                       NULL};
	static const char *const plumbing[] = {":gen_server.loop/7", ":proc_lib.init_p_do_apply/3",
	                                       NULL};
	static const char *const tiny[] = {"App.Starter.start/0", NULL};
	add_stack(stacks, task, 30, 30000);
	add_stack(stacks, spawned, 40, 40000);
	add_stack(stacks, platform, 10, 10000);
	add_stack(stacks, plumbing, 5, 5000);
	add_stack(stacks, tiny, 1, 100);
	json_t *origins = json_pack(
	    "[{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s}]", "module", "App.Calc",
	    "origin", "other", "module", ":lists", "origin", "otp", "module", "Task.Supervised",
	    "origin", "elixir", "module", ":ets", "origin", "preloaded", "module",
	    ":httpd_request_handler", "origin", "otp", "module", "App.Starter", "origin", "other");
	json_object_set_new(s, "executing",
	                    json_pack("{s:i, s:i, s:i, s:{s:i, s:i}, s:f, s:o, s:o}", "period_ms",
	                              10, "ticks", 100, "candidates", 10, "samples", "running", 86,
	                              "waiting", 14, "reductions_sampled", 85100.0, "stacks",
	                              stacks, "origins", origins));
}

/* The same samples, but of processes that did a tenth of what the first
 * tweak says: most of the node's work ran where the sampler did not look. */
static void executing_tweak_unattributed(json_t *s, long seq, void *arg)
{
	executing_tweak(s, seq, arg);
	json_object_set_new(json_object_get(s, "executing"), "reductions_sampled",
	                    json_real(8510.0));
}

/* ---- the observer's budget ------------------------------------------------ */

/* Each window's observer section: costs from the arg, a double per window. */
static void observer_tweak(json_t *s, long seq, void *arg)
{
	const double *costs = arg;
	double c = costs[seq];
	json_object_set_new(s, "observer",
	                    json_pack("{s:f, s:f, s:b, s:f, s:f, s:i, s:i}", "budget", 0.01, "cost",
	                              c, "within_budget", c <= 0.01, "share", 0.001, "counting",
	                              c - 0.001, "sample_period_ms", 100, "sample_period_used_ms",
	                              100));
}

/* The observer's bracketed line of the text report, unwrapped (static). */
static const char *observer_line(json_t *p)
{
	static char line[1024];
	char *flat = ts_report_text_flat(p);
	const char *at = strstr(flat, "[observer");
	if (!at)
		at = strstr(flat, "[OVER BUDGET");
	TH_ASSERT_MSG(at != NULL, "no observer line in:\n%s", flat);
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(at, "]"), at);
	gi_free(flat);
	return line;
}

/* The budget is a rate: a duty cycle's counting falls in some windows and not
 * in others, so windows over it with a mean within it are "within on average",
 * with the windows over it said; a mean over it is OVER BUDGET. */
static void observer_budget_is_kept_on_average(void)
{
	/* three windows in four at 1.2%, one at 0.1%: mean 0.925% */
	double within[8] = {0.012, 0.012, 0.012, 0.001, 0.012, 0.012, 0.012, 0.001};
	json_t *p =
	    build(series_finalize("complete", 8, NULL), series_make(8, observer_tweak, within));
	json_t *o = json_object_get(p, "observer");
	TH_ASSERT(json_is_true(json_object_get(o, "within_budget")));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(o, "over_budget_windows")), 6);
	const char *line = observer_line(p);
	TH_ASSERT_STR_CONTAINS(line,
	                       "within its 1.0% budget on average; over it in 6 of 8 windows");
	TH_ASSERT_STR_CONTAINS(line, "1.2% at most");
	json_decref(p);
	/* mean 1.1%: over, loudly */
	double over[8] = {0.012, 0.012, 0.012, 0.008, 0.012, 0.012, 0.012, 0.008};
	p = build(series_finalize("complete", 8, NULL), series_make(8, observer_tweak, over));
	TH_ASSERT(json_is_false(json_object_get(json_object_get(p, "observer"), "within_budget")));
	TH_ASSERT_STR_CONTAINS(observer_line(p), "[OVER BUDGET: the observer took 1.1% of a core");
	json_decref(p);
	/* every window within: no qualifier */
	double quiet[8] = {0.004, 0.004, 0.004, 0.004, 0.004, 0.004, 0.004, 0.004};
	p = build(series_finalize("complete", 8, NULL), series_make(8, observer_tweak, quiet));
	line = observer_line(p);
	TH_ASSERT_STR_CONTAINS(line, "[observer 0.4% of a core, within its 1.0% budget");
	TH_ASSERT(strstr(line, "on average") == NULL);
	json_decref(p);
}

/* Every profile says how much of the node's work its views explain, and
 * when that is little it says so first (JSON, text, HTML), with what to do. */
static void profile_says_how_much_work_is_explained(void)
{
	json_t *p =
	    build(series_finalize("complete", 10, NULL), series_make(10, executing_tweak, NULL));
	json_t *e = json_object_get(p, "explained");
	TH_ASSERT(json_is_false(json_object_get(e, "low")));
	double share = json_number_value(json_object_get(e, "share"));
	TH_ASSERT_DBL_NEAR(
	    share, json_number_value(json_object_get(json_object_get(p, "executing"), "coverage")),
	    1e-9);
	struct gi_buf out;
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_report_text(p, &out));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "the views explain");
	TH_ASSERT(strstr(gi_buf_str(&out), "MOSTLY UNATTRIBUTED") == NULL);
	gi_buf_destroy(&out);
	json_decref(p);

	p = build(series_finalize("complete", 10, NULL),
	          series_make(10, executing_tweak_unattributed, NULL));
	e = json_object_get(p, "explained");
	TH_ASSERT(json_is_true(json_object_get(e, "low")));
	TH_ASSERT(json_number_value(json_object_get(e, "share")) < 0.5 * share);
	TH_ASSERT_STR_CONTAINS(json_string_value(json_object_get(e, "note")), "--trace");
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_report_text(p, &out));
	/* at the top: before the recommendations and the metrics */
	const char *text = gi_buf_str(&out);
	const char *warn = strstr(text, "MOSTLY UNATTRIBUTED");
	TH_ASSERT(warn != NULL);
	const char *hot = strstr(text, "Hot modules");
	TH_ASSERT(hot == NULL || warn < hot);
	gi_buf_destroy(&out);
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_report_html(p, &out));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "Mostly unattributed");
	gi_buf_destroy(&out);
	json_decref(p);
}

static json_t *hot_find(json_t *list, const char *key, const char *value)
{
	for (size_t i = 0; i < json_array_size(list); i++) {
		const char *v = json_string_value(json_object_get(json_array_get(list, i), key));
		if (v && strcmp(v, value) == 0)
			return json_array_get(list, i);
	}
	return NULL;
}

static void executing_view_sees_through_wrappers(void)
{
	json_t *p =
	    build(series_finalize("complete", 10, NULL), series_make(10, executing_tweak, NULL));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(p, "hot_modules_basis")), "executing");
	json_t *hm = json_object_get(p, "hot_modules");
	/* Task and spawn(fn) work lands on the project's function, a platform
	 * call on its project caller; shares are of the node's reductions. */
	json_t *calc = json_array_get(hm, 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(calc, "module")), "App.Calc");
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(calc, "reductions_share")), 0.70,
	                   1e-9);
	TH_ASSERT(json_is_true(json_object_get(calc, "project")));
	json_t *hf = json_object_get(p, "hot_functions");
	json_t *crunch = json_array_get(hf, 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(crunch, "function")), "crunch");
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(crunch, "reductions_share")), 0.40,
	                   1e-9);
	json_t *run = hot_find(hf, "function", "run");
	TH_ASSERT(run != NULL);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(run, "reductions_share")), 0.30, 1e-9);
	TH_ASSERT(hot_find(hf, "function", "foldl") == NULL);
	/* Platform code with no project frame is named as such. */
	json_t *ets = hot_find(hm, "module", ":ets");
	TH_ASSERT(ets != NULL && json_is_false(json_object_get(ets, "project")));
	/* No wrapper, no module under the floor (App.Starter: 0.1%). */
	for (size_t i = 0; i < json_array_size(hm); i++) {
		const char *m = json_string_value(json_object_get(json_array_get(hm, i), "module"));
		TH_ASSERT_MSG(strcmp(m, ":erlang") && strcmp(m, ":proc_lib") &&
		                  strcmp(m, ":gen_server") && strcmp(m, "Task.Supervised") &&
		                  strcmp(m, "App.Starter"),
		              "hot modules name %s", m);
	}
	/* Hottest functions come from samples. */
	json_t *hot1 = json_array_get(json_object_get(calc, "hottest_functions"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(hot1, "by")), "samples");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(hot1, "name")), "crunch");
	/* The ownership view stays, labelled, and still says who started what. */
	json_t *own = json_object_get(p, "ownership_modules");
	TH_ASSERT(hot_find(own, "module", ":erlang") != NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(own, 0), "basis")),
	                 "ownership");
	json_t *ex = json_object_get(p, "executing");
	TH_ASSERT(json_is_true(json_object_get(ex, "sampled")));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(ex, "project_rule")), "target");
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(ex, "plumbing_share")), 0.05, 1e-9);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(ex, "project_share")), 0.701, 1e-9);
	/* Nothing hot-hub about a wrapper or a starter. */
	TH_ASSERT(ts_rec_find(p, 5, ":erlang") == NULL);
	/* The reports label both views. */
	struct gi_buf out;
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_report_text(p, &out));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "Hot modules (executing in");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "Hot functions (executing in");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "App.Calc.crunch/2");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "Process ownership");
	char line[4096];
	size_t w = ts_text_overflow(gi_buf_str(&out), 80, line, sizeof(line));
	TH_ASSERT_MSG(w == 0, "a line of %zu columns: %s", w, line);
	gi_buf_destroy(&out);
	gi_buf_init(&out, 0);
	TH_ASSERT_OK(fuse_report_html(p, &out));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "Hot modules (executing in)");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "Hot functions (executing in)");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&out), "Process ownership");
	gi_buf_destroy(&out);
	json_decref(p);
}

static void frames_split(void)
{
	char m[64], f[64];
	long a = -1;
	TH_ASSERT_OK(fuse_frame_split("App.Calc.run/1", m, sizeof(m), f, sizeof(f), &a));
	TH_ASSERT_STR_EQ(m, "App.Calc");
	TH_ASSERT_STR_EQ(f, "run");
	TH_ASSERT_INT_EQ(a, 1);
	TH_ASSERT_OK(fuse_frame_split(":lists.foldl/3", m, sizeof(m), f, sizeof(f), &a));
	TH_ASSERT_STR_EQ(m, ":lists");
	TH_ASSERT_OK(fuse_frame_split("A.-run/1-fun-0-/2", m, sizeof(m), f, sizeof(f), &a));
	TH_ASSERT_STR_EQ(m, "A");
	TH_ASSERT_STR_EQ(f, "-run/1-fun-0-");
	TH_ASSERT_INT_EQ(a, 2);
	TH_ASSERT(fuse_frame_split("nodot/1", m, sizeof(m), f, sizeof(f), &a) != 0);
	TH_ASSERT(fuse_frame_split("A.b/x", m, sizeof(m), f, sizeof(f), &a) != 0);
	TH_ASSERT(fuse_frame_split("A.b", m, sizeof(m), f, sizeof(f), &a) != 0);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(quiet_series_has_no_alarms),
	    TH_TEST(hot_modules_sum_interval_deltas),
	    TH_TEST(long_series_are_downsampled),
	    TH_TEST(classification_is_configurable),
	    TH_TEST(driver_table_knows_effects),
	    TH_TEST(cpu_saturation_thresholds),
	    TH_TEST(logger_bottleneck_elixir_gen_event),
	    TH_TEST(logger_bottleneck_otp_handler),
	    TH_TEST(read_through_cache_thresholds),
	    TH_TEST(the_data_layer_is_not_a_lookup),
	    TH_TEST(db_backed_lookup_from_graph_repo),
	    TH_TEST(data_layers_defer_to_their_callers),
	    TH_TEST(hot_hub_thresholds),
	    TH_TEST(mailbox_buildup_thresholds),
	    TH_TEST(memory_growth_thresholds),
	    TH_TEST(beam_not_bottleneck_thresholds),
	    TH_TEST(builder_matches_one_shot_build),
	    TH_TEST(interrupted_sessions_build),
	    TH_TEST(hostile_input_is_tolerated),
	    TH_TEST(text_report_reads_well),
	    TH_TEST(compare_finds_changes),
	    TH_TEST(storage_decides_cache_advice),
	    TH_TEST(compare_needs_the_subject_observed),
	    TH_TEST(executing_view_sees_through_wrappers),
	    TH_TEST(profile_says_how_much_work_is_explained),
	    TH_TEST(observer_budget_is_kept_on_average),
	    TH_TEST(frames_split),
	    TH_END,
	};
	return th_main(argc, argv, "unit_fuse", tests);
}
