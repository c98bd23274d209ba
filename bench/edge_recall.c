/*
 * edge_recall - module-level remote-call edges found in Elixir source
 * against those of the object code the compiler made from it (the oracle):
 * for every Elixir module both know, the distinct modules its functions
 * call (remote calls and captures; MFAs and apply with literals too), from
 * the source reader (ex_parse) and from the BEAM reader (beam_read_file,
 * ImpT/LitT). Prints precision and recall, and the residue by category.
 *
 *   edge_recall SOURCE_ROOT EBIN_DIR...
 *
 * SOURCE_ROOT is walked for *.ex; EBIN_DIRs for Elixir.*.beam. Used by
 * bench/bench_edge_recall.sh; results in BENCHMARKS.md "Edge recall".
 * needs: elixir
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/map.h"
#include "base/str.h"
#include "source/beam.h"
#include "source/elixir.h"
#include "source/facts.h"

struct edges {
	struct gi_map set;     /* "From\tTo" -> 1 */
	struct gi_map modules; /* module -> 1 */
};

static bool call_is_remote(const struct facts_call *c, const char *self)
{
	if (!c->module || strcmp(c->module, self) == 0)
		return false;
	return c->kind == FACTS_CALL_REMOTE || c->kind == FACTS_CALL_CAPTURE ||
	       c->kind == FACTS_CALL_MFA || c->kind == FACTS_CALL_APPLY ||
	       c->kind == FACTS_CALL_COMPILER;
}

static void facts_edges(const struct facts_file *f, struct edges *e)
{
	char key[2048];
	for (size_t m = 0; m < f->modules.len; m++) {
		const struct facts_module *mod = gi_vec_get(&f->modules, m);
		gi_map_put(&e->modules, mod->name, (void *)1);
		for (size_t k = 0; k < mod->functions.len; k++) {
			const struct facts_function *fn = gi_vec_get(&mod->functions, k);
			for (size_t j = 0; j < fn->calls.len; j++) {
				const struct facts_call *c = gi_vec_get(&fn->calls, j);
				if (!call_is_remote(c, mod->name))
					continue;
				snprintf(key, sizeof(key), "%s\t%s", mod->name, c->module);
				gi_map_put(&e->set, key, (void *)1);
			}
		}
	}
}

static int on_source(const char *path, void *ctx)
{
	if (!gi_str_ends_with(path, ".ex"))
		return 0;
	char *text = NULL;
	size_t len = 0;
	struct facts_file *f = NULL;
	if (gi_fs_read_file(path, EX_MAX_FILE_SIZE, &text, &len) == 0 &&
	    ex_parse(path, text, len, &f) == 0) {
		facts_edges(f, ctx);
		facts_file_free(f);
	}
	gi_free(text);
	return 0;
}

static int on_beam(const char *path, void *ctx)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!GI_STR_STARTS(base, "Elixir.") || !gi_str_ends_with(base, ".beam"))
		return 0;
	struct facts_file *f = NULL;
	char err[256];
	if (beam_read_file(path, &f, err, sizeof(err)) == 0) {
		facts_edges(f, ctx);
		facts_file_free(f);
	}
	return 0;
}

/* The category of an edge one side has and the other has not. */
static const char *category(const char *target)
{
	static const char *const rewrites[] = {":erlang",        ":lists",   ":maps",
	                                       ":elixir_utils",  ":unicode", ":binary",
	                                       ":elixir_module", NULL};
	for (size_t i = 0; rewrites[i]; i++)
		if (strcmp(target, rewrites[i]) == 0)
			return "compiler rewrite to Erlang";
	if (target[0] == ':')
		return "other Erlang module (inlined/rewritten calls)";
	if (strcmp(target, "String.Chars") == 0 || strcmp(target, "List.Chars") == 0)
		return "interpolation (String.Chars/List.Chars)";
	if (strcmp(target, "Access") == 0)
		return "access syntax x[k] (Access)";
	if (strcmp(target, "Kernel") == 0 || strcmp(target, "Kernel.Utils") == 0)
		return "Kernel macros expanded/inlined";
	if (gi_str_ends_with(target, "Error") || gi_str_ends_with(target, "Exception"))
		return "raise (exception/1, message/1)";
	return "macro expansion and other";
}

struct tally {
	const char *name;
	long count;
};

static void tally_add(struct tally *t, int *n, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (strcmp(t[i].name, name) == 0) {
			t[i].count++;
			return;
		}
	t[*n].name = name;
	t[(*n)++].count = 1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: edge_recall SOURCE_ROOT EBIN_DIR...\n");
		return 2;
	}
	struct edges src, obj;
	gi_map_init(&src.set);
	gi_map_init(&src.modules);
	gi_map_init(&obj.set);
	gi_map_init(&obj.modules);
	gi_fs_walk(argv[1], NULL, on_source, &src);
	for (int i = 2; i < argc; i++)
		gi_fs_walk(argv[i], NULL, on_beam, &obj);
	long both = 0, found = 0, oracle = 0, oracle_elixir = 0, both_elixir = 0;
	struct tally missed[16], extra[16];
	int nm = 0, ne = 0;
	char from[1024];
	for (size_t i = 0; i < obj.set.cap; i++) {
		const char *k = obj.set.slots[i].key;
		if (!k)
			continue;
		snprintf(from, sizeof(from), "%.*s", (int)strcspn(k, "\t"), k);
		if (!gi_map_get(&src.modules, from))
			continue;
		oracle++;
		bool erlang = strchr(k, '\t')[1] == ':';
		oracle_elixir += !erlang;
		if (gi_map_get(&src.set, k)) {
			both++;
			both_elixir += !erlang;
		} else if (nm < 16)
			tally_add(missed, &nm, category(strchr(k, '\t') + 1));
	}
	for (size_t i = 0; i < src.set.cap; i++) {
		const char *k = src.set.slots[i].key;
		if (!k)
			continue;
		snprintf(from, sizeof(from), "%.*s", (int)strcspn(k, "\t"), k);
		if (!gi_map_get(&obj.modules, from))
			continue;
		found++;
		if (!gi_map_get(&obj.set, k) && ne < 16)
			tally_add(extra, &ne, category(strchr(k, '\t') + 1));
		if (getenv("EDGE_RECALL_LIST") && !gi_map_get(&obj.set, k))
			printf("extra\t%s\n", k);
	}
	if (getenv("EDGE_RECALL_LIST"))
		for (size_t i = 0; i < obj.set.cap; i++) {
			const char *k = obj.set.slots[i].key;
			if (!k)
				continue;
			snprintf(from, sizeof(from), "%.*s", (int)strcspn(k, "\t"), k);
			if (gi_map_get(&src.modules, from) && !gi_map_get(&src.set, k))
				printf("missed\t%s\n", k);
		}
	printf("edges: object code %ld, source %ld, both %ld; recall %.3f, precision %.3f\n",
	       oracle, found, both, oracle ? (double)both / (double)oracle : 0.0,
	       found ? (double)both / (double)found : 0.0);
	printf("edges to Elixir modules (compiler rewrites to Erlang left out): object code %ld, "
	       "both %ld; recall %.3f\n",
	       oracle_elixir, both_elixir,
	       oracle_elixir ? (double)both_elixir / (double)oracle_elixir : 0.0);
	printf("missed by category:\n");
	for (int i = 0; i < nm; i++)
		printf("  %6ld  %s\n", missed[i].count, missed[i].name);
	printf("extra by category:\n");
	for (int i = 0; i < ne; i++)
		printf("  %6ld  %s\n", extra[i].count, extra[i].name);
	return 0;
}
