/*
 * query_list.h - every named static query, declared once (an X-macro list, in
 * the manner of libuv's UV_ERRNO_MAP). No include guard: a file that
 * includes it defines the three macros first and undefines them after.
 *
 *   KG_QUERY(name, method, path, tool, command, profile, title, result, description)
 *       one query: `name` is kg_query's name and its implementation q_NAME
 *       in graph/query.c; `method` GET or POST; `path` its REST route;
 *       `tool` its MCP tool; `command` its CLI command (NULL: only `giulia
 *       query NAME`); `profile` NONE, PROJECT or STORE (query_registry.h);
 *       `result` the keys every answer has, "key:type ..." (its MCP output
 *       schema; docs/SCHEMA.md describes every field).
 *   KG_PARAM(name, type, field, need, min, max, choices, dflt, cli, description)
 *       one of its parameters, in the order the tools list them: `type`
 *       STRING, INTEGER or BOOLEAN; `field` where kg_query reads it (MODULE,
 *       FUNCTION, FROM, TO, DEPTH, TOP, EXTERNAL, DIRECT, LABEL, or ARGS for
 *       p->args); `need` REQUIRED, OPTIONAL or REST_ONLY (an alias the route
 *       accepts); `cli` the CLI flag or positional that sets it, or NULL.
 *   KG_QUERY_END
 *       closes the query's parameters.
 *
 * Adding a static query: one KG_QUERY entry here (with its parameters) and
 * its implementation q_NAME in graph/query.c or the query_*.c of its kind
 * (query_int.h declares every q_NAME from here). The dispatch, the worker's
 * route, the MCP tool and docs/API.md's reference follow from the entry
 * (`make api-docs` and `bin/giulia mcp --list-tools --format markdown >
 * docs/MCP_TOOLS.md` regenerate the docs); a CLI command of its own, when it
 * deserves one, is a command in src/cli/ that names it in `command`.
 * tests/integration/query_registry.c fails when any of them disagrees.
 * The MCP tools add `project` to every query's parameters; the routes read
 * it as `path`.
 */

/* Read alone (by a checker such as cppcheck), the list expands to nothing. */
#ifndef KG_QUERY
#define KG_QUERY(...)
#define KG_PARAM(...)
#define KG_QUERY_END
#define KG_QUERY_LIST_ALONE
#endif

/* ---- parameters shared by several queries -------------------------------- */
#ifndef KG_QUERY_LIST_SHARED
#define KG_QUERY_LIST_SHARED
#define KG_P_MODULE_REQ(what, cli)                                                                 \
	KG_PARAM("module", STRING, MODULE, REQUIRED, 0, 0, NULL, NULL, cli,                        \
	         "Module name as written in source (`MyApp.Repo`; Erlang modules as `:ets`) " what \
	         ". index_modules lists them.")
#define KG_P_MODULE_OPT(what, cli)                                          \
	KG_PARAM("module", STRING, MODULE, OPTIONAL, 0, 0, NULL, NULL, cli, \
	         "Only this module (`MyApp.Repo`)" what "; omit for the whole project.")
#define KG_P_TOP(dflt, cli)                                                                      \
	KG_PARAM("top", INTEGER, TOP, OPTIONAL, 1, 100000, NULL, dflt, cli,                      \
	         "How many entries to return, highest first (default: the query's own, usually " \
	         "20).")
#define KG_P_DEPTH(dflt, what)                                                                     \
	KG_PARAM("depth", INTEGER, DEPTH, OPTIONAL, 1, 1000, NULL, dflt, "--depth",                \
	         "How many hops of " what " to follow (default " dflt "); 1 is direct neighbours " \
	         "only.")
#define KG_P_EXTERNAL                                                                           \
	KG_PARAM(                                                                               \
	    "include_external", BOOLEAN, EXTERNAL, OPTIONAL, 0, 0, NULL, "false", "--external", \
	    "Include modules outside the project (Elixir, OTP, dependencies). Default false.")
