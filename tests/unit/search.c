/*
 * Unit tests for src/graph/search.c through kg_query(): the fixture project
 * tests/fixtures/projects/notes (Notes, Notes.Note, Notes.Store,
 * Notes.Export, test module NotesTest; docs, specs and a struct written so
 * that each field of the ranked search has something to find) is indexed
 * into a real SQLite file, then searched as text and as ranked code, with
 * the expected answers worked out by reading the fixture, negative cases,
 * and hostile arguments (huge patterns, back-references, bad regexes,
 * out-of-range pages). The Docs chunk reader (source/beam_docs.c) on the
 * Debian elixir package's own String.beam, whole and damaged.
 * needs: elixir
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/error.h"
#include "base/fs.h"
#include "source/beam.h"
#include "graph/query.h"
#include "graph/search.h"
#include "harness.h"

static struct kg_db *fixture_db(const char *name, int modules)
{
	char root[4096], db_path[4096];
	snprintf(root, sizeof(root), "%s/tests/fixtures/projects/%s", th_srcdir(), name);
	snprintf(db_path, sizeof(db_path), "%s/%s.db", th_tmpdir(), name);
	json_t *summary = NULL;
	struct kg_index_options opt = {0};
	opt.jobs = 1;
	TH_ASSERT_OK(kg_index_project(root, db_path, &opt, &summary));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(summary, "modules")), modules);
	json_decref(summary);
	struct kg_db *db = NULL;
	TH_ASSERT_OK(kg_db_open(db_path, false, &db));
	return db;
}

static struct kg_db *notes_db(void)
{
	return fixture_db("notes", 6);
}

/* Runs `name` with the arguments of the JSON text `args`; returns the
 * answer (caller decrefs) or NULL with *rc set. */
static json_t *search(struct kg_db *db, const char *name, const char *module, const char *args,
                      int *rc)
{
	json_error_t e;
	json_t *a = json_loads(args, 0, &e);
	TH_ASSERT_MSG(a != NULL, "bad test arguments %s: %s", args, e.text);
	struct kg_query_params p = {0};
	p.module = module;
	p.args = a;
	json_t *out = NULL;
	int r = kg_query(db, name, &p, &out);
	json_decref(a);
	if (rc)
		*rc = r;
	else
		TH_ASSERT_MSG(r == 0, "%s %s failed: %d (%s)", name, args, r,
		              kg_query_error_message() ? kg_query_error_message() : "-");
	return out;
}

static const char *hit_str(json_t *out, const char *list, size_t i, const char *key)
{
	return json_string_value(
	    json_object_get(json_array_get(json_object_get(out, list), i), key));
}

static long long hit_int(json_t *out, const char *list, size_t i, const char *key)
{
	return json_integer_value(
	    json_object_get(json_array_get(json_object_get(out, list), i), key));
}

static long long jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* The rank (0-based) of Module.name in a search_code answer, -1 if absent. */
static int rank_of(json_t *out, const char *module, const char *name)
{
	json_t *results = json_object_get(out, "results");
	for (size_t i = 0; i < json_array_size(results); i++) {
		json_t *r = json_array_get(results, i);
		const char *n = json_string_value(json_object_get(r, "name"));
		if (strcmp(json_string_value(json_object_get(r, "module")), module) == 0 &&
		    ((!name && !n) || (name && n && strcmp(n, name) == 0)))
			return (int)i;
	}
	return -1;
}

static bool array_has(json_t *a, const char *s)
{
	for (size_t i = 0; i < json_array_size(a); i++)
		if (strcmp(json_string_value(json_array_get(a, i)), s) == 0)
			return true;
	return false;
}

struct collected {
	char text[512];
};

static void collect(void *ctx, const char *term)
{
	struct collected *c = ctx;
	size_t n = strlen(c->text);
	snprintf(c->text + n, sizeof(c->text) - n, "%s%s", n ? " " : "", term);
}

static const char *terms_of(const char *text)
{
	static struct collected c;
	c.text[0] = '\0';
	kg_search_terms(text, strlen(text), collect, &c);
	return c.text;
}

