// client.mjs - drives Giulia's MCP server with the official TypeScript SDK
// client (@modelcontextprotocol/sdk, installed by scripts/deps.sh under
// build/mcp-client), for tests/integration/mcp.c and bench/bench_mcp.sh.
//
//   node client.mjs CONFIG_JSON
//
// CONFIG: {sdk, mode, transport: "stdio"|"http", giulia, project, url, env,
//          args, node, allowed, calls, tool}
// Modes:  static   list tools, call every static tool, compare with the CLI
//         runtime  live-node tools against `node` (allowed or not)
//         http     raw HTTP checks of /mcp (Origin, version header, methods)
//         bench    `calls` calls of `tool`, prints latency percentiles
// Prints "ok NAME" per check and "FAIL NAME: why" on the first failure
// (exit status 1).
import { execFileSync, spawnSync } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import path from "node:path";

const cfg = JSON.parse(process.argv[2]);
const sdk = (p) => import(path.join(cfg.sdk, "node_modules/@modelcontextprotocol/sdk/dist/esm", p));
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const types = await sdk("types.js");

function fail(name, why) {
  console.log(`FAIL ${name}: ${why}`);
  process.exit(1);
}
function ok(name) {
  console.log(`ok ${name}`);
}
function check(name, cond, why) {
  if (!cond) fail(name, why);
  ok(name);
}

async function connect(extraArgs = []) {
  const client = new Client({ name: "giulia-test", version: "1.0.0" });
  let transport;
  if (cfg.transport === "stdio") {
    transport = new StdioClientTransport({
      command: cfg.giulia,
      args: ["mcp", "--project", cfg.project, ...(cfg.args || []), ...extraArgs],
      env: { ...process.env, ...(cfg.env || {}) },
      stderr: "ignore",
    });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(cfg.url + "/mcp"));
  }
  await client.connect(transport);
  return { client, transport };
}

// The CLI's --json for the same query, through the generic `giulia query`.
function cli(query, args) {
  const argv = ["query", query];
  if (args.from) argv.push(args.from, args.to);
  else if (args.module && args.function) argv.push(`${args.module}.${args.function}`);
  else if (args.module) argv.push(args.module);
  if (args.depth) argv.push("--depth", String(args.depth));
  if (args.top) argv.push("--top", String(args.top));
  if (args.include_external) argv.push("--external");
  if (args.direct) argv.push("--direct");
  if (args.label) argv.push("--label", args.label);
  argv.push("--project", cfg.project, "--json");
  return JSON.parse(execFileSync(cfg.giulia, argv, { encoding: "utf8" }));
}

// Arguments for each static tool on the fixture project (module names come
// from the project itself, so nothing here is tuned to one fixture).
function staticCalls(modules, someFunction) {
  const [a, b] = modules;
  return [
    ["index_status", "status", {}],
    ["index_summary", "summary", {}],
    ["index_modules", "modules", {}],
    ["index_functions", "functions", { module: a }],
    ["index_module_details", "module_details", { module: a }],
    ["index_complexity", "complexity", { top: 5 }],
    ["index_xref", "xref", {}],
    ["index_xref", "xref", { label: "compile-connected" }],
    ["knowledge_stats", "stats", {}],
    ["knowledge_dependents", "dependents", { module: a }],
    ["knowledge_dependents", "dependents", { module: a, direct: true }],
    ["knowledge_dependencies", "dependencies", { module: a }],
    ["knowledge_dependencies", "dependencies", { module: a, include_external: true }],
    ["knowledge_centrality", "centrality", { top: 3 }],
    ["knowledge_impact", "impact", { module: a, depth: 2 }],
    ["knowledge_impact", "impact", { module: someFunction.module, function: someFunction.name }],
    ["knowledge_cycles", "cycles", {}],
    ["knowledge_hubs", "hubs", {}],
    ["knowledge_god_modules", "god_modules", {}],
    ["knowledge_fan_in_out", "fan_in_out", {}],
    ["knowledge_coupling", "coupling", {}],
    ["knowledge_dead_code", "dead_code", {}],
    ["knowledge_heatmap", "heatmap", {}],
    ["knowledge_change_risk", "change_risk", {}],
    ["knowledge_path", "path", { from: a, to: b }],
    ["knowledge_topology", "topology", {}],
    ["knowledge_unprotected_hubs", "unprotected_hubs", {}],
    ["knowledge_api_surface", "api_surface", {}],
    ["knowledge_function_details", "function_details",
     { module: someFunction.module, function: someFunction.name }],
    ["knowledge_preflight", "preflight", { module: a }],
    ["knowledge_preflight", "preflight", { module: someFunction.module, function: someFunction.name }],
    ["knowledge_contracts", "contracts", {}],
    ["knowledge_conventions", "conventions", {}],
    ["knowledge_structs", "structs", {}],
    ["knowledge_structs", "structs", { include_external: true }],
    ["knowledge_duplicates", "duplicates", {}],
  ];
}