#define KG_P_DIRECT                                                                              \
	KG_PARAM(                                                                                \
	    "direct", BOOLEAN, DIRECT, OPTIONAL, 0, 0, NULL, "false", "--direct",                \
	    "Direct references only: leave out the dispatch edges (impl, callback, value, mfa, " \
	    "apply) included by default.")
#define KG_P_FUNCTION(need, what)                                                       \
	KG_PARAM("function", STRING, FUNCTION, need, 0, 0, NULL, NULL, "MOD.fun/arity", \
	         "A function of the module as `name/arity` (e.g. `save/1`)" what ".")
#define KG_P_LIMIT(max, dflt, what)                                               \
	KG_PARAM("limit", INTEGER, ARGS, OPTIONAL, 1, max, NULL, dflt, "--limit", \
	         "At most this many " what ".")
#define KG_P_CHECK(example)                                                    \
	KG_PARAM("check", STRING, ARGS, OPTIONAL, 0, 0, NULL, NULL, "--check", \
	         "Only the findings of this check id (docs/CHECKS.md), e.g. `" example "`.")
#define KG_P_TESTS(what, cli)                                                \
	KG_PARAM("tests", BOOLEAN, ARGS, OPTIONAL, 0, 0, NULL, "false", cli, \
	         what " (default false).")
#define KG_P_BOUNDARIES                                                                       \
	KG_PARAM("boundaries", STRING, ARGS, OPTIONAL, 0, 0, NULL,                            \
	         "the project's .giulia-boundaries.json", "--boundaries",                     \
	         "A boundaries document as JSON text (docs/ASSIST.md: layers with module "    \
	         "patterns and may_depend_on, forbidden rules, forbid_cycles). Default: the " \
	         "project's .giulia-boundaries.json.")
#endif

/* ---- the index ----------------------------------------------------------- */

KG_QUERY(status, GET, "/api/index/status", "index_status", NULL, NONE, "Index status",
         "files:integer modules:integer functions:integer edges:integer indexed:boolean",
         "Whether the project is indexed, when, and how big the index is (files, modules, "
         "functions, edges, parse errors). Call first when other tools say the project is not "
         "indexed.")
KG_QUERY_END

KG_QUERY(summary, GET, "/api/index/summary", "index_summary", NULL, NONE, "Project summary",
         "modules:integer functions:integer",
         "One-glance overview of the project: modules, functions, edges, complexity, cycles, "
         "layers, hubs. Start here to orient yourself in an unfamiliar codebase.")
KG_QUERY_END

KG_QUERY(modules, GET, "/api/index/modules", "index_modules", "modules", NONE, "List modules",
         "count:integer modules:array",
         "Every module of the project with its file, line range, kind, function counts "
         "(public/private) and complexity. Use to find a module's exact name.")
KG_P_EXTERNAL
KG_QUERY_END

KG_QUERY(functions, GET, "/api/index/functions", "index_functions", "functions", NONE,
         "List a module's functions", "module:string count:integer functions:array",
         "The functions of one module with visibility, kind, line and complexity (cyclomatic, "
         "cognitive, nesting). Use before editing a module.")
KG_P_MODULE_REQ("whose functions to list", "MODULE")
KG_QUERY_END

KG_QUERY(module_details, GET, "/api/index/module_details", "index_module_details", NULL, NONE,
         "Module details",
         "name:string file:string functions:array dependents:array dependencies:array",
         "Everything known about one module: file and lines, functions, complexity, coupling "
         "(Ca/Ce, instability), centrality, hub status, heat zone, change risk, behaviours, "
         "dependents and dependencies.")
KG_P_MODULE_REQ("to describe", NULL)
KG_P_DIRECT
KG_QUERY_END

KG_QUERY(complexity, GET, "/api/index/complexity", "index_complexity", "complexity", NONE,
         "Most complex functions", "functions:array",
         "The most complex functions (cyclomatic, cognitive, nesting), of the project or of one "
         "module. Use to pick refactoring targets.")
KG_P_MODULE_OPT("", "[MODULE]")
KG_P_TOP("20", "--top")
KG_QUERY_END

