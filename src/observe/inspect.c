/*
 * inspect.c - read-only views of one part of a live node (see inspect.h):
 * each a probe of src/observe/probe/ evaluated once by the target's rpc
 * server, with its caps sent along and its answer decoded to JSON here,
 * module names rewritten to the one form Giulia writes them.
 *
 * Invariant: nothing a user typed becomes an atom on the target; a pid is
 * checked here to be a local pid's text, a name travels as binaries the
 * target compares against its registered names.
 */
#include "observe/inspect.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/modname.h"
#include "base/str.h"
#include "observe/observe_int.h"
#include "probes.h"

#define NAME_MAX_BYTES 255

/* True when `s` is a local pid's text: "<0.N.S>" or "0.N.S"; writes the
 * "<0.N.S>" form into `out`. */
static bool pid_text(const char *s, char *out, size_t size)
{
	const char *p = s;
	bool angle = *p == '<';
	if (angle)
		p++;
	if (p[0] != '0' || p[1] != '.')
		return false;
	p += 2;
	unsigned long parts[2];
	for (int i = 0; i < 2; i++) {
		if (!isdigit((unsigned char)*p))
			return false;
		unsigned long v = 0;
		int digits = 0;
		while (isdigit((unsigned char)*p) && digits < 10) {
			v = v * 10 + (unsigned long)(*p - '0');
			p++;
			digits++;
		}
		parts[i] = v;
		if (i == 0 && *p++ != '.')
			return false;
	}
	if (angle && *p++ != '>')
		return false;
	if (*p != '\0')
		return false;
	snprintf(out, size, "<0.%lu.%lu>", parts[0], parts[1]);
	return true;
}

/* A registered name: printable UTF-8 without quotes or spaces, at most
 * NAME_MAX_BYTES. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > NAME_MAX_BYTES || !gi_utf8_valid(s, n))
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x21 || *p == 0x7f || *p == '\'' || *p == '"')
			return false;
	return true;
}

int obs_process_request_check(const struct obs_process_request *r, char *err, size_t n)
{
	char pid[64];
	if (!r->who || !*r->who) {
		snprintf(err, n, "which process? give a pid (<0.123.0>) or a registered name");
		return GI_EINVAL;
	}
	if (r->who[0] == '<' || (r->who[0] >= '0' && r->who[0] <= '9')) {
		if (!pid_text(r->who, pid, sizeof(pid))) {
			snprintf(err, n,
			         "'%.80s' is not a local pid: write it as <0.123.0> (pids of other "
			         "nodes are read on their own node)",
			         r->who);
			return GI_EINVAL;
		}
	} else if (!name_ok(r->who)) {
		snprintf(err, n,
		         "'%.80s' is not a registered name (at most %d bytes, no spaces "
		         "or quotes)",
		         r->who, NAME_MAX_BYTES);
		return GI_EINVAL;
	}
	if (r->window_ms < 0 || r->window_ms > OBS_PROCESS_WINDOW_MAX_MS) {
		snprintf(err, n, "the window is 0 to %d ms", OBS_PROCESS_WINDOW_MAX_MS);
		return GI_EINVAL;
	}
	if (r->keys_max < 0 || r->keys_max > OBS_PROCESS_KEYS_MAX) {
		snprintf(err, n, "at most %d dictionary keys", OBS_PROCESS_KEYS_MAX);
		return GI_EINVAL;
	}
	if (r->messages < 0 || r->messages > OBS_PROCESS_MESSAGES_MAX) {
		snprintf(err, n, "at most %d messages", OBS_PROCESS_MESSAGES_MAX);
		return GI_EINVAL;
	}
	if (r->state_timeout_ms < 0 || r->state_timeout_ms > OBS_PROCESS_STATE_TIMEOUT_MAX) {
		snprintf(err, n, "the state's timeout is 0 to %d ms",
		         OBS_PROCESS_STATE_TIMEOUT_MAX);
		return GI_EINVAL;
	}
	return 0;
}

static void put_long(ei_x_buff *x, const char *key, long v)
{
	ei_x_encode_atom(x, key);
	ei_x_encode_long(x, v);
}

static void put_bool(ei_x_buff *x, const char *key, bool v)
{
	ei_x_encode_atom(x, key);
	ei_x_encode_atom(x, v ? "true" : "false");
}

static void put_binary(ei_x_buff *x, const char *s)
{
	ei_x_encode_binary(x, s, (long)strlen(s));
}

/* {name, [Candidate...]}: the name as given (without a leading ':'), and
 * "Elixir.Name" for a name written the Elixir way. */