async function modeStatic() {
  const { client } = await connect();
  check("negotiated", client.getServerVersion()?.name === "giulia", "no serverInfo");
  const { tools } = await client.listTools();
  check("tools listed", tools.length >= 30, `only ${tools.length} tools`);
  for (const t of tools) {
    if (t.inputSchema?.type !== "object" || typeof t.description !== "string" ||
        t.description.length < 20 || t.outputSchema?.type !== "object")
      fail("schemas", `${t.name} lacks a schema or a description`);
    for (const [k, p] of Object.entries(t.inputSchema.properties || {}))
      if (!p.type || !p.description) fail("schemas", `${t.name}.${k} has no type/description`);
  }
  ok("every tool has input and output schemas");
  check("no live tools without opt-in", !tools.some((t) => t.name === "runtime_pulse"),
        "runtime_pulse offered without --allow-runtime");

  const names = cli("modules", {}).modules.filter((m) => !m.test).map((m) => m.name);
  // A function with callers, so that function tools have something to show.
  let someFunction = null;
  for (const m of names) {
    const fs = cli("functions", { module: m }).functions;
    if (fs.length) { someFunction = { module: m, name: `${fs[0].name}/${fs[0].arity}` }; break; }
  }
  const mods = [...names].sort((x, y) =>
    cli("dependents", { module: y }).count - cli("dependents", { module: x }).count);
  const covered = new Set();
  for (const [tool, query, args] of staticCalls(mods, someFunction)) {
    const r = await client.callTool({ name: tool, arguments: args });
    if (r.isError) fail(tool, `isError: ${r.content?.[0]?.text}`);
    const want = cli(query, args);
    if (!isDeepStrictEqual(r.structuredContent, want))
      fail(tool, `differs from giulia query ${query} --json:\n${JSON.stringify(r.structuredContent)}\n${JSON.stringify(want)}`);
    if (!isDeepStrictEqual(JSON.parse(r.content[0].text), want))
      fail(tool, "text content is not the same JSON");
    covered.add(tool);
  }
  // The assist tools against their commands (`giulia check` and `plan
  // validate` exit 3 on violations: their JSON is compared all the same).
  const fname = `${someFunction.module}.${someFunction.name}`;
  const assistCalls = [
    ["knowledge_briefing", ["briefing", "--top", "3"], { top: 3 }],
    ["knowledge_impact_check", ["impact-check", fname, "--remove"],
     { module: someFunction.module, function: someFunction.name, action: "remove" }],
    ["knowledge_plan_validate", ["plan", "validate", "-"],
     { plan: JSON.stringify({ modify_modules: [mods[0]] }) }, JSON.stringify({ modify_modules: [mods[0]] })],
    ["knowledge_check", ["check", "--boundaries", "-"],
     { boundaries: JSON.stringify({ forbid_cycles: true }) }, JSON.stringify({ forbid_cycles: true })],
  ];
  for (const [tool, argv, args, input] of assistCalls) {
    const r = await client.callTool({ name: tool, arguments: args });
    if (r.isError) fail(tool, `isError: ${r.content?.[0]?.text}`);
    const run = spawnSync(cfg.giulia, [...argv, "--project", cfg.project, "--json"],
      { encoding: "utf8", input: input ?? "" });
    const want = JSON.parse(run.stdout);
    if (!isDeepStrictEqual(r.structuredContent, want))
      fail(tool, `differs from giulia ${argv.join(" ")} --json:\n${JSON.stringify(r.structuredContent)}\n${JSON.stringify(want)}`);
    covered.add(tool);
  }
  const badPlan = await client.callTool({ name: "knowledge_plan_validate", arguments: { plan: "{" } });
  check("a malformed plan is isError", badPlan.isError && /not JSON/.test(badPlan.content[0].text),
        JSON.stringify(badPlan.content));
  const staticTools = tools.filter((t) => /^(index|knowledge)_/.test(t.name) &&
    !["index_scan", "index_projects"].includes(t.name)).map((t) => t.name);
  // A query added to the registry (src/graph/query_list.h) since, that
  // needs no argument, is compared as it is: `giulia query --list` names
  // its query; one that needs arguments must be given them above.
  const queryOf = new Map(execFileSync(cfg.giulia, ["query", "--list"], { encoding: "utf8" })
    .trim().split("\n").map((line) => line.split(/\s+/)).map((f) => [f[3], f[0]]));
  for (const t of tools) {
    if (!staticTools.includes(t.name) || covered.has(t.name) || t.inputSchema.required?.length)
      continue;
    const r = await client.callTool({ name: t.name, arguments: {} });
    if (r.isError || !isDeepStrictEqual(r.structuredContent, cli(queryOf.get(t.name), {})))
      fail(t.name, `differs from giulia query ${queryOf.get(t.name)} --json`);
    covered.add(t.name);
  }
  for (const t of staticTools) if (!covered.has(t)) fail("coverage", `${t} not compared (give it arguments in staticCalls)`);
  ok(`${covered.size} static tools equal the CLI's --json`);

  // The search tools against `giulia search ... --json` (names from the project).
  const searchCalls = [
    ["search_code", ["code", mods[0]], { query: mods[0] }],
    ["search_code", ["code", mods[0], "--kind", "function", "--limit", "3"],
     { query: mods[0], kind: "function", limit: 3 }],
    ["search_text", ["text", "def ", "--limit", "5", "--offset", "1"],
     { pattern: "def ", limit: 5, offset: 1 }],
    ["search_text", ["text", "^ *DEF", "--regex", "--ignore-case", "--context", "1"],
     { pattern: "^ *DEF", regex: true, ignore_case: true, context: 1 }],
  ];
  for (const [tool, argv, args] of searchCalls) {
    const r = await client.callTool({ name: tool, arguments: args });
    if (r.isError) fail(tool, `isError: ${r.content?.[0]?.text}`);
    const want = JSON.parse(execFileSync(cfg.giulia,
      ["search", ...argv, "--project", cfg.project, "--json"], { encoding: "utf8" }));
    if (!isDeepStrictEqual(r.structuredContent, want))
      fail(tool, `differs from giulia search ${argv.join(" ")} --json`);
  }
  ok("search tools equal the CLI's --json");
  const badRe = await client.callTool({ name: "search_text", arguments: { pattern: "(x", regex: true } });
  check("a bad regex is isError", badRe.isError && /does not compile/.test(badRe.content[0].text),
        JSON.stringify(badRe.content));

  const bad = await client.callTool({ name: "knowledge_dependents", arguments: { module: "No.Such.Module" } });
  check("unknown module is isError", bad.isError && /index_modules/.test(bad.content[0].text),
        JSON.stringify(bad));
  const wrong = await client.callTool({ name: "knowledge_dependents", arguments: { module: 42 } });
  check("wrong type is isError", wrong.isError && /must be a string/.test(wrong.content[0].text),
        JSON.stringify(wrong));
  const missing = await client.callTool({ name: "index_functions", arguments: {} });
  check("missing argument is isError", missing.isError && /needs the argument 'module'/.test(missing.content[0].text),
        JSON.stringify(missing));
  const big = await client.callTool({ name: "knowledge_dependents", arguments: { module: "x".repeat(100000) } });
  check("huge string is isError", big.isError, JSON.stringify(big).slice(0, 300));
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
    fail("unknown tool", "no error");
  } catch (e) {
    check("unknown tool is -32602", e.code === -32602, String(e));
  }
  const refused = await client.callTool({ name: "runtime_pulse", arguments: { node: "a@127.0.0.1" } });
  check("live tool refused without opt-in", refused.isError && /--allow-runtime/.test(refused.content[0].text),
        JSON.stringify(refused));

  const { resourceTemplates } = await client.listResourceTemplates();
  check("resource templates", resourceTemplates.some((t) => t.uriTemplate === "giulia://module/{name}"),
        JSON.stringify(resourceTemplates));
  const { resources } = await client.listResources();
  check("resources listed", resources.some((r) => r.uri === "giulia://project/summary"), JSON.stringify(resources));
  const res = await client.readResource({ uri: `giulia://module/${mods[0]}` });
  check("module resource is module_details",
        isDeepStrictEqual(JSON.parse(res.contents[0].text), cli("module_details", { module: mods[0] })),
        res.contents[0].text.slice(0, 300));
  try {
    await client.readResource({ uri: "giulia://nothing/here" });
    fail("unknown resource", "no error");
  } catch (e) {
    check("unknown resource is -32002", e.code === -32002, String(e));
  }
  const { prompts } = await client.listPrompts();
  check("prompts", prompts.length >= 2, JSON.stringify(prompts));
  const p = await client.getPrompt({ name: "change_impact", arguments: { module: mods[0] } });
  check("prompt text", p.messages[0].content.text.includes(mods[0]), JSON.stringify(p));
  await client.ping();
  ok("ping");
  await client.close();
}