KG_QUERY(xref, GET, "/api/index/xref", "index_xref", "xref", NONE, "File dependencies (xref)",
         "files:array",
         "Dependencies between the project's files labelled as `mix xref graph` labels them: "
         "compile (macros, use, @before_compile, module attributes evaluated at compile time), "
         "export (structs, import and require) and runtime (calls). Use to see what a change "
         "makes recompile.")
KG_PARAM("label", STRING, LABEL, OPTIONAL, 0, 0, "compile|export|runtime|compile-connected",
         "every dependency", "--label",
         "Only the dependencies of that kind, as `mix xref graph --label`; "
         "`compile-connected` lists the compile dependencies on files that have dependencies "
         "of their own.")
KG_QUERY_END

/* ---- the knowledge graph -------------------------------------------------- */

KG_QUERY(stats, GET, "/api/knowledge/stats", "knowledge_stats", NULL, NONE, "Graph statistics",
         "vertices:integer edges:integer",
         "Size and shape of the dependency graph: vertices, edges by kind (call, alias, use, "
         "import, struct, behaviour), cycles, layers, density.")
KG_QUERY_END

KG_QUERY(dependents, GET, "/api/knowledge/dependents", "knowledge_dependents", "dependents", NONE,
         "Dependents of a module", "module:string count:integer dependents:array",
         "Modules that depend on MODULE (call, alias, import, use, struct, behaviour), with the "
         "kinds of each dependency. Use before changing a module's interface.")
KG_P_MODULE_REQ("whose dependents to list", "MODULE")
KG_P_DIRECT
KG_QUERY_END

KG_QUERY(dependencies, GET, "/api/knowledge/dependencies", "knowledge_dependencies", "dependencies",
         NONE, "Dependencies of a module", "module:string count:integer dependencies:array",
         "Modules MODULE depends on, with the kinds of each dependency.")
KG_P_MODULE_REQ("whose dependencies to list", "MODULE")
KG_P_EXTERNAL
KG_P_DIRECT
KG_QUERY_END

KG_QUERY(centrality, GET, "/api/knowledge/centrality", "knowledge_centrality", NULL, NONE,
         "Central modules", "count:integer modules:array",
         "Modules ranked by PageRank centrality in the dependency graph: the ones the system "
         "revolves around.")
KG_P_TOP("20", NULL)
KG_QUERY_END

KG_QUERY(impact, GET, "/api/knowledge/impact", "knowledge_impact", "impact", NONE,
         "Impact of a change", "module:string depth:integer",
         "Blast radius of changing a module (transitive dependents and dependencies with their "
         "distance, risk) or, with `function`, of changing one function (transitive callers and "
         "callees). Use before a change to know what to re-test.")
KG_P_MODULE_REQ("whose blast radius to measure", "MODULE")
KG_P_FUNCTION(OPTIONAL, ": measure that function's callers and callees instead of the module's "
                        "dependents")
KG_P_DEPTH("2", "dependents/callers")
KG_P_EXTERNAL
KG_P_DIRECT
KG_QUERY_END

KG_QUERY(cycles, GET, "/api/knowledge/cycles", "knowledge_cycles", "cycles", NONE,
         "Dependency cycles", "count:integer cycles:array",
         "Dependency cycles between modules (strongly connected components).")
KG_QUERY_END

KG_QUERY(hubs, GET, "/api/knowledge/hubs", "knowledge_hubs", "hubs", NONE, "Hub modules",
         "count:integer hubs:array threshold:integer",
         "Modules many others depend on (in-degree at or over the hub threshold), with in/out "
         "degree, centrality and instability.")
KG_P_TOP("all with in-degree >= 3", "--top")
KG_QUERY_END

KG_QUERY(god_modules, GET, "/api/knowledge/god_modules", "knowledge_god_modules", NULL, NONE,
         "God modules", "count:integer modules:array",
         "Modules that do too much: ranked by functions + 2*complexity + 3*in-degree.")
KG_P_TOP("20", NULL)
KG_QUERY_END