static void search_terms_split_identifiers_and_words(void)
{
	TH_ASSERT_STR_EQ(terms_of("Notes.Store.parseHTTPDate"), "note stor pars http date");
	TH_ASSERT_STR_EQ(terms_of("iso8601_to_utf8"), "iso 8601 utf 8");
	TH_ASSERT_STR_EQ(terms_of("Splitting the strings of a file"), "split string file");
	TH_ASSERT_STR_EQ(terms_of("stopped, stops, stop"), "stop stop stop");
	TH_ASSERT_STR_EQ(terms_of("removes removed removing remove"), "remov remov remov remov");
	TH_ASSERT_STR_EQ(terms_of("string bring"), "string bring");
	TH_ASSERT_STR_EQ(terms_of("queries, classes"), "query class");
	TH_ASSERT_STR_EQ(terms_of("  --  "), "");
}

static void search_code_ranks_by_doc_name_and_spec(void)
{
	struct kg_db *db = notes_db();
	json_t *r =
	    search(db, "search_code", NULL, "{\"query\": \"find the notes with a tag\"}", NULL);
	TH_ASSERT_INT_EQ(rank_of(r, "Notes", "by_tag"), 0);
	TH_ASSERT_STR_EQ(hit_str(r, "results", 0, "kind"), "function");
	TH_ASSERT_INT_EQ(hit_int(r, "results", 0, "arity"), 1);
	TH_ASSERT_INT_EQ(hit_int(r, "results", 0, "line"), 17);
	TH_ASSERT_STR_EQ(hit_str(r, "results", 0, "file"), "lib/notes.ex");
	json_decref(r);

	/* words only in a @doc heredoc */
	r = search(db, "search_code", NULL, "{\"query\": \"comma separated values\"}", NULL);
	TH_ASSERT_INT_EQ(rank_of(r, "Notes.Export", "to_csv"), 0);
	json_decref(r);
	/* words only in a @moduledoc, modules only */
	r = search(db, "search_code", NULL,
	           "{\"query\": \"agent holding notes\", \"kind\": \"module\"}", NULL);
	TH_ASSERT_INT_EQ(rank_of(r, "Notes.Store", NULL), 0);
	TH_ASSERT_INT_EQ(rank_of(r, "Notes.Store", "insert"), -1);
	json_decref(r);
	/* a struct field */
	r = search(db, "search_code", NULL, "{\"query\": \"created_at\"}", NULL);
	TH_ASSERT_INT_EQ(rank_of(r, "Notes.Note", NULL), 0);
	TH_ASSERT(array_has(
	    json_object_get(json_array_get(json_object_get(r, "results"), 0), "fields"), "fields"));
	json_decref(r);
	/* a type named in a @spec (and in Notes.Store's @moduledoc) */
	r = search(db, "search_code", NULL, "{\"query\": \"integer\"}", NULL);
	TH_ASSERT_INT_EQ(jint(r, "total"), 2);
	TH_ASSERT_INT_GE(rank_of(r, "Notes", "add"), 0);
	json_decref(r);
	r = search(db, "search_code", NULL, "{\"query\": \"integer\", \"kind\": \"function\"}",
	           NULL);
	TH_ASSERT_INT_EQ(rank_of(r, "Notes", "add"), 0);
	TH_ASSERT(array_has(
	    json_object_get(json_array_get(json_object_get(r, "results"), 0), "fields"), "spec"));
	json_decref(r);
	/* a camel-case name split into words */
	r = search(db, "search_code", NULL, "{\"query\": \"http date\"}", NULL);
	TH_ASSERT_INT_EQ(rank_of(r, "Notes.Store", "parseHTTPDate"), 0);
	json_decref(r);
	/* a called name: word_count calls String.split */
	r = search(db, "search_code", NULL, "{\"query\": \"split\"}", NULL);
	TH_ASSERT_INT_EQ(rank_of(r, "Notes.Note", "word_count"), 0);
	json_decref(r);
	/* nothing matches */
	r = search(db, "search_code", NULL, "{\"query\": \"kubernetes\"}", NULL);
	TH_ASSERT_INT_EQ(jint(r, "total"), 0);
	TH_ASSERT(json_is_null(json_object_get(r, "next_offset")));
	json_decref(r);
	kg_db_close(db);
}

