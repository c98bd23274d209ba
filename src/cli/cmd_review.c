/*
 * cmd_review.c - `giulia review --base REV` (see cli.h and docs/REVIEW.md):
 * what a change puts at risk. Brings the project's index up to date
 * (incremental, unless --no-index), fetches the latest profile from the
 * worker for the live weight (or reads --profile FILE), and runs the query
 * "review", so that `--json` prints what GET /api/review and the MCP tool
 * review_change return. Exit codes for CI: 0 nothing at or above the
 * threshold, 1 something is (or a removed module or function is still used),
 * 2 the review could not be made (usage, no index, git failed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/str.h"
#include "cli/cli.h"
#include "graph/query.h"

static const char review_usage[] =
    "--base REV [--threshold N] [--depth N] [--profile latest|ID|FILE] [--no-profile] "
    "[--no-index] [--worker URL] [--project PATH] [--db FILE] [--json]";

#define PROFILE_FILE_MAX (64u << 20) /* bytes of a --profile FILE */

struct review_opts {
	const char *base, *project, *db, *profile;
	const char *threshold;
	int depth;
	bool json, no_profile, no_index;
};

static int review_usage_fail(const char *what, const char *arg)
{
	fprintf(stderr, "giulia review: %s%s\nusage: giulia review %s\n", what, arg ? arg : "",
	        review_usage);
	return CLI_EXIT_USAGE;
}

/* 0, -1 after --help, or an exit code. */
static int review_opts_parse(int argc, char **argv, struct review_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			printf("usage: giulia review %s\n", review_usage);
			return -1;
		} else if (strcmp(a, "--json") == 0) {
			o->json = true;
		} else if (strcmp(a, "--no-profile") == 0) {
			o->no_profile = true;
		} else if (strcmp(a, "--no-index") == 0) {
			o->no_index = true;
		} else if (strcmp(a, "--base") == 0 || strcmp(a, "--threshold") == 0 ||
		           strcmp(a, "--depth") == 0 || strcmp(a, "--profile") == 0 ||
		           strcmp(a, "--project") == 0 || strcmp(a, "--db") == 0 ||
		           strcmp(a, "--worker") == 0) {
			if (!next)
				return review_usage_fail("missing the value of ", a);
			i++;
			if (strcmp(a, "--base") == 0) {
				o->base = next;
			} else if (strcmp(a, "--threshold") == 0) {
				o->threshold = next;
			} else if (strcmp(a, "--depth") == 0) {
				int64_t v;
				if (gi_parse_int64(next, 1, 100, &v))
					return review_usage_fail("--depth must be 1..100, not ",
					                         next);
				o->depth = (int)v;
			} else if (strcmp(a, "--profile") == 0) {
				o->profile = next;
			} else if (strcmp(a, "--project") == 0) {
				o->project = next;
			} else if (strcmp(a, "--db") == 0) {
				o->db = next;
			} else {
				cli_worker_url_set(next);
			}
		} else if (a[0] == '-') {
			return review_usage_fail("unknown option ", a);
		} else if (!o->base) {
			o->base = a; /* `giulia review main` reads as --base main */
		} else {
			return review_usage_fail("one base revision only, not also ", a);
		}
	}
	if (!o->base)
		return review_usage_fail("missing --base REV (e.g. --base main, --base HEAD~1)",
		                         NULL);
	return 0;
}

/* The profile to weigh the change with, into args.profile, or the reason
 * there is none into args.profile_note (the query leaves out a profile of
 * another project). Never fails the review. */
static void review_profile(const struct review_opts *o, json_t *args)
{
	if (o->no_profile) {
		json_object_set_new(args, "profile_note", json_string("--no-profile"));
		return;
	}
	const char *which = o->profile ? o->profile : "latest";
	json_t *profile = NULL;
	char note[600] = "";
	struct stat sb;
	if (strcmp(which, "latest") != 0 && stat(which, &sb) == 0) {
		char *text = NULL;
		size_t len = 0;
		json_error_t jerr;
		int rc = gi_fs_read_file(which, PROFILE_FILE_MAX, &text, &len);
		profile = rc ? NULL : json_loadb(text, len, 0, &jerr);
		gi_free(text);
		if (rc || !json_is_object(profile)) {
			fprintf(stderr,
			        "giulia review: %s is not a JSON profile (%s); reviewing without "
			        "live weight\n",
			        which,
			        rc        ? gi_strerror(rc)
			        : profile ? "not an object"
			                  : jerr.text);
			snprintf(note, sizeof(note), "%.300s is not a JSON profile", which);
			json_decref(profile);
			profile = NULL;
		}
	} else {
		int64_t id = 0;
		char path[128];
		if (strcmp(which, "latest") == 0) {
			snprintf(path, sizeof(path), "/api/runtime/profile/latest");
		} else if (gi_parse_int64(which, 1, INT64_MAX, &id) == 0) {
			snprintf(path, sizeof(path), "/api/runtime/profile/%lld", (long long)id);
		} else {
			fprintf(
			    stderr,
			    "giulia review: --profile takes latest, a profile number or a file, "
			    "not %s; reviewing without live weight\n",
			    which);
			snprintf(note, sizeof(note), "--profile %s is not a profile", which);
			json_object_set_new(args, "profile_note", json_string(note));
			return;
		}
		int status = 0;
		int rc = cli_worker_get(path, &status, &profile);
		if (rc || status != 200) {
			snprintf(note, sizeof(note), "no profile from the worker at %s (%s)",
			         cli_worker_url(),
			         rc              ? gi_strerror(rc)
			         : status == 404 ? "none stored"
			                         : "refused");
			json_decref(profile);
			profile = NULL;
		}
	}
	if (profile)
		json_object_set_new(args, "profile", profile);
	else
		json_object_set_new(args, "profile_note", json_string(note));
}