KG_QUERY(fan_in_out, GET, "/api/knowledge/fan_in_out", "knowledge_fan_in_out", NULL, NONE,
         "Fan-in and fan-out", "count:integer modules:array",
         "Modules ranked by fan-in and fan-out with their instability.")
KG_P_TOP("20", NULL)
KG_QUERY_END

KG_QUERY(coupling, GET, "/api/knowledge/coupling", "knowledge_coupling", "coupling", NONE,
         "Coupled module pairs", "pairs:array",
         "Pairs of modules ranked by the calls between them (and distinct functions called), "
         "for the project or one module.")
KG_P_MODULE_OPT("", "[MODULE]")
KG_P_TOP("20", "--top")
KG_QUERY_END

KG_QUERY(dead_code, GET, "/api/knowledge/dead_code", "knowledge_dead_code", "dead-code", NONE,
         "Dead code", "count:integer by_reason:object functions:array public_api:array",
         "Public functions nobody in the project calls: unreferenced (nothing reaches them), "
         "test_only, callback, or dynamic (a call on a module in a variable has their name and "
         "arity: perhaps live). A library's public API that nobody here calls is listed apart "
         "(public_api), not dead. Check dynamic ones and entry points before deleting.")
KG_P_DIRECT
KG_QUERY_END

KG_QUERY(heatmap, GET, "/api/knowledge/heatmap", "knowledge_heatmap", NULL, NONE, "Heat map",
         "count:integer modules:array summary:object",
         "Modules scored 0-100 for how risky they are to touch (in-degree, complexity, tests, "
         "coupling) in red/yellow/green zones.")
KG_P_TOP("20", NULL)
KG_QUERY_END

KG_QUERY(change_risk, GET, "/api/knowledge/change_risk", "knowledge_change_risk", NULL, NONE,
         "Change risk", "count:integer modules:array",
         "Modules ranked by change risk (complexity, fan-in/out, coupling, API size). Use to plan "
         "reviews and tests.")
KG_P_TOP("20", NULL)
KG_QUERY_END

KG_QUERY(path, GET, "/api/knowledge/path", "knowledge_path", "path", NONE, "Dependency path",
         "from:string to:string found:boolean",
         "The shortest dependency path from one module to another, or found=false.")
KG_PARAM("from", STRING, FROM, REQUIRED, 0, 0, NULL, NULL, "FROM",
         "Module the path starts at (`MyApp.Web`).")
KG_PARAM("to", STRING, TO, REQUIRED, 0, 0, NULL, NULL, "TO",
         "Module the path ends at (`MyApp.Repo`).")
KG_P_EXTERNAL
KG_P_DIRECT
KG_QUERY_END

KG_QUERY(topology, GET, "/api/knowledge/topology", "knowledge_topology", NULL, NONE, "Layers",
         "layers:array",
         "The modules in dependency layers (layer 0 depends on nothing of the project) and the "
         "cycles that prevent layering.")
KG_QUERY_END

KG_QUERY(unprotected_hubs, GET, "/api/knowledge/unprotected_hubs", "knowledge_unprotected_hubs",
         NULL, NONE, "Unprotected hubs", "count:integer modules:array",
         "Hub modules with few type specs: widely used and weakly specified.")
KG_QUERY_END

KG_QUERY(api_surface, GET, "/api/knowledge/api_surface", "knowledge_api_surface", NULL, NONE,
         "API surface", "count:integer modules:array",
         "Each module's public API: public vs private functions, documented and specced.")
KG_QUERY_END

KG_QUERY(function_details, GET, "/api/knowledge/function_details", "knowledge_function_details",
         NULL, NONE, "Function details", "module:string name:string arity:integer callers:array",
         "One function: complexity, line, callers and callees.")
KG_P_MODULE_REQ("the function belongs to", NULL)
KG_P_FUNCTION(REQUIRED, "")
KG_P_DIRECT
KG_QUERY_END

/* ---- assist (docs/ASSIST.md) ---------------------------------------------- */