static void search_code_filters_and_pages(void)
{
	struct kg_db *db = notes_db();
	json_t *all = search(db, "search_code", NULL, "{\"query\": \"note\"}", NULL);
	long long total = jint(all, "total");
	TH_ASSERT_INT_GE(total, 5);
	TH_ASSERT_INT_EQ(rank_of(all, "NotesTest", NULL), -1); /* tests left out */
	json_t *page = search(db, "search_code", NULL,
	                      "{\"query\": \"note\", \"limit\": 2, \"offset\": 1}", NULL);
	TH_ASSERT_INT_EQ(jint(page, "count"), 2);
	TH_ASSERT_INT_EQ(jint(page, "total"), total);
	TH_ASSERT_INT_EQ(jint(page, "next_offset"), 3);
	TH_ASSERT_STR_EQ(hit_str(page, "results", 0, "module"),
	                 hit_str(all, "results", 1, "module"));
	TH_ASSERT_INT_EQ(hit_int(page, "results", 0, "line"), hit_int(all, "results", 1, "line"));
	json_decref(page);
	json_decref(all);
	/* string forms, as a query string carries them */
	json_t *r = search(db, "search_code", NULL,
	                   "{\"query\": \"note\", \"tests\": \"true\", \"limit\": \"50\"}", NULL);
	TH_ASSERT_INT_GE(rank_of(r, "NotesTest", NULL), 0);
	json_decref(r);
	r = search(db, "search_code", "Notes.Store", "{\"query\": \"note\"}", NULL);
	for (size_t i = 0; i < json_array_size(json_object_get(r, "results")); i++)
		TH_ASSERT_STR_EQ(hit_str(r, "results", i, "module"), "Notes.Store");
	TH_ASSERT_INT_GE(jint(r, "total"), 3);
	json_decref(r);
	kg_db_close(db);
}

static void search_code_refuses_bad_arguments(void)
{
	struct kg_db *db = notes_db();
	int rc = 0;
	TH_ASSERT(search(db, "search_code", NULL, "{}", &rc) == NULL);
	TH_ASSERT_INT_EQ(rc, GI_EINVAL);
	TH_ASSERT_STR_CONTAINS(kg_query_error_message(), "needs a query");
	TH_ASSERT(search(db, "search_code", NULL, "{\"query\": \"x\", \"kind\": \"type\"}", &rc) ==
	          NULL);
	TH_ASSERT_STR_CONTAINS(kg_query_error_message(), "kind");
	TH_ASSERT(search(db, "search_code", NULL, "{\"query\": \"x\", \"limit\": 0}", &rc) == NULL);
	TH_ASSERT_STR_CONTAINS(kg_query_error_message(), "limit must be between 1 and 1000");
	TH_ASSERT(search(db, "search_code", NULL, "{\"query\": \"x\", \"limit\": \"many\"}", &rc) ==
	          NULL);
	TH_ASSERT_STR_CONTAINS(kg_query_error_message(), "limit must be an integer");
	char big[3000];
	memset(big, 'a', sizeof(big));
	memcpy(big, "{\"query\": \"", 11);
	memcpy(big + sizeof(big) - 3, "\"}", 3);
	TH_ASSERT(search(db, "search_code", NULL, big, &rc) == NULL);
	TH_ASSERT_STR_CONTAINS(kg_query_error_message(), "at most 1024");
	/* a query of stop words only finds nothing, without an error */
	json_t *r = search(db, "search_code", NULL, "{\"query\": \"the of and\"}", NULL);
	TH_ASSERT_INT_EQ(jint(r, "total"), 0);
	json_decref(r);
	kg_db_close(db);
}

