/*
 * Unit tests for src/graph and src/store: metrics and topology of a small
 * hand-built project with every value worked out by hand, then the same
 * facts through a real SQLite store and kg_query().
 *
 * The project (core modules A..E, test module ATest, externals :ets, GenServer):
 *   A.run/1 (cyc 3)  -> B.get/1 x2, C.put/2, helper/0 (local), :ets.lookup/2
 *   A.helper/0 (defp)
 *   B.get/1 (cyc 2)  -> C.put/2;  B uses GenServer; init/1; handle_call/3 @impl
 *   C.put/2          -> B.get/1           (cycle B <-> C)
 *   D.main/0         -> run/1 (local, resolved through `import A`)
 *   E.unused/0, E.only_tested/0
 *   ATest.test_run/0 -> A.run/1, E.only_tested/0
 * needs:
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "graph/graph.h"
#include "graph/ignore.h"
#include "graph/query.h"
#include "harness.h"
#include "source/facts.h"
#include "store/store.h"

static struct facts_function *fn_add(struct facts_file *f, struct facts_module *m, const char *name,
                                     int arity, bool pub, int cyc)
{
	struct facts_function *fn = facts_function_add(f, m, name, arity);
	fn->is_public = pub;
	fn->kind = pub ? FACTS_DEF : FACTS_DEFP;
	fn->cyclomatic = cyc;
	fn->cognitive = cyc - 1;
	fn->clauses = 1;
	fn->line_start = 2;
	fn->line_end = 4;
	fn->lines = 3;
	return fn;
}

/* The files of the project; free each with facts_file_free. */
static void project_facts(struct facts_file *files[6])
{
	struct facts_file *f = files[0] = facts_file_new("lib/a.ex", FACTS_FROM_SOURCE);
	struct facts_module *m = facts_module_add(f, "A");
	facts_ref_add(f, m, FACTS_REF_ALIAS, "B", 2);
	facts_ref_add(f, m, FACTS_REF_ALIAS, "C", 3);
	struct facts_function *fn = fn_add(f, m, "run", 1, true, 3);
	facts_call_add(f, fn, FACTS_CALL_REMOTE, "B", "get", 1, 5);
	facts_call_add(f, fn, FACTS_CALL_REMOTE, "B", "get", 1, 6);
	facts_call_add(f, fn, FACTS_CALL_REMOTE, "C", "put", 2, 7);
	facts_call_add(f, fn, FACTS_CALL_LOCAL, "A", "helper", 0, 8);
	facts_call_add(f, fn, FACTS_CALL_REMOTE, ":ets", "lookup", 2, 9);
	fn_add(f, m, "helper", 0, false, 1);

	f = files[1] = facts_file_new("lib/b.ex", FACTS_FROM_SOURCE);
	m = facts_module_add(f, "B");
	facts_ref_add(f, m, FACTS_REF_ALIAS, "C", 2);
	facts_ref_add(f, m, FACTS_REF_USE, "GenServer", 3);
	fn = fn_add(f, m, "get", 1, true, 2);
	fn->has_spec = true;
	facts_call_add(f, fn, FACTS_CALL_REMOTE, "C", "put", 2, 5);
	fn_add(f, m, "init", 1, true, 1);
	fn = fn_add(f, m, "handle_call", 3, true, 1);
	fn->has_impl = true;

	f = files[2] = facts_file_new("lib/c.ex", FACTS_FROM_SOURCE);
	m = facts_module_add(f, "C");
	fn = fn_add(f, m, "put", 2, true, 1);
	facts_call_add(f, fn, FACTS_CALL_REMOTE, "B", "get", 1, 3);

	f = files[3] = facts_file_new("lib/d.ex", FACTS_FROM_SOURCE);
	m = facts_module_add(f, "D");
	facts_ref_add(f, m, FACTS_REF_IMPORT, "A", 2);
	fn = fn_add(f, m, "main", 0, true, 1);
	facts_call_add(f, fn, FACTS_CALL_LOCAL, "D", "run", 1, 4);
	facts_call_add(f, fn, FACTS_CALL_LOCAL, "D", "length", 1, 4); /* Kernel: dropped */

	f = files[4] = facts_file_new("lib/e.ex", FACTS_FROM_SOURCE);
	m = facts_module_add(f, "E");
	fn_add(f, m, "unused", 0, true, 1);
	fn_add(f, m, "only_tested", 0, true, 1);

	f = files[5] = facts_file_new("test/a_test.exs", FACTS_FROM_SOURCE);
	m = facts_module_add(f, "ATest");
	facts_ref_add(f, m, FACTS_REF_USE, "ExUnit.Case", 1);
	fn = fn_add(f, m, "test_run", 0, true, 1);
	facts_call_add(f, fn, FACTS_CALL_REMOTE, "A", "run", 1, 3);
	facts_call_add(f, fn, FACTS_CALL_REMOTE, "E", "only_tested", 0, 4);
}

