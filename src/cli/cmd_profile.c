/*
 * cmd_profile.c - the profile commands of the giulia CLI (see cli.h):
 *
 *   giulia profile ID|latest [--format text|json|html] [--out FILE]
 *   giulia compare ID1 ID2 [--format text|json] [--out FILE]
 *
 * Both fetch stored profiles from the worker over HTTP (GIULIA_WORKER_URL,
 * default http://127.0.0.1:4000; GIULIA_TOKEN is sent as a bearer token when
 * set) and render them with src/fuse. `compare` fetches both profiles and
 * compares them here, so it needs nothing from the worker but its profiles.
 * The worker answers GET /api/runtime/profile/:id with the stored row
 * {id, session_id, ..., profile: {...}}; a bare profile is accepted too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "net/client.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/str.h"
#include "base/table.h"
#include "cli/cli.h"
#include "fuse/fuse.h"

#define PROFILE_USAGE "ID|SESSION|latest [--format text|json|html] [--out FILE] [--worker URL]"
#define LIST_USAGE    "[--limit N] [--json] [--worker URL]"
#define COMPARE_USAGE "ID1 ID2 [--format text|json] [--out FILE] [--worker URL]"

static const char *worker_url(void)
{
	return cli_worker_url();
}

/* GET base+path through the API client; *status and *body (caller decrefs;
 * NULL when the answer was not JSON) on success. */
int cli_worker_get(const char *path, int *status, json_t **body)
{
	char url[2048];
	const char *base = worker_url();
	size_t blen = strlen(base);
	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	if ((size_t)snprintf(url, sizeof(url), "%.*s%s", (int)blen, base, path) >= sizeof(url))
		return GI_EINVAL;
	struct net_call call = {"GET", url, NULL, getenv("GIULIA_TOKEN"), 60000};
	net_client_global_init();
	return net_client_call(&call, status, body);
}

/* The profile id of the observation whose session id is or starts with
 * `session` (at least 4 characters, unique), as git takes a commit's prefix.
 * Returns 0 and *id, or prints why and returns GI_ENOTFOUND / GI_EINVAL. */
static int profile_of_session(const char *session, int64_t *id)
{
	int status = 0;
	json_t *j = NULL;
	int rc = cli_worker_get("/api/runtime/observations?limit=1000", &status, &j);
	if (rc != 0 || status != 200) {
		fprintf(stderr, "giulia: cannot list the observations of the worker at %s: %s\n",
		        cli_worker_url(), rc ? gi_strerror(rc) : "it refused");
		json_decref(j);
		return rc ? rc : GI_EHTTP;
	}
	size_t i, matches = 0, len = strlen(session);
	json_t *o, *found = NULL;
	json_array_foreach(json_object_get(j, "observations"), i, o)
	{
		const char *sid = json_string_value(json_object_get(o, "session_id"));
		if (sid && strncasecmp(sid, session, len) == 0) {
			matches++;
			found = o;
		}
	}
	rc = 0;
	if (matches == 0) {
		fprintf(stderr, "giulia: no observation %s (see `giulia observations`)\n", session);
		rc = GI_ENOTFOUND;
	} else if (matches > 1) {
		fprintf(stderr, "giulia: %zu observations start with %s; give more digits\n",
		        matches, session);
		rc = GI_EINVAL;
	} else if (!json_is_integer(json_object_get(found, "profile_id"))) {
		fprintf(stderr, "giulia: observation %s has no profile yet (status %s)\n", session,
		        json_string_value(json_object_get(found, "status")));
		rc = GI_ENOTFOUND;
	} else {
		*id = json_integer_value(json_object_get(found, "profile_id"));
	}
	json_decref(j);
	return rc;
}

/* Fetches profile `id`: latest, the profile's number, or its observation's
 * session id (the hex id of the report's header, or a prefix of it). *out:
 * caller decrefs. */
