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

static const char profile_usage[] =
    "usage: giulia profile ID|latest [--format text|json|html] [--out FILE]\n"
    "  Prints a stored runtime profile. ID is a profile id from `giulia-observe stop`\n"
    "  or GET /api/runtime/profiles; latest is the newest one.\n"
    "  --format  text (default), json, or html (a self-contained page)\n"
    "  --out     write to FILE instead of standard output\n"
    "  Environment: GIULIA_WORKER_URL (default http://127.0.0.1:4000), GIULIA_TOKEN.\n";

static const char compare_usage[] =
    "usage: giulia compare ID1 ID2 [--format text|json] [--out FILE]\n"
    "  What changed from profile ID1 (before) to ID2 (after): metric deltas, hot modules\n"
    "  that entered or left, recommendations resolved or new. IDs may be `latest`.\n"
    "  Environment: GIULIA_WORKER_URL (default http://127.0.0.1:4000), GIULIA_TOKEN.\n";

static const char *worker_url(void)
{
	const char *u = getenv("GIULIA_WORKER_URL");
	return u && *u ? u : "http://127.0.0.1:4000";
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
		        rc == GI_ECONNECT ? " (is `giulia worker` or `giulia serve` running? set "
		                            "GIULIA_WORKER_URL)"
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
		fputs(profile_usage, p == 1 ? stdout : stderr);
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
		fputs(compare_usage, p == 1 ? stdout : stderr);
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

const struct cli_command cli_profile_commands[] = {
    {"profile", "ID|latest [--format text|json|html] [--out FILE]",
     "print a stored runtime profile (text, JSON or an HTML page)", run_profile},
    {"compare", "ID1 ID2 [--format text|json] [--out FILE]",
     "what changed between two runtime profiles", run_compare},
    {NULL, NULL, NULL, NULL},
};