static void print_review(json_t *r)
{
	json_t *files = json_object_get(r, "files"), *risk = json_object_get(r, "at_risk");
	printf("review against %s: %zu files changed, %zu functions and modules changed; %s "
	       "(%lld at or above %.0f, or removed and still used)\n",
	       json_string_value(json_object_get(r, "base")), json_array_size(files),
	       json_array_size(risk), json_string_value(json_object_get(r, "verdict")),
	       json_integer_value(json_object_get(r, "risky")),
	       json_number_value(json_object_get(r, "threshold")));
	size_t i;
	json_t *v;
	if (json_array_size(risk)) {
		printf("\nAt risk (score = reach 40 + untested 20 + complexity 15 + live 25)\n");
		printf("  %5s %-6s %-44s %5s %5s %6s\n", "score", "risk", "changed", "reach",
		       "tests", "live");
	}
	json_array_foreach(risk, i, v)
	{
		char what[512], live[16] = "-";
		const char *fn = json_string_value(json_object_get(v, "function"));
		snprintf(
		    what, sizeof(what), "%s%s%s%s", json_string_value(json_object_get(v, "module")),
		    fn ? "." : "", fn ? fn : "",
		    strcmp(json_string_value(json_object_get(v, "change")), "added") == 0 ? " (new)"
		                                                                          : "");
		json_t *lv = json_object_get(v, "live");
		if (json_is_object(lv))
			snprintf(live, sizeof(live), "%.1f%%",
			         100 * json_number_value(json_object_get(lv, "reductions_share")));
		printf("  %5.1f %-6s %-44s %5lld %5zu %6s\n",
		       json_number_value(json_object_get(v, "score")),
		       json_string_value(json_object_get(v, "risk")), what,
		       json_integer_value(json_object_get(v, "reach")),
		       json_array_size(json_object_get(v, "tests")), live);
		size_t k;
		json_t *f;
		json_array_foreach(json_object_get(v, "factors"), k, f)
		{
			printf("        %s: %s\n", json_string_value(json_object_get(f, "factor")),
			       json_string_value(json_object_get(f, "why")));
		}
	}
	json_array_foreach(json_object_get(r, "removed_modules"), i, v)
	{
		json_t *refs = json_object_get(v, "still_referenced_by");
		printf("\nremoved: %s%s", json_string_value(json_object_get(v, "module")),
		       json_array_size(refs) ? ", still referenced by" : " (no references left)");
		size_t k;
		json_t *m;
		json_array_foreach(refs, k, m)
		{
			printf("%s %s", k ? "," : "", json_string_value(m));
		}
		printf("\n");
	}
	json_array_foreach(json_object_get(r, "removed_functions"), i, v)
	{
		printf("\nremoved: %s.%s, still called by",
		       json_string_value(json_object_get(v, "module")),
		       json_string_value(json_object_get(v, "function")));
		size_t k;
		json_t *m;
		json_array_foreach(json_object_get(v, "still_called_by"), k, m)
		{
			printf("%s %s", k ? "," : "", json_string_value(m));
		}
		printf("\n");
	}
	json_t *tests = json_object_get(r, "tests_to_run");
	printf("\nTests to run (%zu)\n", json_array_size(tests));
	json_array_foreach(tests, i, v)
	{
		const char *file = json_string_value(json_object_get(v, "file"));
		printf("  %-40s %s\n", json_string_value(json_object_get(v, "module")),
		       file ? file : "-");
	}
	json_t *unindexed = json_object_get(r, "unindexed_files");
	if (json_array_size(unindexed)) {
		printf("\nNot in the index (not reviewed):");
		json_array_foreach(unindexed, i, v)
		{
			printf(" %s", json_string_value(v));
		}
		printf("\n");
	}
	json_t *pinfo = json_object_get(r, "profile");
	if (json_is_true(json_object_get(pinfo, "used")))
		printf("\nlive weight from the profile of %s\n",
		       json_string_value(json_object_get(pinfo, "node"))
		           ? json_string_value(json_object_get(pinfo, "node"))
		           : "-");
	else
		printf("\nno live weight: %s\n",
		       json_string_value(json_object_get(pinfo, "note"))
		           ? json_string_value(json_object_get(pinfo, "note"))
		           : "no profile");
}