static struct kg_graph *project_graph(void)
{
	struct facts_file *files[6];
	project_facts(files);
	struct kg_graph *g = kg_graph_new();
	for (int i = 0; i < 6; i++) {
		kg_graph_add_facts(g, files[i], kg_path_is_test(files[i]->path));
		facts_file_free(files[i]);
	}
	kg_graph_finish(g);
	return g;
}

static const struct kg_module *mod(const struct kg_graph *g, const char *name)
{
	int i = kg_graph_module_find(g, name);
	TH_ASSERT_MSG(i >= 0, "module %s not in the graph", name);
	return kg_module_at(g, i);
}

static void graph_degrees_and_instability(void)
{
	struct kg_graph *g = project_graph();
	TH_ASSERT_INT_EQ(mod(g, "A")->ca, 1);
	TH_ASSERT_INT_EQ(mod(g, "A")->ce, 2);
	TH_ASSERT_INT_EQ(mod(g, "A")->out_degree, 3); /* B, C, :ets */
	TH_ASSERT_INT_EQ(mod(g, "B")->ca, 2);
	TH_ASSERT_INT_EQ(mod(g, "B")->ce, 1);
	TH_ASSERT_INT_EQ(mod(g, "B")->out_degree, 2); /* C, GenServer */
	TH_ASSERT_INT_EQ(mod(g, "C")->ca, 2);
	TH_ASSERT_INT_EQ(mod(g, "D")->ce, 1);
	TH_ASSERT_INT_EQ(mod(g, "E")->ca, 0);
	TH_ASSERT_DBL_NEAR(mod(g, "A")->instability, 2.0 / 3.0, 1e-12);
	TH_ASSERT_DBL_NEAR(mod(g, "B")->instability, 1.0 / 3.0, 1e-12);
	TH_ASSERT_DBL_NEAR(mod(g, "D")->instability, 1.0, 1e-12);
	TH_ASSERT_DBL_NEAR(mod(g, "E")->instability, 0.0, 1e-12);
	TH_ASSERT(!mod(g, ":ets")->project);
	TH_ASSERT(!mod(g, "GenServer")->project);
	TH_ASSERT(mod(g, "ATest")->test);
	TH_ASSERT(kg_graph_module_find(g, "length") < 0);
	/* typed edges: A -> B is alias + call with 3 references behind it */
	const struct kg_module *a = mod(g, "A");
	bool seen = false;
	for (size_t i = 0; i < a->out.len; i++) {
		const struct kg_edge *e = kg_edge_at(g, GI_VEC_AT(&a->out, int, i));
		if (strcmp(kg_module_at(g, e->to)->name, "B") == 0) {
			TH_ASSERT_INT_EQ(e->kinds,
			                 (1u << FACTS_REF_ALIAS) | (1u << FACTS_REF_CALL));
			TH_ASSERT_INT_EQ(e->count, 3);
			seen = true;
		}
	}
	TH_ASSERT(seen);
	kg_graph_free(g);
}

static void graph_counts_complexity_and_tests(void)
{
	struct kg_graph *g = project_graph();
	TH_ASSERT_INT_EQ(mod(g, "A")->public_count, 1);
	TH_ASSERT_INT_EQ(mod(g, "A")->private_count, 1);
	TH_ASSERT_INT_EQ(mod(g, "A")->complexity_total, 4);
	TH_ASSERT_INT_EQ(mod(g, "A")->complexity_max, 3);
	TH_ASSERT_INT_EQ(mod(g, "B")->complexity_total, 4);
	TH_ASSERT_INT_EQ(mod(g, "B")->specced, 1);
	TH_ASSERT(mod(g, "A")->has_tests);
	TH_ASSERT(mod(g, "E")->has_tests);
	TH_ASSERT(!mod(g, "B")->has_tests);
	TH_ASSERT(!mod(g, "B")->hub); /* in_degree 2 < 3 */
	kg_graph_free(g);
}

