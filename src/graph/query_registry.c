/*
 * query_registry.c - the registry of static queries (query_registry.h) as
 * data, built from graph/query_list.h in two passes: each query's parameter
 * array, then the table that points at them; and docs/API.md's reference
 * written from the table.
 */
#include "graph/query_registry.h"

#include <string.h>

#define KG_NEED_REQUIRED  .required = true, .rest_only = false
#define KG_NEED_OPTIONAL  .required = false, .rest_only = false
#define KG_NEED_REST_ONLY .required = false, .rest_only = true

/* Pass 1: the parameter arrays, params_NAME. */
#define KG_QUERY(name, method, path, tool, command, profile, title, result, description) \
	static const struct kg_param params_##name[] = {
#define KG_PARAM(pname, ptype, pfield, need, pmin, pmax, pchoices, pdflt, pcli, pdescription) \
	{.name = pname,                                                                       \
	 .type = KG_PARAM_##ptype,                                                            \
	 .field = KG_FIELD_##pfield,                                                          \
	 KG_NEED_##need,                                                                      \
	 .min = pmin,                                                                         \
	 .max = pmax,                                                                         \
	 .choices = pchoices,                                                                 \
	 .dflt = pdflt,                                                                       \
	 .cli = pcli,                                                                         \
	 .description = pdescription},
#define KG_QUERY_END         \
	{                    \
		.name = NULL \
	}                    \
	}                    \
	;
#include "graph/query_list.h"
#undef KG_QUERY
#undef KG_PARAM
#undef KG_QUERY_END