static int profile_fetch(const char *id, json_t **out)
{
	*out = NULL;
	int64_t n = 0;
	bool number = strlen(id) < 16 && gi_parse_int64(id, 1, INT64_MAX, &n) == 0;
	if (strcmp(id, "latest") != 0 && !number) {
		if (strlen(id) < 4 || strchr(id, '/') || strchr(id, '?') || strchr(id, '&')) {
			fprintf(stderr,
			        "giulia: a profile is named by its number, its session id (or a "
			        "unique prefix of at least 4 characters) or `latest`, not '%s'\n",
			        id);
			return GI_EINVAL;
		}
		int rc = profile_of_session(id, &n);
		if (rc)
			return rc;
	}
	char path[128];
	if (n > 0)
		snprintf(path, sizeof(path), "/api/runtime/profile/%lld", (long long)n);
	else
		snprintf(path, sizeof(path), "/api/runtime/profile/latest");
	int status = 0;
	json_t *j = NULL;
	int rc = cli_worker_get(path, &status, &j);
	if (rc != 0) {
		fprintf(stderr, "giulia: cannot fetch profile %s from the worker at %s: %s%s\n", id,
		        worker_url(), gi_strerror(rc),
		        rc == GI_ECONNECT ? " (is `giulia worker` or `giulia serve` running? give "
		                            "--worker URL)"
		                          : "");
		return rc;
	}
	if (status != 200) {
		const char *msg = j ? json_string_value(json_object_get(j, "message")) : NULL;
		if (!msg && j)
			msg = json_string_value(json_object_get(j, "error"));
		fprintf(stderr, "giulia: the worker answered %d for profile %s%s%s\n", status, id,
		        msg ? ": " : "", msg ? msg : "");
		json_decref(j);
		rc = status == 404 ? GI_ENOTFOUND : GI_EHTTP;
		return rc;
	}
	if (!json_is_object(j)) {
		fprintf(stderr, "giulia: the worker's answer for profile %s is not a JSON object\n",
		        id);
		json_decref(j);
		rc = GI_EPARSE;
		return rc;
	}
	json_t *inner = json_object_get(j, "profile");
	if (json_is_object(inner)) {
		*out = json_incref(inner);
		json_decref(j);
	} else {
		*out = j;
	}
	return 0;
}

struct out_opts {
	const char *format, *out;
	const char *pos[3];
	int npos;
};

static int parse_opts(int argc, char **argv, struct out_opts *o, int max_pos)
{
	memset(o, 0, sizeof(*o));
	o->format = "text";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			return 1;
		if ((strcmp(a, "--format") == 0 || strcmp(a, "--out") == 0) && i + 1 < argc) {
			if (a[2] == 'f')
				o->format = argv[++i];
			else
				o->out = argv[++i];
		} else if (strcmp(a, "--worker") == 0 && i + 1 < argc) {
			cli_worker_url_set(argv[++i]);
		} else if (gi_str_starts_with(a, "--worker=")) {
			cli_worker_url_set(a + 9);
		} else if (gi_str_starts_with(a, "--format=")) {
			o->format = a + 9;
		} else if (gi_str_starts_with(a, "--out=")) {
			o->out = a + 6;
		} else if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr, "giulia: unknown option '%s'\n", a);
			return -1;
		} else if (o->npos < max_pos) {
			o->pos[o->npos++] = a;
		} else {
			fprintf(stderr, "giulia: unexpected argument '%s'\n", a);
			return -1;
		}
	}
	return 0;
}

static int emit(const struct out_opts *o, const struct gi_buf *b)
{
	if (o->out) {
		int rc = gi_fs_write_file(o->out, b->data ? b->data : "", b->len);
		if (rc)
			fprintf(stderr, "giulia: cannot write %s: %s\n", o->out, gi_strerror(rc));
		return rc;
	}
	fwrite(b->data ? b->data : "", 1, b->len, stdout);
	return fflush(stdout) == 0 ? 0 : GI_EIO;
}

static int dump_json(json_t *j, struct gi_buf *b)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
	if (!s)
		return GI_ENOMEM;
	int rc = gi_buf_puts(b, s);
	if (rc == 0)
		rc = gi_buf_puts(b, "\n");
	free(s);
	return rc;
}