static void graph_local_calls_resolve(void)
{
	struct kg_graph *g = project_graph();
	int a = kg_graph_module_find(g, "A"), d = kg_graph_module_find(g, "D");
	int helper = kg_graph_function_find(g, a, "helper", 0);
	int run = kg_graph_function_find(g, a, "run", 1);
	TH_ASSERT(helper >= 0 && run >= 0);
	TH_ASSERT_INT_EQ(kg_function_at(g, helper)->callers.len, 1);
	/* D.main/0 calls run/1 through `import A`; ATest calls it too */
	TH_ASSERT_INT_EQ(kg_function_at(g, run)->callers.len, 2);
	int main_fn = kg_graph_function_find(g, d, "main", 0);
	TH_ASSERT_INT_EQ(kg_function_at(g, main_fn)->callees.len, 1);
	/* B.get/1 is called twice from one call site pair: one call edge, count 2 */
	int b = kg_graph_module_find(g, "B");
	int get = kg_graph_function_find(g, b, "get", 1);
	const struct kg_function *fg = kg_function_at(g, get);
	int from_a = 0;
	for (size_t i = 0; i < fg->callers.len; i++) {
		const struct kg_call *c = kg_call_at(g, GI_VEC_AT(&fg->callers, int, i));
		if (c->from_fn == run)
			from_a = c->count;
	}
	TH_ASSERT_INT_EQ(from_a, 2);
	kg_graph_free(g);
}

static void graph_pairwise_coupling(void)
{
	struct kg_graph *g = project_graph();
	TH_ASSERT_INT_EQ(g->pairs.len, 5); /* A->B, A->C, B->C, C->B, D->A */
	const struct kg_pair *top = &GI_VEC_AT(&g->pairs, struct kg_pair, 0);
	TH_ASSERT_STR_EQ(kg_module_at(g, top->from)->name, "A");
	TH_ASSERT_STR_EQ(kg_module_at(g, top->to)->name, "B");
	TH_ASSERT_INT_EQ(top->calls, 2);
	TH_ASSERT_INT_EQ(top->functions, 1);
	TH_ASSERT_INT_EQ(mod(g, "A")->max_coupling, 2);
	TH_ASSERT_INT_EQ(mod(g, "B")->max_coupling, 2);
	TH_ASSERT_INT_EQ(mod(g, "C")->max_coupling, 1);
	TH_ASSERT_INT_EQ(mod(g, "E")->max_coupling, 0);
	kg_graph_free(g);
}

static void graph_heat_risk_and_god_scores(void)
{
	struct kg_graph *g = project_graph();
	/* A: in 1, complexity 4, tested, max coupling 2:
	 * 0.30*(1/15*100) + 0.25*(4/200*100) + 0 + 0.20*(2/50*100) = 2 + 0.5 + 0.8 */
	TH_ASSERT_DBL_NEAR(mod(g, "A")->heat, 3.3, 1e-9);
	/* B: in 2, complexity 4, untested, max coupling 2: 4 + 0.5 + 25 + 0.8 */
	TH_ASSERT_DBL_NEAR(mod(g, "B")->heat, 30.3, 1e-9);
	TH_ASSERT_STR_EQ(kg_heat_zone(mod(g, "B")->heat), "yellow");
	TH_ASSERT_STR_EQ(kg_heat_zone(mod(g, "A")->heat), "green");
	TH_ASSERT_STR_EQ(kg_heat_zone(60.0), "red");
	/* A: (2*4 + 2*2 + 2*2 + round(0.5*2) + 2) * (1 + 1/2) = 19 * 1.5 */
	TH_ASSERT_DBL_NEAR(mod(g, "A")->change_risk, 28.5, 1e-9);
	/* B: (8 + 2 + 4 + 3 + 3) * (1 + 2/2) = 40 */
	TH_ASSERT_DBL_NEAR(mod(g, "B")->change_risk, 40.0, 1e-9);
	TH_ASSERT_INT_EQ(mod(g, "A")->god_score, 2 + 8 + 3);
	TH_ASSERT_INT_EQ(mod(g, "B")->god_score, 3 + 8 + 6);
	kg_graph_free(g);
}

