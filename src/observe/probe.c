/*
 * probe.c - the C node's side of the session process protocol (see
 * observe_int.h and the parts in probe/session/): starting the process, sending
 * requests and recognising replies.
 *
 * Module names from the user are sent as candidate atom texts (binaries);
 * the target only looks them up with binary_to_existing_atom.
 */
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/modname.h"
#include "base/str.h"
#include "observe/observe.h"
#include "observe/observe_int.h"
#include "probes.h"

static void encode_binary_str(ei_x_buff *x, const char *s)
{
	ei_x_encode_binary(x, s, (long)strlen(s));
}

/* The atom texts the target tries, in order, for the module written
 * `display` (at most two, in out[0..n)): "Foo.Bar" -> Elixir.Foo.Bar;
 * ":ets" -> ets; a bare lowercase name such as "lists" is tried as an
 * Erlang module too. */
static int module_candidates(const char *display, char out[2][512])
{
	int n = 0;
	if (gi_module_atom_name(display, out[n], sizeof(out[n])) == 0)
		n++;
	if (display[0] >= 'a' && display[0] <= 'z' && gi_strlcpy(out[n], display, 512) == 0)
		n++;
	return n;
}

bool obs_module_same(const char *a, const char *b)
{
	char ca[2][512], cb[2][512];
	int na = module_candidates(a, ca), nb = module_candidates(b, cb);
	if (strcmp(a, b) == 0)
		return true;
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++)
			if (strcmp(ca[i], cb[j]) == 0)
				return true;
	return false;
}

size_t obs_modules_merge(const char *const *in, const char **out, size_t max)
{
	size_t n = 0;
	for (const char *const *m = in; m && *m && n < max; m++) {
		bool seen = false;
		for (size_t i = 0; i < n && !seen; i++)
			seen = obs_module_same(out[i], *m);
		if (!seen)
			out[n++] = *m;
	}
	return n;
}

/* {DisplayName, [Candidate...]} (module_candidates). */
static void encode_module(ei_x_buff *x, const char *display)
{
	char cand[2][512];
	int n = module_candidates(display, cand);
	ei_x_encode_tuple_header(x, 2);
	encode_binary_str(x, display);
	if (n > 0)
		ei_x_encode_list_header(x, n);
	for (int i = 0; i < n; i++)
		encode_binary_str(x, cand[i]);
	ei_x_encode_empty_list(x);
}

void obs_probe_start_args(struct dist_conn *c, const struct obs_probe_config *cfg, ei_x_buff *out)
{
	ei_x_buff term;
	ei_x_new(&term);
	/* A module named twice (":relkv" and "relkv") is one module on the
	 * target, whose maps are keyed by it: it is sent once. */
	const char *mods[OBS_MAX_MODULES];
	size_t nmods = obs_modules_merge(cfg->modules, mods, OBS_MAX_MODULES);
	ei_x_encode_map_header(&term, 22);
	ei_x_encode_atom(&term, "owner");
	ei_x_encode_pid(&term, ei_self(&c->ec));
	ei_x_encode_atom(&term, "cnode");
	ei_x_encode_atom(&term, ei_thisnodename(&c->ec));
	ei_x_encode_atom(&term, "id");
	encode_binary_str(&term, cfg->session_id ? cfg->session_id : "");
	ei_x_encode_atom(&term, "lease_ms");
	ei_x_encode_long(&term, cfg->lease_ms);
	ei_x_encode_atom(&term, "top_n");
	ei_x_encode_long(&term, cfg->top_n);
	ei_x_encode_atom(&term, "scan_cap");
	ei_x_encode_long(&term, OBS_SCAN_CAP);
	ei_x_encode_atom(&term, "chunk");
	ei_x_encode_long(&term, OBS_SCAN_CHUNK);
	ei_x_encode_atom(&term, "budget_ms");
	ei_x_encode_long(&term, cfg->budget_ms);
	ei_x_encode_atom(&term, "modules");
	if (nmods > 0) {
		ei_x_encode_list_header(&term, (long)nmods);
		for (size_t i = 0; i < nmods; i++)
			encode_module(&term, mods[i]);
	}
	ei_x_encode_empty_list(&term);
	ei_x_encode_atom(&term, "sample_period_ms");
	ei_x_encode_long(&term, cfg->sample_period_ms);
	ei_x_encode_atom(&term, "sample_k");
	ei_x_encode_long(&term, cfg->sample_processes);
	ei_x_encode_atom(&term, "sample_stack_k");
	ei_x_encode_long(&term, cfg->sample_stacks);
	ei_x_encode_atom(&term, "sample_depth");
	ei_x_encode_long(&term, cfg->sample_depth);
	ei_x_encode_atom(&term, "self_exclude");
	ei_x_encode_atom(&term, "true");
	ei_x_encode_atom(&term, "call_time");
	ei_x_encode_atom(&term, cfg->call_time ? "true" : "false");
	ei_x_encode_atom(&term, "flag_cap");
	ei_x_encode_long(&term, cfg->flag_cap > 0 ? cfg->flag_cap : OBS_FLAG_CAP);
	ei_x_encode_atom(&term, "overhead");
	ei_x_encode_double(&term, cfg->overhead > 0 && cfg->overhead < 1 ? cfg->overhead : 0.0);
	ei_x_encode_atom(&term, "interval_ms");
	ei_x_encode_long(&term, cfg->interval_ms > 0 ? cfg->interval_ms : 1000);
	ei_x_encode_atom(&term, "pause_above");
	ei_x_encode_double(&term, cfg->pause_above > 0 ? cfg->pause_above : 0.0);
	ei_x_encode_atom(&term, "guest_budget");
	ei_x_encode_double(&term, cfg->guest_budget > 0 && cfg->guest_budget <= 1
	                              ? cfg->guest_budget
	                              : OBS_GUEST_BUDGET_DEFAULT);
	ei_x_encode_atom(&term, "oneshot");
	ei_x_encode_atom(&term, cfg->oneshot ? "true" : "false");
	/* the session's text, evaluated by the session process itself
	 * (session_start.erl says why) */
	ei_x_encode_atom(&term, "body");
	ei_x_encode_binary(&term, probe_session, (long)probe_session_len);
	dist_eval_args_encode(out, probe_session_start, probe_session_start_len, &term);
	ei_x_free(&term);
}