static void encode_name(ei_x_buff *x, const char *who)
{
	char elixir[NAME_MAX_BYTES + 16];
	const char *plain = who[0] == ':' && who[1] ? who + 1 : who;
	bool add_elixir = isupper((unsigned char)who[0]) && !gi_str_starts_with(who, "Elixir.");
	if (add_elixir)
		snprintf(elixir, sizeof(elixir), "Elixir.%s", who);
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_atom(x, "name");
	ei_x_encode_list_header(x, add_elixir ? 2 : 1);
	put_binary(x, plain);
	if (add_elixir)
		put_binary(x, elixir);
	ei_x_encode_empty_list(x);
}

static void encode_process_args(const struct obs_process_request *r, ei_x_buff *x)
{
	ei_x_new(x);
	ei_x_encode_map_header(x, 12);
	ei_x_encode_atom(x, "who");
	char pid[64];
	if (pid_text(r->who, pid, sizeof(pid))) {
		ei_x_encode_tuple_header(x, 2);
		ei_x_encode_atom(x, "pid");
		put_binary(x, pid);
	} else {
		encode_name(x, r->who);
	}
	put_long(x, "window_ms", r->window_ms ? r->window_ms : OBS_PROCESS_WINDOW_DEFAULT_MS);
	put_long(x, "stack_depth", OBS_PROCESS_STACK_MAX);
	put_long(x, "list_max", OBS_PROCESS_LIST_MAX);
	put_long(x, "keys_max", r->keys_max ? r->keys_max : OBS_PROCESS_KEYS_DEFAULT);
	put_long(x, "state_chars", OBS_PROCESS_STATE_CHARS);
	put_bool(x, "dict_values", r->dictionary_values);
	put_long(x, "messages", r->messages);
	put_long(x, "messages_copy_max", OBS_PROCESS_COPY_MAX);
	put_bool(x, "state", r->state);
	put_long(x, "state_timeout_ms",
	         r->state_timeout_ms ? r->state_timeout_ms : OBS_PROCESS_STATE_TIMEOUT_MS);
	put_long(x, "item_chars", OBS_PROCESS_TEXT_CHARS);
}

/* ["Elixir.Foo", "bar", 1] -> "Foo.bar/1"; anything else -> null. */
static json_t *mfa_json(json_t *v)
{
	const char *m = json_string_value(json_array_get(v, 0));
	const char *f = json_string_value(json_array_get(v, 1));
	json_t *a = json_array_get(v, 2);
	char mod[1024];
	if (!json_is_array(v) || json_array_size(v) != 3 || !m || !f || !json_is_integer(a) ||
	    gi_module_display_name(m, mod, sizeof(mod)) != 0)
		return json_null();
	char text[2048];
	int len =
	    snprintf(text, sizeof(text), "%s.%s/%lld", mod, f, (long long)json_integer_value(a));
	return len > 0 && (size_t)len < sizeof(text) ? json_string(text) : json_null();
}

static void rewrite_mfa(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (v)
		json_object_set_new(obj, key, mfa_json(v));
}

/* The probe's map, module names in Giulia's form; the stack's entries get
 * "function" for their {M, F, A}. */
void obs_process_json_rewrite(json_t *p)
{
	rewrite_mfa(p, "current_function");
	rewrite_mfa(p, "initial_call");
	rewrite_mfa(p, "proc_lib_initial_call");
	size_t i;
	json_t *frame;
	json_array_foreach(json_object_get(p, "stack"), i, frame)
	{
		json_object_set_new(frame, "function", mfa_json(json_object_get(frame, "mfa")));
		json_object_del(frame, "mfa");
	}
}

/* Evaluates probe `src` with `args` on `c` until `deadline` and decodes
 * its {ok, Map} answer into *body (the caller's); {error, _} gives
 * GI_ENOTFOUND, anything else GI_EBADRPC. */
