/*
 * cmd_mcp.c - `giulia mcp`: Giulia as an MCP server on stdin/stdout for an
 * AI coding assistant that launches it (docs/MCP.md). Static tools answer in
 * this process from the project's index (indexing it first when there is
 * none); runtime and profile tools ask the daemons when they run. Logs go to
 * stderr only: stdout carries nothing but JSON-RPC.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/client.h"
#include "base/alloc.h"
#include "base/error.h"
#include "base/log.h"
#include "cli/cli.h"
#include "mcp/mcp.h"

static const char mcp_usage[] =
    "[--project PATH] [--worker URL] [--monitor URL] [--allow-runtime --allow-node NODE...] "
    "[--list-tools [--format json|markdown]]";

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "giulia mcp: %s%s\nusage: giulia mcp %s\n", what, arg ? arg : "",
	        mcp_usage);
	return CLI_EXIT_USAGE;
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && *v ? v : dflt;
}

static int list_tools(struct mcp_server *s, const char *format)
{
	if (format && strcmp(format, "markdown") == 0) {
		char *md = mcp_tools_markdown(s);
		fputs(md, stdout);
		gi_free(md);
		return CLI_EXIT_OK;
	}
	json_t *tools = mcp_tools_json(s, true);
	char *text = json_dumps(tools, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(tools);
	if (text)
		puts(text);
	free(text);
	return CLI_EXIT_OK;
}

static int cmd_mcp(int argc, char **argv)
{
	struct mcp_config cfg = {
	    .static_in_process = true,
	    .worker_url = env_or("GIULIA_WORKER_URL", "http://127.0.0.1:4000"),
	    .monitor_url = env_or("GIULIA_MONITOR_URL", "http://127.0.0.1:4001"),
	    .token = env_or("GIULIA_TOKEN", NULL),
	    .transport = "stdio",
	};
	const char *nodes[MCP_NODES_MAX + 1] = {0};
	int nnodes = 0;
	bool list = false;
	const char *format = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--allow-runtime") == 0) {
			cfg.allow_runtime = true;
		} else if (strcmp(a, "--list-tools") == 0) {
			list = true;
		} else if (strcmp(a, "--project") == 0 || strcmp(a, "--worker") == 0 ||
		           strcmp(a, "--monitor") == 0 || strcmp(a, "--allow-node") == 0 ||
		           strcmp(a, "--format") == 0) {
			if (!next)
				return usage_error(a, " needs a value");
			if (strcmp(a, "--project") == 0)
				cfg.project = next;
			else if (strcmp(a, "--worker") == 0)
				cfg.worker_url = next;
			else if (strcmp(a, "--monitor") == 0)
				cfg.monitor_url = next;
			else if (strcmp(a, "--format") == 0)
				format = next;
			else if (nnodes == MCP_NODES_MAX)
				return usage_error("too many --allow-node", NULL);
			else
				nodes[nnodes++] = next;
			i++;
		} else {
			return usage_error("unknown argument ", a);
		}
	}
	if (cfg.allow_runtime && nnodes == 0)
		return usage_error("--allow-runtime needs at least one --allow-node NODE", NULL);
	if (nnodes > 0 && !cfg.allow_runtime)
		return usage_error("--allow-node needs --allow-runtime", NULL);
	if (format && strcmp(format, "json") != 0 && strcmp(format, "markdown") != 0)
		return usage_error("--format must be json or markdown", NULL);
	cfg.allow_nodes = nodes;

	signal(SIGPIPE, SIG_IGN);
	net_client_global_init();
	struct mcp_server *s = NULL;
	int rc = mcp_server_new(&cfg, &s);
	if (rc) {
		fprintf(stderr, "giulia mcp: %s\n", gi_strerror(rc));
		return CLI_EXIT_USAGE;
	}
	if (list) {
		rc = list_tools(s, format);
		mcp_server_free(s);
		return rc;
	}
	gi_log_info("mcp", "serving MCP on stdio (project %s%s)", cfg.project ? cfg.project : ".",
	            cfg.allow_runtime ? ", live-node tools allowed" : "");
	rc = mcp_stdio_run(s, STDIN_FILENO, STDOUT_FILENO);
	mcp_server_free(s);
	return rc ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

static const struct cli_option mcp_options[] = {
    {"--project PATH", "the project whose index the static tools read", "."},
    {"--worker URL", "the worker for observations and profiles",
     "$GIULIA_WORKER_URL, else http://127.0.0.1:4000"},
    {"--monitor URL", "the monitor for runtime reads",
     "$GIULIA_MONITOR_URL, else http://127.0.0.1:4001"},
    {"--allow-runtime", "offer the tools that act on a live node (needs --allow-node)", NULL},
    {"--allow-node NODE", "the node those tools may act on (repeatable)", NULL},
    {"--list-tools", "print the tool list and exit", NULL},
    {"--format FORMAT", "json or markdown, for --list-tools", "json"},
    {NULL, NULL, NULL},
};
static const struct cli_help mcp_help = {
    "Serves the Model Context Protocol on stdin/stdout (newline-delimited JSON-RPC) for an "
    "AI coding assistant that launches it as a subprocess. The cookie for live nodes comes "
    "from GIULIA_COOKIE (else the monitor's own); it is never a tool argument.",
    mcp_options, NULL, 0, "giulia mcp --project ~/src/shop"};

const struct cli_command cli_mcp_commands[] = {
    {"mcp", mcp_usage, "serve the Model Context Protocol on stdio for AI assistants", cmd_mcp,
     &mcp_help},
    {NULL, NULL, NULL, NULL, NULL},
};