void obs_sample_params(int period_ms, int processes, struct obs_probe_config *cfg)
{
	if (period_ms < 0) {
		cfg->sample_period_ms = 0;
	} else {
		if (period_ms == 0)
			period_ms = OBS_SAMPLE_PERIOD_DEFAULT_MS;
		if (period_ms < OBS_SAMPLE_PERIOD_MIN_MS)
			period_ms = OBS_SAMPLE_PERIOD_MIN_MS;
		if (period_ms > OBS_SAMPLE_PERIOD_MAX_MS)
			period_ms = OBS_SAMPLE_PERIOD_MAX_MS;
		cfg->sample_period_ms = period_ms;
	}
	if (processes <= 0)
		processes = OBS_SAMPLE_PROCESSES_DEFAULT;
	if (processes > OBS_SAMPLE_PROCESSES_MAX)
		processes = OBS_SAMPLE_PROCESSES_MAX;
	cfg->sample_processes = processes;
	cfg->sample_stacks =
	    OBS_SAMPLE_STACKS_DEFAULT < processes ? OBS_SAMPLE_STACKS_DEFAULT : processes;
	cfg->sample_depth = OBS_SAMPLE_DEPTH_DEFAULT;
}

static json_t *display_names(json_t *atoms)
{
	json_t *out = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(atoms, i, v)
	{
		char name[512];
		const char *s = json_string_value(v);
		if (s && gi_module_display_name(s, name, sizeof(name)) == 0)
			json_array_append_new(out, json_string(name));
	}
	return out;
}

int obs_probe_start_parse(const char *buf, int len, int *index, struct obs_probe *p)
{
	memset(p, 0, sizeof(*p));
	int arity = 0;
	char tag[MAXATOMLEN_UTF8];
	if (ei_decode_tuple_header(buf, index, &arity) < 0 || ei_decode_atom(buf, index, tag) < 0)
		return GI_EBADRPC;
	if (strcmp(tag, "ok") != 0 || arity != 3)
		return GI_EBADRPC;
	if (ei_decode_pid(buf, index, &p->pid) < 0)
		return GI_EBADRPC;
	json_t *info = NULL;
	if (obs_term_to_json(buf, len, index, &info) != 0 || !json_is_object(info)) {
		json_decref(info);
		return GI_EBADRPC;
	}
	json_t *errors = json_object_get(info, "trace_errors");
	p->trace_errors = json_is_array(errors) ? json_incref(errors) : json_array();
	p->traced = display_names(json_object_get(info, "traced"));
	json_decref(info);
	p->next_ref = 1;
	return 0;
}