static int probe_eval(struct dist_conn *c, const char *src, size_t len, ei_x_buff *args,
                      int64_t deadline, json_t **body)
{
	*body = NULL;
	ei_x_buff reply;
	ei_x_new(&reply);
	int index = 0;
	json_t *value = NULL;
	int rc = dist_eval(c, src, len, args, deadline, &reply, &index);
	if (rc != 0)
		goto out;
	if (obs_term_to_json(reply.buff, reply.index, &index, &value) != 0) {
		rc = GI_EBADRPC;
		goto out;
	}
	/* ["ok", Map] or ["error", Reason] */
	const char *tag = json_string_value(json_array_get(value, 0));
	json_t *map = json_array_get(value, 1);
	if (tag && strcmp(tag, "error") == 0) {
		rc = GI_ENOTFOUND;
		goto out;
	}
	if (!tag || strcmp(tag, "ok") != 0 || !json_is_object(map)) {
		rc = GI_EBADRPC;
		goto out;
	}
	*body = json_incref(map);
	json_object_set_new(*body, "node", json_string(dist_node(c)));
out:
	json_decref(value);
	ei_x_free(&reply);
	return rc;
}

/* Runs the process probe on `c` and decodes its answer. */
static int process_on(struct dist_conn *c, const struct obs_process_request *r, json_t **out)
{
	*out = NULL;
	char err[256];
	if (obs_process_request_check(r, err, sizeof(err)) != 0)
		return GI_EINVAL;
	ei_x_buff args;
	encode_process_args(r, &args);
	int window = r->window_ms ? r->window_ms : OBS_PROCESS_WINDOW_DEFAULT_MS;
	int state = r->state
	                ? (r->state_timeout_ms ? r->state_timeout_ms : OBS_PROCESS_STATE_TIMEOUT_MS)
	                : 0;
	int64_t deadline = gi_clock_mono_ms() + dist_timeout_ms(c) + window + state;
	int rc = probe_eval(c, probe_process, probe_process_len, &args, deadline, out);
	if (rc == 0)
		obs_process_json_rewrite(*out);
	ei_x_free(&args);
	return rc;
}

/* Connects to `t`, runs `view` with `req` over the connection, closes. */
typedef int (*view_fn)(struct dist_conn *c, const void *req, json_t **out);
static int view_once(const struct obs_target *t, view_fn view, const void *req, json_t **out)
{
	struct dist_conn *c = NULL;
	int rc = obs_oneshot_prepare(t, NULL, NULL, &c, NULL, NULL);
	if (rc != 0)
		return rc;
	rc = view(c, req, out);
	obs_oneshot_finish(c, NULL, NULL);
	return rc;
}

static int process_view(struct dist_conn *c, const void *req, json_t **out)
{
	return process_on(c, req, out);
}

int obs_process(const struct obs_target *t, const struct obs_process_request *r, json_t **out)
{
	*out = NULL;
	char err[256];
	if (obs_process_request_check(r, err, sizeof(err)) != 0)
		return GI_EINVAL;
	return view_once(t, process_view, r, out);
}

int obs_watch_process(struct obs_watch *w, const struct obs_process_request *r, json_t **out)
{
	return process_on(obs_watch_conn(w), r, out);
}

/* ---- ETS ---- */

static int ets_view(struct dist_conn *c, const void *req, json_t **out)
{
	const struct obs_ets_request *r = req;
	const char *sort = r->sort ? r->sort : "memory";
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_map_header(&args, 3);
	ei_x_encode_atom(&args, "sort");
	ei_x_encode_atom(&args, sort);
	put_long(&args, "max", r->limit ? r->limit : OBS_ETS_LIMIT_DEFAULT);
	put_long(&args, "scan_max", OBS_ETS_SCAN_MAX);
	int rc = probe_eval(c, probe_ets, probe_ets_len, &args,
	                    gi_clock_mono_ms() + dist_timeout_ms(c), out);
	if (rc == 0)
		json_object_set_new(*out, "sort", json_string(sort));
	ei_x_free(&args);
	return rc;
}

int obs_ets(const struct obs_target *t, const struct obs_ets_request *r, json_t **out)
{
	*out = NULL;
	if ((r->sort && strcmp(r->sort, "memory") != 0 && strcmp(r->sort, "size") != 0) ||
	    r->limit < 0 || r->limit > OBS_ETS_LIMIT_MAX)
		return GI_EINVAL;
	return view_once(t, ets_view, r, out);
}

/* ---- ports and sockets ---- */

static int ports_view(struct dist_conn *c, const void *req, json_t **out)
{
	const struct obs_ports_request *r = req;
	int window = r->window_ms ? r->window_ms : OBS_PORTS_WINDOW_DEFAULT_MS;
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_map_header(&args, 4);
	/* our node name: the probe leaves our own connection out */
	ei_x_encode_atom(&args, "cnode");
	put_binary(&args, ei_thisnodename(&c->ec));
	put_long(&args, "window_ms", window);
	put_long(&args, "max", r->limit ? r->limit : OBS_PORTS_LIMIT_DEFAULT);
	put_long(&args, "scan_max", OBS_PORTS_SCAN_MAX);
	int rc = probe_eval(c, probe_ports, probe_ports_len, &args,
	                    gi_clock_mono_ms() + dist_timeout_ms(c) + window, out);
	ei_x_free(&args);
	return rc;
}