async function modeRuntime() {
  const { client } = await connect();
  const { tools } = await client.listTools();
  const has = (n) => tools.some((t) => t.name === n);
  if (!cfg.allowed) {
    check("no live tools", !has("runtime_pulse") && !has("runtime_trace"), "live tools offered");
    const r = await client.callTool({ name: "runtime_pulse", arguments: { node: cfg.node } });
    check("pulse refused", r.isError && /--allow-runtime/.test(r.content[0].text), JSON.stringify(r));
    await client.close();
    return;
  }
  check("live tools offered", has("runtime_pulse") && has("runtime_observe_start"), "missing");
  const pulse = await client.callTool({ name: "runtime_pulse", arguments: { node: cfg.node, window_ms: 200 } });
  check("pulse", !pulse.isError && pulse.structuredContent.node === cfg.node &&
        pulse.structuredContent.processes?.count > 0, JSON.stringify(pulse).slice(0, 500));
  // one process by its registered name (init exists on every node), then a
  // name that does not: a clear error, no atom made of it
  const proc = await client.callTool({ name: "runtime_process", arguments: { node: cfg.node, process: "init", window_ms: 100 } });
  check("process", !proc.isError && proc.structuredContent.registered_name === "init" &&
        /^<0\.\d+\.\d+>$/.test(proc.structuredContent.pid) && proc.structuredContent.messages === null,
        JSON.stringify(proc).slice(0, 500));
  const gone = await client.callTool({ name: "runtime_process", arguments: { node: cfg.node, process: "zz_no_such_name" } });
  check("process not found", gone.isError && /no process/.test(gone.content[0].text), JSON.stringify(gone).slice(0, 300));
  // allocators (read-only); binary leaks only with confirm: true (they force GCs)
  const alloc = await client.callTool({ name: "runtime_alloc", arguments: { node: cfg.node, limit: 3 } });
  check("alloc", !alloc.isError && alloc.structuredContent.types.some((t) => t.allocator === "binary_alloc") &&
        alloc.structuredContent.rows.length === 3, JSON.stringify(alloc).slice(0, 500));
  const unconfirmed = await client.callTool({ name: "runtime_binleak", arguments: { node: cfg.node, confirm: false } });
  check("binleak needs confirm", unconfirmed.isError && /confirm: true/.test(unconfirmed.content[0].text),
        JSON.stringify(unconfirmed).slice(0, 300));
  const leak = await client.callTool({ name: "runtime_binleak", arguments: { node: cfg.node, confirm: true, limit: 2 } });
  check("binleak", !leak.isError && Array.isArray(leak.structuredContent.processes) &&
        leak.structuredContent.collected > 0, JSON.stringify(leak).slice(0, 500));
  const other = await client.callTool({ name: "runtime_pulse", arguments: { node: "other@127.0.0.1" } });
  check("node off the allow-list refused", other.isError && /allow-list/.test(other.content[0].text),
        JSON.stringify(other));
  if (cfg.transport === "stdio") {
    const capped = await client.callTool({ name: "runtime_trace", arguments: { node: cfg.node, modules: [":lists"], duration_ms: 60000 } });
    check("trace cap enforced", capped.isError && /10000/.test(capped.content[0].text), JSON.stringify(capped));
    const trace = await client.callTool({ name: "runtime_trace", arguments: { node: cfg.node, modules: [":lists"], duration_ms: 200 } });
    check("trace", !trace.isError && Array.isArray(trace.structuredContent.calls), JSON.stringify(trace).slice(0, 500));
  } else {
    check("no trace in the worker", !has("runtime_trace"), "runtime_trace offered over HTTP");
    const t = await client.callTool({ name: "runtime_trace", arguments: { node: cfg.node, modules: [":lists"] } });
    check("trace refused in the worker", t.isError && /stdio/.test(t.content[0].text), JSON.stringify(t));
  }
  if (cfg.observe) {
    let changed = false;
    client.setNotificationHandler(types.ResourceListChangedNotificationSchema, () => { changed = true; });
    const start = await client.callTool({ name: "runtime_observe_start",
      arguments: { node: cfg.node, duration_ms: 60000, interval_ms: 1000 } });
    check("observe start", !start.isError && start.structuredContent.session_id, JSON.stringify(start));
    await new Promise((r) => setTimeout(r, 2500));
    const status = await client.callTool({ name: "runtime_observe_status", arguments: {} });
    check("observe status", !status.isError && status.structuredContent.observations.length > 0, JSON.stringify(status).slice(0, 300));
    const stop = await client.callTool({ name: "runtime_observe_stop", arguments: { node: cfg.node } });
    check("observe stop gives a profile", !stop.isError && stop.structuredContent.profile_id > 0,
          JSON.stringify(stop).slice(0, 500));
    const prof = await client.callTool({ name: "runtime_profile", arguments: { id: String(stop.structuredContent.profile_id), format: "text" } });
    check("profile as text", !prof.isError && prof.content[0].text.length > 100, JSON.stringify(prof).slice(0, 300));
    const res = await client.readResource({ uri: `giulia://profile/${stop.structuredContent.profile_id}` });
    check("profile resource", JSON.parse(res.contents[0].text).id === stop.structuredContent.profile_id, "wrong profile");
    const hist = await client.callTool({ name: "runtime_history", arguments: { node: cfg.node } });
    check("history", !hist.isError && hist.structuredContent.points.length > 0, JSON.stringify(hist).slice(0, 300));
    const cmp = await client.callTool({ name: "runtime_compare", arguments: { a: "latest", b: "latest" } });
    check("compare", !cmp.isError, JSON.stringify(cmp).slice(0, 300));
    for (let i = 0; i < 100 && !changed; i++) await new Promise((r) => setTimeout(r, 100));
    check(`resources list_changed after a profile (${cfg.transport})`, changed, "no notification");
  }
  await client.close();
}