int obs_probe_start(struct dist_conn *c, const struct obs_probe_config *cfg, int64_t deadline_ms,
                    struct obs_probe *p)
{
	memset(p, 0, sizeof(*p));
	ei_x_buff args, reply;
	obs_probe_start_args(c, cfg, &args);
	ei_x_new(&reply);
	int index = 0;
	int rc = dist_rpc(c, "erl_eval", "expr", &args, deadline_ms, &reply, &index);
	if (rc == 0)
		rc = obs_probe_start_parse(reply.buff, reply.index, &index, p);
	ei_x_free(&args);
	ei_x_free(&reply);
	return rc;
}

/* Initialises `x` (the caller frees it) with the head of a request to
 * `p`, {giulia, Ref, then the request's term to follow; returns Ref. */
static long request_begin(struct obs_probe *p, ei_x_buff *x)
{
	long ref = p->next_ref++;
	ei_x_new_with_version(x);
	ei_x_encode_tuple_header(x, 3);
	ei_x_encode_atom(x, "giulia");
	ei_x_encode_long(x, ref);
	return ref;
}

int obs_probe_send(struct dist_conn *c, struct obs_probe *p, const char *request, long *ref_out)
{
	ei_x_buff x;
	long ref = request_begin(p, &x);
	ei_x_encode_atom(&x, request);
	int rc = dist_send(c, &p->pid, &x, gi_clock_mono_ms() + c->timeout_ms);
	ei_x_free(&x);
	if (rc == 0)
		*ref_out = ref;
	return rc;
}

int obs_probe_classify(const ei_x_buff *x, long *ref_out, int *index)
{
	int i = 0, version, arity;
	char atom[MAXATOMLEN_UTF8];
	if (ei_decode_version(x->buff, &i, &version) < 0 ||
	    ei_decode_tuple_header(x->buff, &i, &arity) < 0 || arity != 3 ||
	    ei_decode_atom(x->buff, &i, atom) < 0 || strcmp(atom, "giulia") != 0)
		return 0;
	int save = i;
	long ref = 0;
	if (ei_decode_long(x->buff, &i, &ref) == 0) {
		*ref_out = ref;
		*index = i;
		return 1;
	}
	i = save;
	if (ei_decode_atom(x->buff, &i, atom) == 0 && strcmp(atom, "end") == 0) {
		*index = i;
		return 2;
	}
	return 0;
}

int obs_probe_call(struct dist_conn *c, struct obs_probe *p, const char *request,
                   int64_t deadline_ms, ei_x_buff *reply, int *index)
{
	long ref = 0;
	int rc = obs_probe_send(c, p, request, &ref);
	if (rc != 0)
		return rc;
	erlang_msg msg;
	for (;;) {
		rc = dist_receive(c, &msg, reply, deadline_ms);
		if (rc != 0)
			return rc;
		long got = 0;
		int kind = obs_probe_classify(reply, &got, index);
		if (kind == 1 && got == ref)
			return 0;
		if (kind == 2)
			return GI_ENODEDOWN; /* the session process ended on its own */
	}
}

int obs_probe_attach(struct dist_conn *c, struct obs_probe *p, int64_t deadline_ms)
{
	/* Asked first through rex, which always answers: a session process
	 * that is gone (its lease expired, the node restarted) is a clear
	 * answer, not a silence until the deadline. */
	ei_x_buff args, reply;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_pid(&args, &p->pid);
	ei_x_encode_empty_list(&args);
	ei_x_new(&reply);
	int index = 0;
	int rc = dist_rpc(c, "erlang", "is_process_alive", &args, deadline_ms, &reply, &index);
	char atom[MAXATOMLEN_UTF8] = "";
	if (rc == 0 && (ei_decode_atom(reply.buff, &index, atom) < 0 || strcmp(atom, "true") != 0))
		rc = GI_ENOTFOUND;
	else if (rc == GI_EBADRPC)
		rc = GI_ENOTFOUND; /* a pid of an earlier incarnation of the node */
	ei_x_free(&args);
	if (rc)
		goto out;
	ei_x_buff x;
	long ref = request_begin(p, &x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "attach");
	ei_x_encode_pid(&x, ei_self(&c->ec));
	rc = dist_send(c, &p->pid, &x, deadline_ms);
	ei_x_free(&x);
	erlang_msg msg;
	while (rc == 0) {
		rc = dist_receive(c, &msg, &reply, deadline_ms);
		long got = 0;
		if (rc == 0) {
			int kind = obs_probe_classify(&reply, &got, &index);
			if (kind == 1 && got == ref)
				break;
			if (kind == 2)
				rc = GI_ENOTFOUND; /* it ended just now */
		}
	}
out:
	ei_x_free(&reply);
	return rc;
}

void obs_probe_destroy(struct obs_probe *p)
{
	json_decref(p->trace_errors);
	json_decref(p->traced);
	p->trace_errors = NULL;
	p->traced = NULL;
}