static void search_text_labels_hits(void)
{
	struct kg_db *db = notes_db();
	json_t *r = search(db, "search_text", NULL, "{\"pattern\": \"Store.\"}", NULL);
	/* lib/notes.ex: Store.insert (line 12) and Store.all (line 17) */
	TH_ASSERT_INT_EQ(jint(r, "total"), 2);
	TH_ASSERT_STR_EQ(hit_str(r, "hits", 0, "file"), "lib/notes.ex");
	TH_ASSERT_INT_EQ(hit_int(r, "hits", 0, "line"), 12);
	TH_ASSERT_INT_EQ(hit_int(r, "hits", 0, "column"), 5);
	TH_ASSERT_STR_EQ(hit_str(r, "hits", 0, "module"), "Notes");
	TH_ASSERT_STR_EQ(hit_str(r, "hits", 0, "function"), "add/2");
	TH_ASSERT_STR_EQ(hit_str(r, "hits", 1, "function"), "by_tag/1");
	TH_ASSERT_INT_GE(jint(r, "files_searched"), 6);
	json_decref(r);

	/* outside any function: the module only; case folding */
	r = search(db, "search_text", NULL,
	           "{\"pattern\": \"USE AGENT\", \"ignore_case\": true, \"context\": 1}", NULL);
	TH_ASSERT_INT_EQ(jint(r, "total"), 1);
	TH_ASSERT_STR_EQ(hit_str(r, "hits", 0, "module"), "Notes.Store");
	TH_ASSERT(json_is_null(
	    json_object_get(json_array_get(json_object_get(r, "hits"), 0), "function")));
	json_t *before = json_object_get(json_array_get(json_object_get(r, "hits"), 0), "before");
	json_t *after = json_object_get(json_array_get(json_object_get(r, "hits"), 0), "after");
	TH_ASSERT_INT_EQ(json_array_size(before), 1);
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(before, 0)), "  \"\"\"");
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(after, 0)), "");
	json_decref(r);
	r = search(db, "search_text", NULL, "{\"pattern\": \"USE AGENT\"}", NULL);
	TH_ASSERT_INT_EQ(jint(r, "total"), 0);
	json_decref(r);
	kg_db_close(db);
}

static void search_text_regex_filters_and_pages(void)
{
	struct kg_db *db = notes_db();
	/* every public def of the project and its test: 2 + 1 + 5 + 2 + 1 (mix.exs) */
	json_t *r = search(db, "search_text", NULL,
	                   "{\"pattern\": \"^ +def [a-z_A-Z]+\", "
	                   "\"regex\": true}",
	                   NULL);
	TH_ASSERT_INT_EQ(jint(r, "total"), 11);
	json_decref(r);
	r = search(db, "search_text", NULL,
	           "{\"pattern\": \"^ +def \", \"regex\": true, \"file\": \"lib/notes/*.ex\"}",
	           NULL);
	TH_ASSERT_INT_EQ(jint(r, "total"), 8);
	json_decref(r);
	r = search(db, "search_text", NULL, "{\"pattern\": \"def \", \"file\": \"export\"}", NULL);
	TH_ASSERT_INT_EQ(jint(r, "total"), 2);
	TH_ASSERT_STR_EQ(hit_str(r, "hits", 1, "function"), "legacy_dump/1");
	json_decref(r);
	r = search(db, "search_text", "Notes.Store", "{\"pattern\": \"note\"}", NULL);
	for (size_t i = 0; i < json_array_size(json_object_get(r, "hits")); i++)
		TH_ASSERT_STR_EQ(hit_str(r, "hits", i, "module"), "Notes.Store");
	TH_ASSERT_INT_GE(jint(r, "total"), 4);
	json_decref(r);
	r = search(db, "search_text", NULL, "{\"pattern\": \"def \", \"limit\": 3, \"offset\": 3}",
	           NULL);
	TH_ASSERT_INT_EQ(jint(r, "count"), 3);
	TH_ASSERT_INT_EQ(jint(r, "next_offset"), 6);
	TH_ASSERT_STR_EQ(hit_str(r, "hits", 0, "function"), "legacy_dump/1");
	json_decref(r);
	r = search(db, "search_text", NULL, "{\"pattern\": \"def \", \"limit\": 3, \"offset\": 9}",
	           NULL);
	TH_ASSERT_INT_EQ(jint(r, "count"), 2);
	TH_ASSERT(json_is_null(json_object_get(r, "next_offset")));
	json_decref(r);
	r = search(db, "search_text", NULL, "{\"pattern\": \"def \", \"offset\": 100}", NULL);
	TH_ASSERT_INT_EQ(jint(r, "count"), 0);
	TH_ASSERT(json_is_null(json_object_get(r, "next_offset")));
	json_decref(r);
	kg_db_close(db);
}