static void graph_pagerank(void)
{
	struct kg_graph *g = project_graph();
	double sum = 0;
	for (size_t i = 0; i < g->modules.len; i++)
		sum += kg_module_at(g, (int)i)->centrality;
	TH_ASSERT_DBL_NEAR(sum, 1.0, 1e-9);
	TH_ASSERT_DBL_NEAR(mod(g, "B")->centrality, mod(g, "C")->centrality, 1e-9);
	TH_ASSERT_DBL_NEAR(mod(g, "D")->centrality, mod(g, "E")->centrality, 1e-9);
	TH_ASSERT(mod(g, "B")->centrality > mod(g, "A")->centrality);
	TH_ASSERT(mod(g, "A")->centrality > mod(g, "D")->centrality);
	TH_ASSERT_DBL_NEAR(mod(g, "ATest")->centrality, 0.0, 1e-12);
	/* D and E receive nothing: their rank is the teleport share plus the
	 * dangling share of E; with D = E = x, A = x + 0.85x, the rest follows.
	 * Check the teleport floor: x >= 0.15 / 5. */
	TH_ASSERT(mod(g, "D")->centrality >= 0.03 - 1e-12);
	kg_graph_free(g);
}

/* X -> Y -> Z: with a = (1 - d)/3 + d*rZ/3, rX = a, rY = 1.85a, rZ = 2.5725a,
 * and the ranks sum to 1, so a = 1/5.4225. */
static void graph_pagerank_chain_exact(void)
{
	struct kg_graph *g = kg_graph_new();
	struct facts_file *f = facts_file_new("lib/xyz.ex", FACTS_FROM_SOURCE);
	facts_ref_add(f, facts_module_add(f, "X"), FACTS_REF_ALIAS, "Y", 1);
	facts_ref_add(f, facts_module_add(f, "Y"), FACTS_REF_ALIAS, "Z", 1);
	facts_module_add(f, "Z");
	kg_graph_add_facts(g, f, false);
	facts_file_free(f);
	kg_graph_finish(g);
	double a = 1.0 / 5.4225;
	TH_ASSERT_DBL_NEAR(mod(g, "X")->centrality, a, 1e-9);
	TH_ASSERT_DBL_NEAR(mod(g, "Y")->centrality, 1.85 * a, 1e-9);
	TH_ASSERT_DBL_NEAR(mod(g, "Z")->centrality, 2.5725 * a, 1e-9);
	TH_ASSERT_INT_EQ(mod(g, "Z")->layer, 0);
	TH_ASSERT_INT_EQ(mod(g, "X")->layer, 2);
	kg_graph_free(g);
}

static void graph_cycles_and_layers(void)
{
	struct kg_graph *g = project_graph();
	int cycles = 0;
	for (size_t i = 0; i < g->sccs.len; i++) {
		const struct kg_scc *s = &GI_VEC_AT(&g->sccs, struct kg_scc, i);
		if (s->count > 1) {
			cycles++;
			TH_ASSERT_INT_EQ(s->count, 2);
		}
	}
	TH_ASSERT_INT_EQ(cycles, 1);
	TH_ASSERT_INT_EQ(mod(g, "B")->scc, mod(g, "C")->scc);
	TH_ASSERT_INT_EQ(mod(g, "B")->layer, 0);
	TH_ASSERT_INT_EQ(mod(g, "E")->layer, 0);
	TH_ASSERT_INT_EQ(mod(g, "A")->layer, 1);
	TH_ASSERT_INT_EQ(mod(g, "D")->layer, 2);
	TH_ASSERT_INT_EQ(g->layer_count, 3);
	kg_graph_free(g);
}

static enum kg_dead_reason dead(const struct kg_graph *g, const char *m, const char *f, int arity)
{
	int fi = kg_graph_function_find(g, kg_graph_module_find(g, m), f, arity);
	TH_ASSERT_MSG(fi >= 0, "%s.%s/%d missing", m, f, arity);
	return kg_function_dead_reason_opts(g, fi, true);
}