static int run_profile(int argc, char **argv)
{
	struct out_opts o;
	int p = parse_opts(argc, argv, &o, 1);
	if (p != 0 || o.npos != 1) {
		if (p == 1)
			cli_help_print(stdout, "giulia",
			               cli_command_find(cli_profile_commands, "profile"));
		else
			fprintf(stderr, "usage: giulia profile %s\n", PROFILE_USAGE);
		return p == 1 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	if (strcmp(o.format, "text") != 0 && strcmp(o.format, "json") != 0 &&
	    strcmp(o.format, "html") != 0) {
		fprintf(stderr, "giulia: --format must be text, json or html, not '%s'\n",
		        o.format);
		return CLI_EXIT_USAGE;
	}
	json_t *profile = NULL;
	int rc = profile_fetch(o.pos[0], &profile);
	if (rc == GI_EINVAL)
		return CLI_EXIT_USAGE;
	if (rc)
		return cli_exit_code_for(rc);
	struct gi_buf b;
	gi_buf_init(&b, 0);
	if (strcmp(o.format, "json") == 0)
		rc = dump_json(profile, &b);
	else if (strcmp(o.format, "html") == 0)
		rc = fuse_report_html(profile, &b);
	else
		rc = fuse_report_text(profile, &b);
	if (rc == 0)
		rc = emit(&o, &b);
	else
		fprintf(stderr, "giulia: cannot render the profile: %s\n", gi_strerror(rc));
	gi_buf_destroy(&b);
	json_decref(profile);
	return cli_exit_code_for(rc);
}

static int run_compare(int argc, char **argv)
{
	struct out_opts o;
	int p = parse_opts(argc, argv, &o, 2);
	if (p != 0 || o.npos != 2) {
		if (p == 1)
			cli_help_print(stdout, "giulia",
			               cli_command_find(cli_profile_commands, "compare"));
		else
			fprintf(stderr, "usage: giulia compare %s\n", COMPARE_USAGE);
		return p == 1 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	if (strcmp(o.format, "text") != 0 && strcmp(o.format, "json") != 0) {
		fprintf(stderr, "giulia: --format must be text or json, not '%s'\n", o.format);
		return CLI_EXIT_USAGE;
	}
	json_t *a = NULL, *b = NULL, *cmp = NULL;
	struct gi_buf out;
	gi_buf_init(&out, 0);
	int rc = profile_fetch(o.pos[0], &a);
	if (rc == 0)
		rc = profile_fetch(o.pos[1], &b);
	if (rc == 0)
		rc = fuse_compare(a, b, &cmp);
	if (rc == 0)
		rc = strcmp(o.format, "json") == 0 ? dump_json(cmp, &out)
		                                   : fuse_compare_text(cmp, &out);
	if (rc == 0)
		rc = emit(&o, &out);
	gi_buf_destroy(&out);
	json_decref(cmp);
	json_decref(a);
	json_decref(b);
	return rc == GI_EINVAL ? CLI_EXIT_USAGE : cli_exit_code_for(rc);
}

static void when_text(json_t *ms, char *out, size_t size)
{
	if (!json_is_number(ms)) {
		snprintf(out, size, "-");
		return;
	}
	time_t t = (time_t)(json_number_value(ms) / 1000.0);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%d %H:%M:%S", &tm);
}

/* `giulia profiles` and `giulia observations`: the worker's lists. */
static int run_list(int argc, char **argv, bool profiles)
{
	bool json = false;
	int64_t limit = 50;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--worker") == 0 && i + 1 < argc) {
			cli_worker_url_set(argv[++i]);
		} else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
			if (gi_parse_int64(argv[++i], 1, 1000, &limit) != 0) {
				fprintf(stderr, "giulia %s: --limit takes 1 to 1000\n", argv[0]);
				return CLI_EXIT_USAGE;
			}
		} else {
			fprintf(stderr, "giulia %s: unexpected argument '%s'; `giulia %s --help`\n",
			        argv[0], argv[i], argv[0]);
			return CLI_EXIT_USAGE;
		}
	}
	char path[128];
	snprintf(path, sizeof(path), "/api/runtime/%s?limit=%lld",
	         profiles ? "profiles" : "observations", (long long)limit);
	int status = 0;
	json_t *j = NULL;
	int rc = cli_worker_get(path, &status, &j);
	if (rc != 0 || status != 200) {
		fprintf(stderr, "giulia %s: the worker at %s %s%s\n", argv[0], cli_worker_url(),
		        rc ? "did not answer: " : "refused the request", rc ? gi_strerror(rc) : "");
		if (rc == GI_ECONNECT)
			fprintf(stderr,
			        "(is `giulia worker` or `giulia serve` running? give --worker "
			        "URL)\n");
		json_decref(j);
		return rc ? cli_exit_code_for(rc) : CLI_EXIT_FAILURE;
	}
	if (json) {
		char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (text)
			puts(text);
		free(text);
		json_decref(j);
		return CLI_EXIT_OK;
	}
	static const struct gi_table_column pcols[] = {
	    {"ID", GI_COL_RIGHT, 0, 0},       {"SESSION", 0, 0, 0},
	    {"CREATED (UTC)", 0, 1, 0},       {"NODE", GI_COL_ELIDE, 0, 16},
	    {"PROJECT", GI_COL_ELIDE, 2, 12},
	};
	static const struct gi_table_column ocols[] = {
	    {"SESSION", 0, 0, 0},
	    {"STATUS", 0, 0, 0},
	    {"STARTED (UTC)", 0, 1, 0},
	    {"SNAPS", GI_COL_RIGHT, 2, 0},
	    {"PROFILE", GI_COL_RIGHT, 0, 0},
	    {"NODE", GI_COL_ELIDE, 0, 16},
	};
	struct gi_table *t = gi_table_new(profiles ? pcols : ocols, profiles ? 5 : 6, 0);
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(j, profiles ? "profiles" : "observations"), i, r)
	{
		char id[32], when[32], snaps[32], pid[32];
		if (profiles) {
			snprintf(id, sizeof(id), "%lld",
			         (long long)json_integer_value(json_object_get(r, "id")));
			when_text(json_object_get(r, "created_ms"), when, sizeof(when));
			const char *proj = json_string_value(json_object_get(r, "project"));
			const char *row[] = {
			    id, json_string_value(json_object_get(r, "session_id")), when,
			    json_string_value(json_object_get(r, "node")), proj ? proj : "-"};
			gi_table_add(t, row);
		} else {
			when_text(json_object_get(r, "started_ms"), when, sizeof(when));
			snprintf(snaps, sizeof(snaps), "%lld",
			         (long long)json_integer_value(json_object_get(r, "snapshots")));
			json_t *p = json_object_get(r, "profile_id");
			if (json_is_integer(p))
				snprintf(pid, sizeof(pid), "%lld",
				         (long long)json_integer_value(p));
			else
				snprintf(pid, sizeof(pid), "-");
			const char *row[] = {json_string_value(json_object_get(r, "session_id")),
			                     json_string_value(json_object_get(r, "status")),
			                     when,
			                     snaps,
			                     pid,
			                     json_string_value(json_object_get(r, "node"))};
			gi_table_add(t, row);
		}
	}
	size_t n = gi_table_rows(t);
	struct gi_buf b;
	gi_buf_init(&b, 0);
	if (n > 0 && gi_table_render(t, cli_columns(), &b) == 0)
		fputs(gi_buf_str(&b), stdout);
	gi_buf_destroy(&b);
	gi_table_free(t);
	if (n == 0)
		printf("no %s yet\n", profiles ? "profiles" : "observations");
	else
		printf("%zu %s; `giulia profile ID` or `giulia profile SESSION` shows one\n", n,
		       profiles ? "profiles" : "observations");
	json_decref(j);
	return CLI_EXIT_OK;
}