static void search_text_refuses_hostile_patterns(void)
{
	struct kg_db *db = notes_db();
	int rc = 0;
	TH_ASSERT(search(db, "search_text", NULL, "{\"pattern\": \"(a)\\\\1\", \"regex\": true}",
	                 &rc) == NULL);
	TH_ASSERT_INT_EQ(rc, GI_EINVAL);
	TH_ASSERT_STR_CONTAINS(kg_query_error_message(), "back-references");
	TH_ASSERT(search(db, "search_text", NULL, "{\"pattern\": \"(unclosed\", \"regex\": true}",
	                 &rc) == NULL);
	TH_ASSERT_STR_CONTAINS(kg_query_error_message(), "does not compile");
	TH_ASSERT(search(db, "search_text", NULL, "{\"pattern\": \"\"}", &rc) == NULL);
	TH_ASSERT_STR_CONTAINS(kg_query_error_message(), "needs a pattern");
	TH_ASSERT(search(db, "search_text", NULL, "{\"pattern\": \"x\", \"context\": 99}", &rc) ==
	          NULL);
	TH_ASSERT_STR_CONTAINS(kg_query_error_message(), "context must be between 0 and 20");
	TH_ASSERT(search(db, "search_text", NULL, "{\"pattern\": \"x\", \"regex\": \"yes\"}",
	                 &rc) == NULL);
	TH_ASSERT_STR_CONTAINS(kg_query_error_message(), "regex must be true or false");
	/* a nested quantifier that backtracking matchers take exponential time
	 * on: the automaton-based POSIX matcher answers (no match) */
	json_t *r = search(db, "search_text", NULL,
	                   "{\"pattern\": \"(n*o*t*e*s*)*QQ\", \"regex\": true}", NULL);
	TH_ASSERT_INT_EQ(jint(r, "total"), 0);
	json_decref(r);
	kg_db_close(db);
}

static void search_code_hybrid_expands_with_learned_words(void)
{
	setenv("GIULIA_DOC_BEAMS", "/usr/lib/elixir/lib/elixir/ebin/*.beam", 1);
	TH_NEED(access("/usr/lib/elixir/lib/elixir/ebin/Elixir.String.beam", R_OK) == 0, "elixir",
	        "the elixir package's .beam files are missing");
	struct kg_db *db = notes_db();
	json_t *ranked = search(db, "search_code", NULL, "{\"query\": \"remove a note\"}", NULL);
	json_t *hybrid = search(db, "search_code", NULL,
	                        "{\"query\": \"remove a note\", \"mode\": \"hybrid\"}", NULL);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(hybrid, "mode")), "hybrid");
	TH_ASSERT_INT_GE(json_array_size(json_object_get(hybrid, "expanded")), 1);
	/* expansion only adds: whatever ranked finds, hybrid finds */
	TH_ASSERT_INT_GE(jint(hybrid, "total"), jint(ranked, "total"));
	TH_ASSERT_INT_EQ(rank_of(ranked, "Notes.Store", "delete"), 0);
	TH_ASSERT_INT_GE(rank_of(hybrid, "Notes.Store", "delete"), 0);
	json_decref(ranked);
	json_decref(hybrid);
	/* the vectors are cached next to the database, and read back */
	char cache[4200];
	snprintf(cache, sizeof(cache), "%s/search_vectors.bin", th_tmpdir());
	TH_ASSERT(access(cache, R_OK) == 0);
	kg_db_close(db);
	struct kg_db *again = NULL;
	char db_path[4200];
	snprintf(db_path, sizeof(db_path), "%s/notes.db", th_tmpdir());
	TH_ASSERT_OK(kg_db_open(db_path, false, &again));
	json_t *r = search(again, "search_code", NULL,
	                   "{\"query\": \"remove a note\", \"mode\": \"hybrid\"}", NULL);
	TH_ASSERT_INT_GE(json_array_size(json_object_get(r, "expanded")), 1);
	json_decref(r);
	int rc = 0;
	TH_ASSERT(search(again, "search_code", NULL, "{\"query\": \"x\", \"mode\": \"magic\"}",
	                 &rc) == NULL);
	TH_ASSERT_STR_CONTAINS(kg_query_error_message(), "mode must be");
	kg_db_close(again);
}