static void graph_dead_code_classified(void)
{
	struct kg_graph *g = project_graph();
	TH_ASSERT_INT_EQ(dead(g, "A", "run", 1), KG_ALIVE);
	TH_ASSERT_INT_EQ(dead(g, "A", "helper", 0), KG_ALIVE); /* private */
	TH_ASSERT_INT_EQ(dead(g, "B", "get", 1), KG_ALIVE);
	TH_ASSERT_INT_EQ(dead(g, "B", "init", 1), KG_DEAD_CALLBACK);
	TH_ASSERT_INT_EQ(dead(g, "B", "handle_call", 3), KG_DEAD_CALLBACK);
	TH_ASSERT_INT_EQ(dead(g, "C", "put", 2), KG_ALIVE);
	TH_ASSERT_INT_EQ(dead(g, "D", "main", 0), KG_DEAD_UNREFERENCED);
	TH_ASSERT_INT_EQ(dead(g, "E", "unused", 0), KG_DEAD_UNREFERENCED);
	TH_ASSERT_INT_EQ(dead(g, "E", "only_tested", 0), KG_DEAD_TEST_ONLY);
	TH_ASSERT_INT_EQ(dead(g, "ATest", "test_run", 0), KG_ALIVE); /* tests are not core */
	/* with dispatch (the default), a behaviour's callbacks are referenced by it */
	int init = kg_graph_function_find(g, kg_graph_module_find(g, "B"), "init", 1);
	TH_ASSERT_INT_EQ(kg_function_dead_reason(g, init), KG_ALIVE);
	TH_ASSERT_INT_EQ(kg_function_dispatch_of(g, init), 1u << FACTS_REF_CALLBACK);
	TH_ASSERT_INT_EQ(kg_function_dead_reason(
	                     g, kg_graph_function_find(g, kg_graph_module_find(g, "D"), "main", 0)),
	                 KG_DEAD_UNREFERENCED);
	kg_graph_free(g);
}

static void graph_path_is_test(void)
{
	TH_ASSERT(kg_path_is_test("test/a_test.exs"));
	TH_ASSERT(kg_path_is_test("apps/x/test/support/helper.ex"));
	TH_ASSERT(kg_path_is_test("foo_test.exs"));
	TH_ASSERT(!kg_path_is_test("lib/testing.ex"));
	TH_ASSERT(!kg_path_is_test("lib/contest/x.ex"));
	TH_ASSERT(!kg_path_is_test("lib/phoenix/test/conn_test.ex"));
	TH_ASSERT(kg_path_is_test("test/support/conn_case.ex"));
	/* nested Mix projects of one repository (Phoenix's installer/) */
	TH_ASSERT(kg_path_is_test("installer/test/mix_helper.exs"));
	TH_ASSERT(kg_path_is_test("integration_test/test/support/code_generator_case.ex"));
	TH_ASSERT(!kg_path_is_test("installer/lib/phx_new/test/x.ex"));
	/* Elixir's own lib/APP/test: scripts are tests, not library */
	TH_ASSERT(kg_path_is_test("lib/elixir/test/elixir/test_helper.exs"));
	TH_ASSERT(!kg_path_is_test("lib/ex_unit/lib/ex_unit/case.ex"));
}

static void ignore_patterns_match(void)
{
	static const char text[] = "# comment\n"
	                           "\n"
	                           "generated/\n"
	                           "*_gen.ex\n"
	                           "/priv/x.ex\n"
	                           "!keep.ex\n"
	                           "docs/*.exs   \r\n";
	struct kg_ignore ig;
	kg_ignore_parse(&ig, text, sizeof(text) - 1);
	TH_ASSERT(kg_ignore_match(&ig, "generated/a.ex"));
	TH_ASSERT(kg_ignore_match(&ig, "lib/generated/deep/a.ex"));
	TH_ASSERT(!kg_ignore_match(&ig, "lib/generated.ex")); /* a file, not a directory */
	TH_ASSERT(kg_ignore_match(&ig, "lib/schema_gen.ex"));
	TH_ASSERT(kg_ignore_match(&ig, "priv/x.ex"));
	TH_ASSERT(!kg_ignore_match(&ig, "lib/priv/x.ex")); /* anchored */
	TH_ASSERT(kg_ignore_match(&ig, "docs/a.exs"));
	TH_ASSERT(!kg_ignore_match(&ig, "docs/sub/a.exs"));
	TH_ASSERT(!kg_ignore_match(&ig, "lib/keep.ex"));
	TH_ASSERT(!kg_ignore_match(&ig, "lib/shop.ex"));
	kg_ignore_destroy(&ig);
	kg_ignore_parse(&ig, "", 0);
	TH_ASSERT(!kg_ignore_match(&ig, "lib/shop.ex"));
	kg_ignore_destroy(&ig);
}