static int run_profiles(int argc, char **argv)
{
	return run_list(argc, argv, true);
}

static int run_observations(int argc, char **argv)
{
	return run_list(argc, argv, false);
}

static const struct cli_option worker_option[] = {
    {"--worker URL", "the worker holding the profiles",
     "$GIULIA_WORKER_URL, else http://127.0.0.1:4000"},
    {NULL, NULL, NULL},
};
static const struct cli_option profile_options[] = {
    {"--format FORMAT", "text, json, or html (a self-contained page)", "text"},
    {"--out FILE", "write to FILE instead of standard output", NULL},
    {NULL, NULL, NULL},
};
static const struct cli_option compare_options[] = {
    {"--format FORMAT", "text or json", "text"},
    {"--out FILE", "write to FILE instead of standard output", NULL},
    {NULL, NULL, NULL},
};
static const struct cli_help profile_help = {
    "Prints a stored runtime profile: the fused findings of an observation, ranked, with "
    "their evidence. ID is the profile's number (`giulia-observe stop` and `giulia profiles` "
    "print it), its observation's session id as the report's header shows it (or a unique "
    "prefix of at least 4 characters), or latest.",
    profile_options, worker_option, CLI_EXITS_DAEMON,
    "giulia profile latest\ngiulia profile 3 --format html --out profile.html"};
static const struct cli_option list_options[] = {
    {"--limit N", "at most N rows", "50"},
    {"--json", "print the worker's JSON answer", NULL},
    {NULL, NULL, NULL},
};
static const struct cli_help profiles_help = {
    "Lists the stored runtime profiles, newest first: the number and the session id either "
    "of which `giulia profile` takes, when, which node and project.",
    list_options, worker_option, CLI_EXITS_DAEMON, "giulia profiles --limit 10"};
static const struct cli_help observations_help = {
    "Lists the observations the worker knows, newest first: session id, status (running, "
    "complete, interrupted), start, snapshots received and the profile built from them.",
    list_options, worker_option, CLI_EXITS_DAEMON, "giulia observations"};
static const struct cli_help compare_help = {
    "What changed from profile ID1 (before) to ID2 (after): metric deltas, hot modules that "
    "entered or left, recommendations resolved or new. IDs may be latest.",
    compare_options, worker_option, CLI_EXITS_DAEMON, "giulia compare 3 latest"};

const struct cli_command cli_profile_commands[] = {
    {"profile", PROFILE_USAGE, "print a stored runtime profile (text, JSON or an HTML page)",
     run_profile, &profile_help},
    {"compare", COMPARE_USAGE, "what changed between two runtime profiles", run_compare,
     &compare_help},
    {"profiles", LIST_USAGE, "the stored runtime profiles, newest first", run_profiles,
     &profiles_help},
    {"observations", LIST_USAGE, "the observations the worker knows, newest first",
     run_observations, &observations_help},
    {NULL, NULL, NULL, NULL, NULL},
};