static json_t *preflight(struct kg_db *db, const char *target, int *rc)
{
	struct kg_query_params p = {0};
	p.module = target;
	json_t *out = NULL;
	int r = kg_query(db, "preflight", &p, &out);
	if (rc)
		*rc = r;
	else
		TH_ASSERT_MSG(r == 0, "preflight %s failed: %d", target, r);
	return out;
}

static long long risk_value(json_t *out, const char *factor)
{
	json_t *risks = json_object_get(out, "risk_factors");
	for (size_t i = 0; i < json_array_size(risks); i++) {
		json_t *r = json_array_get(risks, i);
		if (strcmp(json_string_value(json_object_get(r, "factor")), factor) == 0)
			return json_integer_value(json_object_get(r, "value"));
	}
	return -1;
}

static void preflight_modules_and_functions(void)
{
	struct kg_db *db = notes_db();
	json_t *r = preflight(db, "Notes.Store", NULL);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "public_api")), 5);
	TH_ASSERT_INT_EQ(jint(r, "blast_count"), 2); /* Notes, then NotesTest */
	TH_ASSERT_STR_EQ(hit_str(r, "dependents", 0, "module"), "Notes");
	TH_ASSERT_STR_EQ(hit_str(r, "tests", 0, "module"), "NotesTest");
	TH_ASSERT_STR_EQ(hit_str(r, "tests", 0, "file"), "test/notes_test.exs");
	TH_ASSERT_INT_EQ(hit_int(r, "tests", 0, "depth"), 2);
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(
	                     json_object_get(json_object_get(r, "role"), "uses"), 0)),
	                 "Agent");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "risk")), "low");
	json_decref(r);
	/* depth 1 stops before the test */
	struct kg_query_params p = {0};
	p.module = "Notes.Store";
	p.depth = 1;
	TH_ASSERT_OK(kg_query(db, "preflight", &p, &r));
	TH_ASSERT_INT_EQ(jint(r, "blast_count"), 1);
	TH_ASSERT_INT_EQ(risk_value(r, "untested"), 1);
	json_decref(r);
	/* a function nobody calls, and one a test calls */
	r = preflight(db, "Notes.Store.delete/1", NULL);
	TH_ASSERT_INT_EQ(jint(r, "caller_count"), 0);
	TH_ASSERT_INT_EQ(risk_value(r, "no_callers"), 0);
	TH_ASSERT_INT_GE(risk_value(r, "untested"), 1);
	json_decref(r);
	r = preflight(db, "Notes.add/2", NULL);
	TH_ASSERT_STR_EQ(hit_str(r, "tests", 0, "module"), "NotesTest");
	TH_ASSERT_INT_EQ(risk_value(r, "untested"), -1);
	TH_ASSERT_INT_EQ(risk_value(r, "no_callers"), -1);
	json_decref(r);
	int rc = 0;
	TH_ASSERT(preflight(db, "No.Such", &rc) == NULL);
	TH_ASSERT_INT_EQ(rc, GI_ENOTFOUND);
	TH_ASSERT(preflight(db, "Notes.nothing/9", &rc) == NULL);
	TH_ASSERT_INT_EQ(rc, GI_ENOTFOUND);
	TH_ASSERT(preflight(db, "Agent", &rc) == NULL); /* external: nothing to edit */
	TH_ASSERT_INT_EQ(rc, GI_ENOTFOUND);
	kg_db_close(db);

	/* shop: Shop.Log is a hub (Shop, Shop.Cart, Shop.Repo), Cart <-> Repo a cycle */
	db = fixture_db("shop", 6);
	r = preflight(db, "Shop.Log", NULL);
	TH_ASSERT_INT_EQ(risk_value(r, "hub"), 3);
	json_decref(r);
	r = preflight(db, "Shop.Cart", NULL);
	TH_ASSERT_INT_EQ(risk_value(r, "cycle"), 2);
	TH_ASSERT_INT_EQ(risk_value(r, "hub"), -1);
	json_decref(r);
	kg_db_close(db);
}