static void graph_merges_duplicate_modules(void)
{
	struct kg_graph *g = kg_graph_new();
	struct facts_file *f1 = facts_file_new("lib/x.ex", FACTS_FROM_SOURCE);
	struct facts_module *m = facts_module_add(f1, "X");
	fn_add(f1, m, "f", 0, true, 2);
	struct facts_file *f2 = facts_file_new("lib/x2.ex", FACTS_FROM_SOURCE);
	m = facts_module_add(f2, "X");
	fn_add(f2, m, "f", 0, true, 3);
	fn_add(f2, m, "g", 0, true, 1);
	kg_graph_add_facts(g, f1, false);
	kg_graph_add_facts(g, f2, false);
	facts_file_free(f1);
	facts_file_free(f2);
	kg_graph_finish(g);
	TH_ASSERT_INT_EQ(g->modules.len, 1);
	TH_ASSERT_STR_EQ(mod(g, "X")->file, "lib/x.ex");
	TH_ASSERT_INT_EQ(mod(g, "X")->complexity_total, 6);
	TH_ASSERT_INT_EQ(mod(g, "X")->public_count, 2);
	kg_graph_free(g);
}

/* ---- through the store and kg_query --------------------------------------- */

static struct kg_db *project_db(char *path, size_t size)
{
	snprintf(path, size, "%s/index.db", th_tmpdir());
	struct st_db *st = NULL;
	TH_ASSERT_OK(st_open(path, true, &st));
	struct facts_file *files[6];
	project_facts(files);
	TH_ASSERT_OK(st_begin(st));
	for (int i = 0; i < 6; i++) {
		files[i]->size = 100;
		files[i]->mtime_ns = 1;
		files[i]->content_hash = (uint64_t)i;
		TH_ASSERT_OK(
		    st_file_write(st, files[i]->path, files[i], kg_path_is_test(files[i]->path)));
		facts_file_free(files[i]);
	}
	TH_ASSERT_OK(st_commit(st));
	st_close(st);
	struct kg_db *db = NULL;
	TH_ASSERT_OK(kg_db_open(path, false, &db));
	return db;
}

static json_t *query(struct kg_db *db, const char *name, const char *module, const char *function)
{
	struct kg_query_params p = {0};
	p.module = module;
	p.function = function;
	json_t *r = NULL;
	int rc = kg_query(db, name, &p, &r);
	TH_ASSERT_MSG(rc == 0, "query %s failed: %d", name, rc);
	return r;
}

static void store_roundtrip_keeps_metrics(void)
{
	char path[4096];
	struct kg_db *db = project_db(path, sizeof(path));
	json_t *r = query(db, "module_details", "B", NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "ca")), 2);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "ce")), 1);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "complexity_total")), 4);
	TH_ASSERT_DBL_NEAR(json_real_value(json_object_get(r, "heat")), 30.3, 1e-9);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "zone")), "yellow");
	TH_ASSERT_DBL_NEAR(json_real_value(json_object_get(r, "change_risk")), 40.0, 1e-9);
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(json_object_get(r, "uses"), 0)),
	                 "GenServer");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "functions")), 3);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(r, "file")), "lib/b.ex");
	json_decref(r);

	r = query(db, "summary", NULL, NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "files")), 6);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "modules")), 6);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "test_modules")), 1);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "cycles")), 1);
	json_decref(r);

	r = query(db, "dead_code", NULL, NULL);
	json_t *by = json_object_get(r, "by_reason");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(by, "callback")), 0);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(
	                     json_object_get(r, "reached_by_dispatch"), "callback")),
	                 2);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(by, "test_only")), 1);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(by, "unreferenced")), 2);
	json_decref(r);
	kg_db_close(db);
}