KG_QUERY(preflight, GET, "/api/knowledge/preflight", "knowledge_preflight", "preflight", PROJECT,
         "Preflight before an edit",
         "module:string role:object tests:array risk_factors:array risk:string",
         "Call before editing a module or function: its role (behaviours, uses), public API, "
         "dependents with edge kinds, blast radius (dependents or callers up to `depth`, default "
         "3), the test modules that reach it, heat/zone/change risk, and the risk factors (hub, "
         "red zone, cycle, untested, complexity, no callers) with their numbers.")
KG_P_MODULE_REQ("to edit (or whose function to edit)", "MODULE|MOD.fun/arity")
KG_P_FUNCTION(OPTIONAL, ": the edit is to that function")
KG_P_DEPTH("3", "dependents/callers")
KG_QUERY_END

KG_QUERY(briefing, GET, "/api/knowledge/briefing", "knowledge_briefing", "briefing", PROJECT,
         "Project briefing",
         "size:object layers:object hubs:array cycles:object riskiest:array conventions:object "
         "profile:object",
         "Call first on entering a project: its size, layers, hubs, cycles, riskiest modules, the "
         "conventions in use (behaviours, protocols, OTP processes, Ecto schemas, structs) and, "
         "when the node was observed, the latest profile's top findings and hot modules.")
KG_P_TOP("5", "--top")
KG_QUERY_END

KG_QUERY(impact_check, GET, "/api/knowledge/impact_check", "knowledge_impact_check", "impact-check",
         NONE, "Impact of a rename or removal",
         "action:string module:string sites:array summary:object verdict:string notes:array",
         "Before renaming, removing or changing the arity of a function or module: every call "
         "site to update with file and line (calls, captures, literal MFAs and applies, aliases, "
         "imports), the @spec, the behaviour callback or protocol it implements or defines and "
         "the implementations that must follow, defdelegates pointing at it, and name clashes "
         "(verdict local, breaking or clash).")
KG_P_MODULE_REQ("to rename or remove (or whose function to change)", "MODULE|MOD.fun/arity")
KG_P_FUNCTION(OPTIONAL, ": the change is to that function")
KG_PARAM("action", STRING, ARGS, REQUIRED, 0, 0, "rename|remove|arity", NULL, "--remove",
         "`rename` (with new_name), `remove`, or `arity` (a function, with new_arity).")
KG_PARAM("new_name", STRING, ARGS, OPTIONAL, 0, 0, NULL, NULL, "--rename",
         "The new name of a rename.")
KG_PARAM("new_arity", INTEGER, ARGS, OPTIONAL, 0, 255, NULL, NULL, "--arity",
         "The new arity of an arity change.")
KG_QUERY_END

KG_QUERY(plan_validate, POST, "/api/plan/validate", "knowledge_plan_validate", "plan", NONE,
         "Validate a change plan",
         "ok:boolean verdict:string violations:array touched:array blast_radius:object",
         "Checks a change plan (modules to add or modify, dependencies to introduce, functions to "
         "move) before it is carried out: the dependency cycles it would close, layer violations "
         "(computed layers and the boundaries file), the hubs and red zones it touches, and its "
         "combined blast radius with the test modules to run.")
KG_PARAM("plan", STRING, ARGS, REQUIRED, 0, 0, NULL, NULL, "FILE|-",
         "The change plan as JSON text (docs/ASSIST.md): {\"add_modules\": [{\"name\", "
         "\"depends_on\": [..]}], \"modify_modules\": [..], \"add_dependencies\": [{\"from\", "
         "\"to\"}], \"move_functions\": [{\"function\": \"Mod.fun/arity\", \"to\"}]}.")
KG_P_BOUNDARIES
KG_P_DEPTH("3", "dependents of the blast radius")
KG_QUERY_END

KG_QUERY(check, POST, "/api/check", "knowledge_check", "check", NONE, "Check the boundaries",
         "ok:boolean violation_count:integer violations:array",
         "Checks the project's current dependencies against its boundaries file (layers and what "
         "each may depend on, forbidden dependencies, optionally no cycles): each violation with "
         "the file and line that makes it. ok is false when there is one.")
KG_P_BOUNDARIES
KG_QUERY_END

/* ---- search (docs/SEARCH.md) ---------------------------------------------- */