int obs_ports(const struct obs_target *t, const struct obs_ports_request *r, json_t **out)
{
	*out = NULL;
	if (r->window_ms < 0 || r->window_ms > OBS_PORTS_WINDOW_MAX_MS || r->limit < 0 ||
	    r->limit > OBS_PORTS_LIMIT_MAX)
		return GI_EINVAL;
	return view_once(t, ports_view, r, out);
}

/* ---- applications and supervision ---- */

static int apps_view(struct dist_conn *c, const void *req, json_t **out)
{
	const struct obs_apps_request *r = req;
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_map_header(&args, 7);
	ei_x_encode_atom(&args, "app");
	if (r->app)
		put_binary(&args, r->app);
	else
		ei_x_encode_atom(&args, "null");
	put_long(&args, "depth", r->depth ? r->depth : OBS_APPS_DEPTH_DEFAULT);
	put_long(&args, "width", r->width ? r->width : OBS_APPS_WIDTH_DEFAULT);
	put_long(&args, "nodes_max", OBS_APPS_NODES_MAX);
	put_long(&args, "scan_max", OBS_APPS_SCAN_MAX);
	put_long(&args, "call_timeout_ms", OBS_APPS_CALL_MS);
	put_long(&args, "budget_ms", OBS_APPS_BUDGET_MS);
	int rc = probe_eval(
	    c, probe_apps, probe_apps_len, &args,
	    gi_clock_mono_ms() + dist_timeout_ms(c) + OBS_APPS_BUDGET_MS + OBS_APPS_CALL_MS, out);
	ei_x_free(&args);
	return rc;
}

int obs_apps(const struct obs_target *t, const struct obs_apps_request *r, json_t **out)
{
	*out = NULL;
	if ((r->app && !name_ok(r->app)) || r->depth < 0 || r->depth > OBS_APPS_DEPTH_MAX ||
	    r->width < 0 || r->width > OBS_APPS_WIDTH_MAX)
		return GI_EINVAL;
	return view_once(t, apps_view, r, out);
}

/* ---- allocators and binary leaks ---- */

static int alloc_view(struct dist_conn *c, const void *req, json_t **out)
{
	const int *limit = req;
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_map_header(&args, 1);
	put_long(&args, "max", *limit ? *limit : OBS_ALLOC_LIMIT_DEFAULT);
	int rc = probe_eval(c, probe_alloc, probe_alloc_len, &args,
	                    gi_clock_mono_ms() + dist_timeout_ms(c), out);
	ei_x_free(&args);
	return rc;
}

int obs_alloc(const struct obs_target *t, int limit, json_t **out)
{
	*out = NULL;
	if (limit < 0 || limit > OBS_ALLOC_LIMIT_MAX)
		return GI_EINVAL;
	return view_once(t, alloc_view, &limit, out);
}

static int binleak_view(struct dist_conn *c, const void *req, json_t **out)
{
	const int *limit = req;
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_map_header(&args, 3);
	put_long(&args, "max", *limit ? *limit : OBS_BINLEAK_LIMIT_DEFAULT);
	put_long(&args, "scan_max", OBS_BINLEAK_SCAN_MAX);
	put_long(&args, "budget_ms", OBS_BINLEAK_BUDGET_MS);
	/* the budget stops new work; one process's GC and the answer follow */
	int rc = probe_eval(c, probe_binleak, probe_binleak_len, &args,
	                    gi_clock_mono_ms() + dist_timeout_ms(c) + OBS_BINLEAK_BUDGET_MS, out);
	if (rc == 0) {
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(*out, "processes"), i, p)
		{
			rewrite_mfa(p, "current_function");
			rewrite_mfa(p, "initial_call");
		}
	}
	ei_x_free(&args);
	return rc;
}

int obs_binleak(const struct obs_target *t, int limit, json_t **out)
{
	*out = NULL;
	if (limit < 0 || limit > OBS_BINLEAK_LIMIT_MAX)
		return GI_EINVAL;
	return view_once(t, binleak_view, &limit, out);
}