static void query_dependents_and_dependencies(void)
{
	char path[4096];
	struct kg_db *db = project_db(path, sizeof(path));
	json_t *r = query(db, "dependents", "A", NULL);
	json_t *a = json_object_get(r, "dependents");
	TH_ASSERT_INT_EQ(json_array_size(a), 2); /* ATest, D */
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(a, 0), "module")),
	                 "ATest");
	TH_ASSERT(json_is_true(json_object_get(json_array_get(a, 0), "test")));
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(a, 1), "module")), "D");
	TH_ASSERT_STR_EQ(
	    json_string_value(json_array_get(json_object_get(json_array_get(a, 1), "kinds"), 0)),
	    "import");
	json_decref(r);
	r = query(db, "dependencies", "A", NULL);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "dependencies")), 2); /* B, C */
	json_decref(r);
	struct kg_query_params p = {.module = "A", .include_external = true};
	TH_ASSERT_OK(kg_query(db, "dependencies", &p, &r));
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "dependencies")), 3); /* + :ets */
	json_decref(r);
	r = NULL;
	p.module = "Nope";
	TH_ASSERT_INT_EQ(kg_query(db, "dependents", &p, &r), GI_ENOTFOUND);
	TH_ASSERT_INT_EQ(kg_query(db, "no_such_query", &p, &r), GI_EINVAL);
	kg_db_close(db);
}

static void query_impact_and_path(void)
{
	char path[4096];
	struct kg_db *db = project_db(path, sizeof(path));
	struct kg_query_params p = {.module = "C", .depth = 1};
	json_t *r = NULL;
	TH_ASSERT_OK(kg_query(db, "impact", &p, &r));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "dependent_count")), 2); /* A, B */
	json_decref(r);
	p.depth = 2;
	TH_ASSERT_OK(kg_query(db, "impact", &p, &r));
	/* A, B at depth 1; D and ATest (through A) at depth 2 */
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "dependent_count")), 4);
	json_decref(r);
	p.module = "B";
	p.function = "get/1";
	TH_ASSERT_OK(kg_query(db, "impact", &p, &r));
	/* A.run/1, C.put/2; then D.main/0 and ATest.test_run/0 */
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "caller_count")), 4);
	json_decref(r);
	p.function = "nope/9";
	TH_ASSERT_INT_EQ(kg_query(db, "impact", &p, &r), GI_ENOTFOUND);
	struct kg_query_params whole = {.module = "B.get/1", .depth = 2};
	TH_ASSERT_OK(kg_query(db, "impact", &whole, &r));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "caller_count")), 4);
	json_decref(r);

	struct kg_query_params q = {.from = "D", .to = "C"};
	TH_ASSERT_OK(kg_query(db, "path", &q, &r));
	TH_ASSERT(json_is_true(json_object_get(r, "found")));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "hops")), 2);
	TH_ASSERT_STR_EQ(json_string_value(json_array_get(json_object_get(r, "path"), 1)), "A");
	json_decref(r);
	q.from = "E";
	q.to = "A";
	TH_ASSERT_OK(kg_query(db, "path", &q, &r));
	TH_ASSERT(!json_is_true(json_object_get(r, "found")));
	json_decref(r);
	kg_db_close(db);
}

static void query_every_name_answers(void)
{
	char path[4096];
	struct kg_db *db = project_db(path, sizeof(path));
	static const char *const names[] = {
	    "status",           "summary",     "stats",   "modules",     "functions",
	    "complexity",       "centrality",  "cycles",  "god_modules", "fan_in_out",
	    "coupling",         "dead_code",   "heatmap", "change_risk", "topology",
	    "unprotected_hubs", "api_surface", "hubs",    NULL,
	};
	for (const char *const *n = names; *n; n++) {
		json_t *r = query(db, *n, NULL, NULL);
		TH_ASSERT(json_is_object(r));
		json_decref(r);
	}
	json_t *r = query(db, "function_details", "A", "run/1");
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "callers")), 2);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "callees")), 4);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "cyclomatic")), 3);
	json_decref(r);
	r = query(db, "topology", NULL, NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "layer_count")), 3);
	json_decref(r);
	r = query(db, "functions", "A", NULL);
	json_t *f0 = json_array_get(json_object_get(r, "functions"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(f0, "name")), "run");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(f0, "visibility")), "public");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(f0, "kind")), "def");
	json_decref(r);
	json_t *mods = NULL;
	TH_ASSERT_OK(kg_project_modules(db, &mods));
	TH_ASSERT_INT_EQ(json_array_size(mods), 6);
	json_decref(mods);
	kg_db_close(db);
}