KG_QUERY(search_text, GET, "/api/search/text", "search_text", "search", NONE,
         "Search the source text", "total:integer count:integer hits:array",
         "grep over the project's indexed files: a literal or a regular expression, with case, "
         "file and module filters and context lines; each hit names its file, line, column, "
         "module and function. Capped and paged (total, next_offset). Use to find every place a "
         "string or a pattern appears.")
KG_PARAM("pattern", STRING, ARGS, REQUIRED, 0, 0, NULL, NULL, "PATTERN",
         "What to look for: a literal string, or a POSIX extended regular expression with "
         "`regex` true (at most 1024 bytes; back-references refused).")
KG_PARAM("regex", BOOLEAN, ARGS, OPTIONAL, 0, 0, NULL, "false", "--regex",
         "Treat `pattern` as a regular expression.")
KG_PARAM("ignore_case", BOOLEAN, ARGS, OPTIONAL, 0, 0, NULL, "false", "--ignore-case",
         "Match regardless of case.")
KG_PARAM("file", STRING, ARGS, OPTIONAL, 0, 0, NULL, NULL, "--file",
         "Only files whose path (relative to the project) matches this glob (`lib/shop/*.ex`) "
         "or, without * ? [, contains it.")
KG_P_MODULE_OPT(" and the modules nested in it", "--module")
KG_PARAM("context", INTEGER, ARGS, OPTIONAL, 0, 20, NULL, "0", "--context",
         "Lines of context before and after each hit (default 0).")
KG_P_LIMIT(1000, "100", "hits (default 100)")
KG_PARAM("offset", INTEGER, ARGS, OPTIONAL, 0, 100000, NULL, "0", "--offset",
         "Skip this many hits (the answer's next_offset pages on).")
KG_QUERY_END

KG_QUERY(search_code, GET, "/api/search/code", "search_code", "search", NONE,
         "Search modules and functions by words", "total:integer count:integer results:array",
         "Ranked search (BM25F, docs/SEARCH.md) over module and function names split into words, "
         "@moduledoc/@doc text, @spec text, struct fields and called names. Use to find where "
         "something is done when you know what, not what it is called (`parse a date`).")
KG_PARAM("query", STRING, ARGS, REQUIRED, 0, 0, NULL, NULL, "WORDS...",
         "Words or identifiers to look for (`parse date`, `Repo.insert`), at most 1024 bytes.")
KG_PARAM("q", STRING, ARGS, REST_ONLY, 0, 0, NULL, NULL, NULL, "Another name of `query`.")
KG_PARAM("mode", STRING, ARGS, OPTIONAL, 0, 0, "ranked|hybrid", "ranked", "--mode",
         "`ranked` (default: BM25F over the words as given) or `hybrid` (each word also brings "
         "its nearest words, learned from the installed documentation: finds `split` for "
         "`divide`).")
KG_PARAM("kind", STRING, ARGS, OPTIONAL, 0, 0, "module|function", "both", "--kind",
         "Only modules or only functions (default both).")
KG_P_MODULE_OPT(" and the modules nested in it", "--module")
KG_P_TESTS("Include test modules", "--tests")
KG_P_LIMIT(1000, "20", "results (default 20)")
KG_PARAM("offset", INTEGER, ARGS, OPTIONAL, 0, 1000000, NULL, "0", "--offset",
         "Skip this many results (the answer's next_offset pages on).")
KG_QUERY_END

/* ---- review (docs/REVIEW.md) ---------------------------------------------- */

KG_QUERY(review, GET, "/api/review", "review_change", "review", STORE, "Review a change",
         "verdict:string at_risk:array tests_to_run:array",
         "What the working tree's change against a git revision puts at risk: the changed "
         "functions and modules (git diff mapped onto the index's line ranges), each with its "
         "reach, the tests that reach it, complexity and live weight from the latest profile, "
         "ranked by a risk score; removed modules still referenced; the tests to run "
         "(docs/REVIEW.md). Call after editing, before committing.")