struct docs_seen {
	int entries;
	bool moduledoc, split3;
};

static int docs_seen(void *ctx, const char *kind, const char *name, int arity, const char *doc,
                     size_t len)
{
	struct docs_seen *d = ctx;
	d->entries++;
	if (strcmp(kind, "module") == 0)
		d->moduledoc = len > 100;
	else if (strcmp(kind, "function") == 0 && strcmp(name, "split") == 0 && arity == 3)
		d->split3 = memmem(doc, len, "pattern", 7) != NULL;
	return 0;
}

static int docs_ignore(void *ctx, const char *kind, const char *name, int arity, const char *doc,
                       size_t len)
{
	(void)ctx, (void)kind, (void)name, (void)arity, (void)doc, (void)len;
	return 0;
}

static void beam_docs_read_real_and_damaged(void)
{
	const char *path = "/usr/lib/elixir/lib/elixir/ebin/Elixir.String.beam";
	char *data = NULL;
	size_t len = 0;
	TH_NEED(gi_fs_read_file(path, 64u << 20, &data, &len) == 0, "elixir", "%s is missing",
	        path);
	struct docs_seen d = {0};
	TH_ASSERT_OK(beam_docs_read((unsigned char *)data, len, docs_seen, &d));
	TH_ASSERT(d.moduledoc);
	TH_ASSERT(d.split3);
	TH_ASSERT_INT_GE(d.entries, 50);
	/* every prefix and a byte flipped all along: an error or some docs, never a crash
	 * (the sanitizer builds and fuzz/beam_docs.c check the rest) */
	for (size_t cut = 0; cut < len; cut += len / 97 + 1)
		(void)beam_docs_read((unsigned char *)data, cut, docs_ignore, NULL);
	for (size_t at = 12; at < len; at += len / 89 + 1) {
		data[at] ^= 0x5a;
		(void)beam_docs_read((unsigned char *)data, len, docs_ignore, NULL);
		data[at] ^= 0x5a;
	}
	TH_ASSERT_INT_EQ(
	    beam_docs_read((const unsigned char *)"FOR1\0\0\0\4BEAM", 12, docs_ignore, NULL),
	    GI_ENOTFOUND);
	gi_free(data);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(search_terms_split_identifiers_and_words),
	    TH_TEST(search_code_ranks_by_doc_name_and_spec),
	    TH_TEST(search_code_filters_and_pages),
	    TH_TEST(search_code_refuses_bad_arguments),
	    TH_TEST(search_text_labels_hits),
	    TH_TEST(search_text_regex_filters_and_pages),
	    TH_TEST(search_text_refuses_hostile_patterns),
	    TH_TEST(beam_docs_read_real_and_damaged),
	    TH_TEST(search_code_hybrid_expands_with_learned_words),
	    TH_TEST(preflight_modules_and_functions),
	    TH_END,
	};
	return th_main(argc, argv, "unit_search", tests);
}