/* Pass 2: the table. */
#define KG_QUERY(qname, qmethod, qpath, qtool, qcommand, qprofile, qtitle, qresult, qdescription) \
	{.name = #qname,                                                                          \
	 .method = #qmethod,                                                                      \
	 .path = qpath,                                                                           \
	 .tool = qtool,                                                                           \
	 .title = qtitle,                                                                         \
	 .command = qcommand,                                                                     \
	 .profile = KG_PROFILE_##qprofile,                                                        \
	 .result = qresult,                                                                       \
	 .description = qdescription,                                                             \
	 .params = params_##qname},
#define KG_PARAM(...)
#define KG_QUERY_END
const struct kg_query_def kg_query_defs[] = {
#include "graph/query_list.h"
    {.name = NULL},
};
#undef KG_QUERY
#undef KG_PARAM
#undef KG_QUERY_END

const struct kg_query_def *kg_query_def_find(const char *name)
{
	for (const struct kg_query_def *d = kg_query_defs; name && d->name; d++)
		if (strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

const struct kg_query_def *kg_query_def_by_route(const char *method, const char *path)
{
	for (const struct kg_query_def *d = kg_query_defs; method && path && d->name; d++)
		if (strcmp(d->method, method) == 0 && strcmp(d->path, path) == 0)
			return d;
	return NULL;
}

const struct kg_query_def *kg_query_def_by_tool(const char *tool)
{
	for (const struct kg_query_def *d = kg_query_defs; tool && d->name; d++)
		if (strcmp(d->tool, tool) == 0)
			return d;
	return NULL;
}

const struct kg_query_def *kg_query_def_by_command(const char *command)
{
	for (const struct kg_query_def *d = kg_query_defs; command && d->name; d++)
		if (d->command && strcmp(d->command, command) == 0)
			return d;
	return NULL;
}

const struct kg_param *kg_query_param_find(const struct kg_query_def *def, const char *name)
{
	for (const struct kg_param *p = def->params; name && p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

const struct kg_param *kg_query_param_by_cli(const struct kg_query_def *def, const char *cli)
{
	for (const struct kg_param *p = def->params; cli && p->name; p++)
		if (p->cli && strcmp(p->cli, cli) == 0)
			return p;
	return NULL;
}

bool kg_query_param_choice_ok(const struct kg_param *p, const char *value)
{
	if (!p->choices)
		return true;
	size_t n = strlen(value);
	for (const char *c = p->choices; *c;) {
		const char *bar = strchr(c, '|');
		size_t len = bar ? (size_t)(bar - c) : strlen(c);
		if (len == n && strncmp(c, value, n) == 0)
			return true;
		c += len + (bar ? 1 : 0);
	}
	return false;
}

/* ---- docs/API.md --------------------------------------------------------- */

static const char *type_name(enum kg_param_type t)
{
	return t == KG_PARAM_INTEGER ? "integer" : t == KG_PARAM_BOOLEAN ? "boolean" : "string";
}

/* A table cell: '|' escaped, as Markdown tables need. */
static void cell(struct gi_buf *out, const char *text)
{
	for (const char *c = text; c && *c; c++)
		if (*c == '|')
			gi_buf_puts(out, "\\|");
		else
			gi_buf_printf(out, "%c", *c);
}

static void param_row(struct gi_buf *out, const struct kg_param *p)
{
	gi_buf_printf(out, "| `%s` | %s | %s | ", p->name, type_name(p->type),
	              p->required ? "yes" : "no");
	if (p->type == KG_PARAM_INTEGER)
		gi_buf_printf(out, "%lld..%lld", p->min, p->max);
	else if (p->choices)
		cell(out, p->choices);
	gi_buf_puts(out, " | ");
	cell(out, p->dflt ? p->dflt : "");
	gi_buf_puts(out, " | ");
	if (p->cli) {
		gi_buf_puts(out, "`");
		cell(out, p->cli);
		gi_buf_puts(out, "`");
	}
	gi_buf_puts(out, " | ");
	cell(out, p->rest_only ? "(REST only) " : "");
	cell(out, p->description);
	gi_buf_puts(out, " |\n");
}

static void result_keys(struct gi_buf *out, const char *result)
{
	bool first = true;
	for (const char *c = result; *c;) {
		const char *end = strchr(c, ' ');
		size_t len = end ? (size_t)(end - c) : strlen(c);
		const char *colon = memchr(c, ':', len);
		if (colon)
			gi_buf_printf(out, "%s`%.*s` (%.*s)", first ? "" : ", ", (int)(colon - c),
			              c, (int)(len - (size_t)(colon - c) - 1), colon + 1);
		first = false;
		c += len + (end ? 1 : 0);
	}
}

void kg_query_registry_markdown(struct gi_buf *out)
{
	gi_buf_puts(out, "| query | route | MCP tool | CLI |\n|---|---|---|---|\n");
	for (const struct kg_query_def *d = kg_query_defs; d->name; d++)
		gi_buf_printf(out, "| [`%s`](#query-%s) | `%s %s` | `%s` | `giulia %s%s` |\n",
		              d->name, d->name, d->method, d->path, d->tool,
		              d->command ? d->command : "query ", d->command ? "" : d->name);
	for (const struct kg_query_def *d = kg_query_defs; d->name; d++) {
		gi_buf_printf(out, "\n#### %s %s\n\n<a id=\"query-%s\"></a>", d->method, d->path,
		              d->name);
		gi_buf_printf(out,
		              "**%s** (`kg_query(\"%s\")`; MCP `%s`; CLI `giulia %s%s`). %s\n\n",
		              d->title, d->name, d->tool, d->command ? d->command : "query ",
		              d->command ? "" : d->name, d->description);
		if (d->params->name) {
			gi_buf_puts(out, "| parameter | type | required | values | default | CLI | "
			                 "meaning |\n|---|---|---|---|---|---|---|\n");
			for (const struct kg_param *p = d->params; p->name; p++)
				param_row(out, p);
			gi_buf_puts(out, "\n");
		} else {
			gi_buf_puts(out, "No parameters besides the project.\n\n");
		}
		if (d->profile == KG_PROFILE_PROJECT)
			gi_buf_puts(out,
			            "Given the latest stored profile of the project, when there "
			            "is one.\n\n");
		else if (d->profile == KG_PROFILE_STORE)
			gi_buf_puts(out,
			            "Given the store's latest profile for the live weight, when "
			            "it is of this project.\n\n");
		gi_buf_puts(out, "Result: an object with at least ");
		result_keys(out, d->result);
		gi_buf_puts(out, ".\n");
	}
}