async function post(body, headers) {
  const res = await fetch(cfg.url + "/mcp", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function modeHttp() {
  const init = { jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
  const foreign = await post(init, { origin: "http://evil.example.com" });
  check("foreign Origin is 403", foreign.status === 403, `status ${foreign.status}`);
  const local = await post(init, { origin: "http://localhost:3000" });
  check("loopback Origin accepted", local.status === 200, `status ${local.status}`);
  const sid = local.headers.get("mcp-session-id");
  check("session id issued", /^[0-9a-f]{32}$/.test(sid || ""), String(sid));
  const bad = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" },
                         { "mcp-session-id": sid, "mcp-protocol-version": "1999-01-01" });
  check("bad protocol version is 400", bad.status === 400, `status ${bad.status}`);
  const nosession = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, {});
  check("no session is 400", nosession.status === 400, `status ${nosession.status}`);
  const unknown = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": "0".repeat(32) });
  check("unknown session is 404", unknown.status === 404, `status ${unknown.status}`);
  const note = await post({ jsonrpc: "2.0", method: "notifications/initialized" },
                          { "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" });
  check("notification is 202", note.status === 202, `status ${note.status}`);
  const sse = await post({ jsonrpc: "2.0", id: 3, method: "ping" },
                         { "mcp-session-id": sid, accept: "text/event-stream" });
  check("SSE reply", sse.status === 200 && sse.headers.get("content-type").startsWith("text/event-stream") &&
        /^event: message\ndata: \{.*"id":3/.test(sse.text), sse.text);
  const malformed = await post("{not json", { "mcp-session-id": sid });
  check("malformed JSON is a parse error", JSON.parse(malformed.text).error?.code === -32700, malformed.text);
  const noaccept = await fetch(cfg.url + "/mcp", { headers: { accept: "application/json", "mcp-session-id": sid } });
  check("GET without the event-stream Accept is 406", noaccept.status === 406, `status ${noaccept.status}`);
  const get = await fetch(cfg.url + "/mcp", { headers: { accept: "text/event-stream", "mcp-session-id": sid } });
  check("GET opens the event stream", get.status === 200 &&
        get.headers.get("content-type").startsWith("text/event-stream"), `status ${get.status}`);
  const reader = get.body.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  check("the stream starts with a comment", first.startsWith(":"), first);
  const del = await fetch(cfg.url + "/mcp", { method: "DELETE", headers: { "mcp-session-id": sid } });
  check("DELETE ends the session", del.status === 200, `status ${del.status}`);
  for (;;) { const { done } = await reader.read(); if (done) break; }
  ok("the session's stream ended with it");
  const after = await post({ jsonrpc: "2.0", id: 4, method: "ping" }, { "mcp-session-id": sid });
  check("ended session is 404", after.status === 404, `status ${after.status}`);
}

async function modeBench() {
  const t0 = process.hrtime.bigint();
  const { client } = await connect();
  await client.callTool({ name: cfg.tool, arguments: cfg.arguments });
  const startup = Number(process.hrtime.bigint() - t0) / 1e6;
  const times = [];
  for (let i = 0; i < cfg.calls; i++) {
    const t = process.hrtime.bigint();
    const r = await client.callTool({ name: cfg.tool, arguments: cfg.arguments });
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (r.isError) fail("bench", r.content[0].text);
  }
  times.sort((x, y) => x - y);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  console.log(JSON.stringify({ tool: cfg.tool, transport: cfg.transport, calls: cfg.calls,
    p50_ms: q(0.5), p99_ms: q(0.99), first_answer_ms: startup }));
  await client.close();
}

const modes = { static: modeStatic, runtime: modeRuntime, http: modeHttp, bench: modeBench };
try {
  await modes[cfg.mode]();
} catch (e) {
  fail(cfg.mode, e?.stack || String(e));
}
process.exit(0);