/* The project root the index records, or NULL (caller frees). */
static char *index_root(struct kg_db *db)
{
	json_t *st = NULL;
	char *root = NULL;
	if (kg_query(db, "status", NULL, &st) == 0 &&
	    json_string_value(json_object_get(st, "root")))
		root = gi_strdup(json_string_value(json_object_get(st, "root")));
	json_decref(st);
	return root;
}

static int cmd_review(int argc, char **argv)
{
	struct review_opts o = {0};
	int prc = review_opts_parse(argc, argv, &o);
	if (prc)
		return prc < 0 ? CLI_EXIT_OK : prc;
	char *db_path = NULL;
	if (cli_db_path_resolve("review", o.db, o.project, &db_path))
		return CLI_EXIT_FAILURE;
	int exit_code = CLI_EXIT_FAILURE;
	struct kg_db *db = NULL;
	json_t *r = NULL, *args = json_object();
	char *root = NULL;
	int rc = kg_db_open(db_path, false, &db);
	if (!rc)
		kg_db_refresh_on_query(db, true);
	if (rc == GI_ENOENT) {
		fprintf(stderr, "giulia review: no index database at %s; run `giulia index PATH`\n",
		        db_path);
		goto done;
	} else if (rc) {
		fprintf(stderr, "giulia review: %s: %s\n", db_path, gi_strerror(rc));
		goto done;
	}
	root = index_root(db);
	if (root && !o.no_index) {
		json_t *summary = NULL;
		struct kg_index_options iopt = {.force = false};
		rc = kg_index_project(root, db_path, &iopt, &summary);
		json_decref(summary);
		if (rc)
			fprintf(stderr,
			        "giulia review: re-indexing %s failed (%s); reviewing the index as "
			        "it is\n",
			        root, gi_strerror(rc));
	}
	json_object_set_new(args, "base", json_string(o.base));
	if (o.threshold)
		json_object_set_new(args, "threshold", json_string(o.threshold));
	review_profile(&o, args);
	struct kg_query_params p = {0};
	p.depth = o.depth;
	p.args = args;
	rc = kg_query(db, "review", &p, &r);
	if (rc) {
		const char *why = kg_query_error_message();
		fprintf(stderr, "giulia review: %s\n", why ? why : gi_strerror(rc));
		/* a refused argument (no base, a base that is no revision) is a
		 * usage error; git failing on it is the review failing */
		if (rc == GI_EINVAL)
			exit_code = CLI_EXIT_USAGE;
		goto done;
	}
	if (o.json) {
		cli_json_print(r);
	} else {
		print_review(r);
	}
	exit_code =
	    json_integer_value(json_object_get(r, "risky")) > 0 ? CLI_EXIT_FINDINGS : CLI_EXIT_OK;
done:
	json_decref(r);
	json_decref(args);
	gi_free(root);
	kg_db_close(db);
	gi_free(db_path);
	return exit_code;
}

static const struct cli_option review_options[] = {
    {"--base REV", "the revision the working tree is compared with (git diff REV)", NULL},
    {"--threshold N", "the risk score (0-100) from which a change counts as risky", "60"},
    {"--depth N", "how many steps of callers and dependents are followed", "3"},
    {"--profile latest|ID|FILE", "the profile whose live weight is added",
     "latest, from the worker, when it answers"},
    {"--no-profile", "no live weight", NULL},
    {"--no-index", "review the index as it is (default: bring it up to date first)", NULL},
    {"--worker URL", "the worker to fetch the profile from",
     "$GIULIA_WORKER_URL, else http://127.0.0.1:4000"},
    {NULL, NULL, NULL},
};

static const struct cli_help review_help = {
    "What a change puts at risk: the functions and modules that `git diff REV` touches "
    "(mapped by the index's line ranges), each with its reach (the modules that call it), "
    "the tests that reach it, its complexity and, from the latest profile, its live weight, "
    "ranked by a risk score; the removed modules and functions still used; and the tests to run "
    "(docs/REVIEW.md). Exit 0: nothing scores at or above the threshold; 3: something does, "
    "or a removed module or function is still used; 1: the review could not be made.",
    review_options, cli_static_options, CLI_EXITS_FINDINGS,
    "giulia review --base main\ngiulia review --base HEAD~1 --threshold 40 --json"};

const struct cli_command cli_review_commands[] = {
    {"review", review_usage, "what a change (git diff REV) puts at risk, and the tests to run",
     cmd_review, &review_help},
    {NULL, NULL, NULL, NULL, NULL},
};