/* A damaged or hand-edited file may hold any ids and kinds: loading ignores
 * rows that point nowhere and copes with huge ids. */
static void store_load_tolerates_odd_rows(void)
{
	char path[4096];
	struct kg_db *db = project_db(path, sizeof(path));
	kg_db_close(db);
	sqlite3 *s = NULL;
	TH_ASSERT_INT_EQ(sqlite3_open(path, &s), SQLITE_OK);
	TH_ASSERT_INT_EQ(
	    sqlite3_exec(s,
	                 "UPDATE modules SET id = id + 4000000000000;"
	                 "UPDATE functions SET module_id = module_id + 4000000000000,"
	                 "  id = id + 9000000000000;"
	                 "UPDATE calls SET function_id = function_id + 9000000000000;"
	                 "UPDATE refs SET module_id = module_id + 4000000000000;"
	                 "INSERT INTO refs VALUES (1, 4000000000001, 99, 'X', 1, 1);"
	                 "INSERT INTO refs VALUES (1, -7, 0, 'X', 1, 1);"
	                 "INSERT INTO calls VALUES (1, -5, 0, 'A', 'run', 1, 1, 1);"
	                 "INSERT INTO calls VALUES (1, 9000000000001, 7, NULL, NULL, -3, 1, 1);"
	                 "INSERT INTO functions(file_id, module_id, name, arity, kind, public)"
	                 "  VALUES (1, 12345, 'ghost', 0, 0, 1);",
	                 NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(s);
	TH_ASSERT_OK(kg_db_open(path, false, &db));
	json_t *r = query(db, "module_details", "B", NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "ca")), 2);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(r, "functions")), 3);
	json_decref(r);
	r = query(db, "summary", NULL, NULL);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(r, "modules")), 6);
	json_decref(r);
	kg_db_close(db);
}

static void store_rejects_corrupt_and_foreign_files(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/garbage.db", th_tmpdir());
	FILE *f = fopen(path, "w");
	TH_ASSERT(f != NULL);
	for (int i = 0; i < 200; i++)
		fputs("this is not a database at all\n", f);
	fclose(f);
	struct kg_db *db = NULL;
	TH_ASSERT_INT_EQ(kg_db_open(path, false, &db), GI_ECORRUPT);
	snprintf(path, sizeof(path), "%s/missing.db", th_tmpdir());
	TH_ASSERT_INT_EQ(kg_db_open(path, false, &db), GI_ENOENT);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(graph_degrees_and_instability),
	    TH_TEST(graph_counts_complexity_and_tests),
	    TH_TEST(graph_local_calls_resolve),
	    TH_TEST(graph_pairwise_coupling),
	    TH_TEST(graph_heat_risk_and_god_scores),
	    TH_TEST(graph_pagerank),
	    TH_TEST(graph_pagerank_chain_exact),
	    TH_TEST(graph_cycles_and_layers),
	    TH_TEST(graph_dead_code_classified),
	    TH_TEST(graph_path_is_test),
	    TH_TEST(graph_merges_duplicate_modules),
	    TH_TEST(ignore_patterns_match),
	    TH_TEST(store_roundtrip_keeps_metrics),
	    TH_TEST(query_dependents_and_dependencies),
	    TH_TEST(query_impact_and_path),
	    TH_TEST(query_every_name_answers),
	    TH_TEST(store_load_tolerates_odd_rows),
	    TH_TEST(store_rejects_corrupt_and_foreign_files),
	    TH_END,
	};
	return th_main(argc, argv, "unit_graph", tests);
}
