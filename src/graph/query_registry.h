/*
 * query_registry.h - the registry of named static queries: each query of
 * kg_query() declared once, in graph/query_list.h, with its parameters, its
 * REST route, its MCP tool, its CLI command and its result; every surface
 * reads it from here:
 *
 *   graph/query.c     the dispatch (name -> implementation)
 *   api/worker.c      the routes (GET/POST PATH -> kg_query(name))
 *   mcp/tools.c       the tools (their entries and input schemas)
 *   cli/cmd_*.c       the commands' query names and option mapping
 *   docs/API.md       the reference between its query-registry markers
 *                     (`make api-docs`, `giulia query --list --format markdown`)
 *
 * tests/integration/query_registry.c fails when a surface disagrees with it.
 *
 * Thread-safety: read-only static data; safe from any thread.
 */
#ifndef GIULIA_GRAPH_QUERY_REGISTRY_H
#define GIULIA_GRAPH_QUERY_REGISTRY_H

#include <stdbool.h>

#include "base/buf.h"

enum kg_param_type { KG_PARAM_STRING, KG_PARAM_INTEGER, KG_PARAM_BOOLEAN };

/* Where kg_query reads a parameter: a field of struct kg_query_params, or
 * (KG_FIELD_ARGS) its named arguments p->args. */
enum kg_param_field {
	KG_FIELD_ARGS,
	KG_FIELD_MODULE,
	KG_FIELD_FUNCTION,
	KG_FIELD_FROM,
	KG_FIELD_TO,
	KG_FIELD_DEPTH,
	KG_FIELD_TOP,
	KG_FIELD_EXTERNAL, /* include_external */
	KG_FIELD_DIRECT,   /* direct_only */
	KG_FIELD_LABEL,
};

/* What stored profile a query is given besides its parameters. */
enum kg_query_profile {
	KG_PROFILE_NONE,
	KG_PROFILE_PROJECT, /* p->profile: the latest profile of the project (preflight, briefing)
	                     */
	KG_PROFILE_STORE,   /* args "profile": the store's latest, or "profile_note" (review) */
};

struct kg_param {
	const char *name;
	enum kg_param_type type;
	enum kg_param_field field;
	bool required;
	bool rest_only;      /* accepted by the REST route only (an alias) */
	long long min, max;  /* integers: bounds */
	const char *choices; /* strings: allowed values, "a|b|c", or NULL */
	const char *dflt;    /* the default in words, or NULL */
	const char *cli;     /* the CLI's flag ("--depth") or positional ("MODULE"), or NULL */
	const char *description;
};

struct kg_query_def {
	const char *name;   /* kg_query's name */
	const char *method; /* "GET", or "POST" with a JSON body */
	const char *path;   /* the worker's REST route */
	const char *tool;   /* the MCP tool */
	const char *title;
	/* The CLI command that runs it ("search" for search_text), or NULL: only
	 * `giulia query NAME`. */
	const char *command;
	enum kg_query_profile profile;
	const char
	    *result; /* the result's required keys: "key:type ..." (docs/SCHEMA.md has all) */
	const char *description;
	const struct kg_param *params; /* terminated by a NULL name */
};

/* The registry, terminated by an entry whose name is NULL. */
extern const struct kg_query_def kg_query_defs[];

/* The query named `name`, of REST `method` and `path`, of MCP tool `tool`,
 * or NULL. Borrowed static data. */
const struct kg_query_def *kg_query_def_find(const char *name);
const struct kg_query_def *kg_query_def_by_route(const char *method, const char *path);
const struct kg_query_def *kg_query_def_by_tool(const char *tool);
/* The first query whose CLI command is `command` (search has two). */
const struct kg_query_def *kg_query_def_by_command(const char *command);
/* The parameter of `def` named `name`, or set from the CLI by `cli`; NULL when none. */
const struct kg_param *kg_query_param_find(const struct kg_query_def *def, const char *name);
const struct kg_param *kg_query_param_by_cli(const struct kg_query_def *def, const char *cli);
/* Whether `value` is one of p->choices (true when it has none). */
bool kg_query_param_choice_ok(const struct kg_param *p, const char *value);

/* docs/API.md's reference of the queries, in Markdown, appended to `out`. */
void kg_query_registry_markdown(struct gi_buf *out);

#endif
