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

#include "net/client.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/str.h"
#include "cli/cli.h"
#include "fuse/fuse.h"

#define PROFILE_USAGE "ID|latest [--format text|json|html] [--out FILE] [--worker URL]"
#define COMPARE_USAGE "ID1 ID2 [--format text|json] [--out FILE] [--worker URL]"

static const char *worker_url(void)
{
	return cli_worker_url();
}

/* GET base+path through the API client; *status and *body (caller decrefs;
 * NULL when the answer was not JSON) on success. */
static int http_get(const char *path, int *status, json_t **body)
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

/* Fetches profile `id` ("latest" or a positive integer); *out: caller decrefs. */
static int profile_fetch(const char *id, json_t **out)
{
	*out = NULL;
	int64_t n = 0;
	if (strcmp(id, "latest") != 0 && gi_parse_int64(id, 1, INT64_MAX, &n) != 0) {
		fprintf(stderr,
		        "giulia: profile id must be a positive integer or `latest`, not '%s'\n",
		        id);
		return GI_EINVAL;
	}
	char path[128];
	if (n > 0)
		snprintf(path, sizeof(path), "/api/runtime/profile/%lld", (long long)n);
	else
		snprintf(path, sizeof(path), "/api/runtime/profile/latest");
	int status = 0;
	json_t *j = NULL;
	int rc = http_get(path, &status, &j);
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
    "their evidence. ID is the profile id `giulia-observe stop` prints, or latest.",
    profile_options, worker_option, CLI_EXITS_DAEMON,
    "giulia profile latest\ngiulia profile 3 --format html --out profile.html"};
static const struct cli_help compare_help = {
    "What changed from profile ID1 (before) to ID2 (after): metric deltas, hot modules that "
    "entered or left, recommendations resolved or new. IDs may be latest.",
    compare_options, worker_option, CLI_EXITS_DAEMON, "giulia compare 3 latest"};

const struct cli_command cli_profile_commands[] = {
    {"profile", PROFILE_USAGE, "print a stored runtime profile (text, JSON or an HTML page)",
     run_profile, &profile_help},
    {"compare", COMPARE_USAGE, "what changed between two runtime profiles", run_compare,
     &compare_help},
    {NULL, NULL, NULL, NULL, NULL},
};