KG_PARAM("base", STRING, ARGS, REQUIRED, 0, 0, NULL, NULL, "--base",
         "The git revision the working tree is compared with (`main`, `HEAD~1`, a commit).")
KG_PARAM("threshold", INTEGER, ARGS, OPTIONAL, 0, 100, NULL, "60", "--threshold",
         "Risk score (0-100) from which a changed function counts as risky (default 60).")
KG_PARAM("depth", INTEGER, DEPTH, OPTIONAL, 1, 100, NULL, "3", "--depth",
         "Steps of callers and dependents followed (default 3).")
KG_QUERY_END

/* ---- checks (docs/CHECKS.md) ---------------------------------------------- */

KG_QUERY(contracts, GET, "/api/checks/contracts", "knowledge_contracts", "contracts", NONE,
         "Behaviour and spec contracts", "total:integer counts:object findings:array",
         "Modules missing a required callback of a behaviour they declare (from the project or "
         "installed OTP/Elixir object code), @impl on a function that is no callback, @impl "
         "without a behaviour, and @specs without a function; each finding with check id, "
         "severity, file and line (docs/CHECKS.md).")
KG_P_MODULE_OPT(" and the modules nested in it", "--module")
KG_P_CHECK("missing_callback")
KG_P_LIMIT(100000, "1000", "findings (default 1000; the counts cover all)")
KG_QUERY_END

KG_QUERY(conventions, GET, "/api/checks/conventions", "knowledge_conventions", "conventions", NONE,
         "Convention checks", "total:integer counts:object findings:array",
         "Missing @moduledoc, public functions without @doc in documented modules, apply/3 with "
         "literals, String.to_atom on non-literals (atom table exhaustion), deep nesting and high "
         "complexity (thresholds overridable); each finding with check id, severity, file and "
         "line.")
KG_P_MODULE_OPT(" and the modules nested in it", "--module")
KG_P_CHECK("atom_from_input")
KG_PARAM("max_nesting", INTEGER, ARGS, OPTIONAL, 0, 1000, NULL, "4", "--max-nesting",
         "deep_nesting reports functions nesting control structures deeper than this (default "
         "4).")
KG_PARAM("max_complexity", INTEGER, ARGS, OPTIONAL, 0, 100000, NULL, "9", "--max-complexity",
         "high_complexity reports cyclomatic complexity above this (default 9).")
KG_P_TESTS("Check test modules too", "--tests")
KG_P_LIMIT(100000, "1000", "findings (default 1000; the counts cover all)")
KG_QUERY_END

KG_QUERY(structs, GET, "/api/checks/structs", "knowledge_structs", "structs", NONE,
         "Struct lifecycle", "total:integer structs:array",
         "For each struct: where it is built (%S{}, struct/2), updated (%S{s | ...}) and matched "
         "in patterns, with module, function, file and line. Use before changing a struct's "
         "fields.")
KG_PARAM("module", STRING, MODULE, OPTIONAL, 0, 0, NULL, NULL, "STRUCT",
         "Only this struct (`MyApp.Order`); omit for every struct of the project.")
KG_P_EXTERNAL
KG_QUERY_END

KG_QUERY(duplicates, GET, "/api/checks/duplicates", "knowledge_duplicates", "duplicates", NONE,
         "Duplicate code", "total:integer groups:array",
         "Structural clones of function clause bodies, type-1 (identical) and type-2 (identical "
         "once variables and literals are abstracted), grouped and ranked by size times copies.")
KG_PARAM("min_size", INTEGER, ARGS, OPTIONAL, 1, 1000000, NULL, "25", "--min-size",
         "Smallest clause body compared, in syntax nodes (default 25).")
KG_P_MODULE_OPT(": only groups with a copy in it or a module nested in it", "--module")
KG_P_TESTS("Compare test modules too", "--tests")
KG_P_LIMIT(100000, "100", "groups (default 100)")
KG_QUERY_END

#ifdef KG_QUERY_LIST_ALONE
#undef KG_QUERY
#undef KG_PARAM
#undef KG_QUERY_END
#undef KG_QUERY_LIST_ALONE
#endif
