/*
 * Giulia dashboard: live nodes, profiles and the graph explorer, in one
 * script with no library and no build step (docs/DASHBOARD.md).
 *
 * Invariants:
 *  - every text that comes from the API (module names, pids, findings) goes
 *    into the page through textContent or an attribute set by the DOM, never
 *    through HTML parsing, so that a hostile module name stays text;
 *  - every request goes to this origin: the worker's API, and the monitor's
 *    through the worker's /monitor/ pass-through;
 *  - the token (token mode) lives in sessionStorage and travels only in the
 *    Authorization header; the live stream is read with fetch() for that
 *    reason (EventSource cannot send headers), resuming with Last-Event-ID.
 */
'use strict';

const TOKEN_KEY = 'giulia.token';
const THEME_KEY = 'giulia.theme';
const GRAPH_NODE_CAP = 200;
const LIVE_POINTS = 120;
const EDGE_KINDS = ['call', 'alias', 'use', 'import', 'require', 'struct', 'behaviour'];
const EDGE_DASH = { call: '', alias: '2 3', use: '6 3', import: '1 3', require: '8 2 2 2',
  struct: '4 2', behaviour: '10 3' };

/* ---- DOM helpers: text only ---- */

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function s(tag, attrs, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }

/* A column's classes: n (a number, right-aligned), opt (dropped first on a
 * narrow screen, as the CLI's tables drop their least important columns). */
function colClass(x) {
  const c = [x && x.n ? 'n' : null, x && x.opt ? 'opt' : null].filter(Boolean).join(' ');
  return c || null;
}

function table(headers, rows, opts) {
  const thead = h('thead', {}, h('tr', {}, headers.map(x =>
    h('th', { scope: 'col', class: colClass(x) }, x.t || x))));
  const tbody = h('tbody', {}, rows.length ? rows.map(r => h('tr', {}, r.map((c, i) =>
    h('td', { class: colClass(headers[i]) }, c)))) :
    h('tr', {}, h('td', { colspan: headers.length, class: 'muted' }, (opts && opts.empty) || 'none')));
  return h('div', { class: 'scroll' }, h('table', { 'aria-label': opts && opts.label }, thead, tbody));
}

/* ---- formatting ---- */

function fmtNum(x, digits) {
  if (x === null || x === undefined || Number.isNaN(x)) return '–';
  const a = Math.abs(x);
  const d = digits === undefined ? 1 : digits;
  if (a >= 1e9) return (x / 1e9).toFixed(d) + ' G';
  if (a >= 1e6) return (x / 1e6).toFixed(d) + ' M';
  if (a >= 1e4) return (x / 1e3).toFixed(d) + ' k';
  return Number.isInteger(x) ? String(x) : x.toFixed(d);
}

function fmtBytes(x) {
  if (x === null || x === undefined) return '–';
  const u = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0, v = x;
  while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i ? v.toFixed(1) : String(Math.round(v))) + ' ' + u[i];
}

/* Names as the CLI writes them (src/base/fmt.c): a registered name or
 * module atom without "Elixir."; the compiler's names of anonymous funs
 * ("Mod.-to_maps/1-fun-0-/2") as "fn in Mod.to_maps/1". */
function fmtName(atom) {
  return atom && atom.startsWith('Elixir.') && atom.length > 7 ? atom.slice(7) : (atom || '');
}

/* A module atom as Giulia writes modules everywhere: Elixir ones without
 * "Elixir.", Erlang ones with a colon (":ets"). */
function fmtModule(atom) {
  return atom && atom.startsWith('Elixir.') && atom.length > 7 ? atom.slice(7) : ':' + (atom || '?');
}

function fmtMfa(mfa) {
  if (!mfa) return '';
  const dash = mfa.indexOf('.-');
  const slash = mfa.lastIndexOf('/');
  if (dash < 0 || slash < dash) return mfa;
  const mod = mfa.slice(0, dash), name = mfa.slice(dash + 1, slash);
  const m = /^-(.+?)\/(\d+)-.+$/.exec(name);
  return m ? `fn in ${mod}.${m[1]}/${m[2]}` : mfa;
}

/* A name cut in its middle to `n` characters (both ends stay: the module's
 * root and the function), never broken inside a word; the full name in a
 * tooltip. */
function nameCell(text, n, href) {
  const t = text || '–';
  const cut = t.length > n ? t.slice(0, Math.ceil((n - 1) / 2)) + '…' + t.slice(t.length - Math.floor((n - 1) / 2)) : t;
  const code = h('code', { class: 'nm', title: t.length > n ? t : null }, cut);
  return href ? h('a', { href, title: t }, code) : code;
}

function procHref(node, pid) {
  return '#/process/' + encodeURIComponent(node) + '/' + encodeURIComponent(pid);
}

function fmtPct(x) { return x === null || x === undefined ? '–' : (100 * x).toFixed(1) + '%'; }
function fmtTime(ms) { return ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '–'; }

/* ---- API ---- */

function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }

function headers(extra) {
  const hd = Object.assign({}, extra || {});
  if (token()) hd.Authorization = 'Bearer ' + token();
  return hd;
}

function askToken() {
  const dlg = document.getElementById('token-dialog');
  if (!dlg.open) dlg.showModal();
}

async function api(path, opts) {
  const o = opts || {};
  const init = { method: o.method || 'GET', headers: headers(o.body ? { 'Content-Type': 'application/json' } : null) };
  if (o.body) init.body = JSON.stringify(o.body);
  if (o.signal) init.signal = o.signal;
  const r = await fetch(path, init);
  if (r.status === 401) { askToken(); throw new Error('this Giulia needs its token'); }
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  if (!r.ok) {
    const err = new Error((body && body.error) || ('HTTP ' + r.status + ' on ' + path));
    err.status = r.status;
    err.body = body;
    throw err;
  }
  return body;
}

function q(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, v);
  const t = u.toString();
  return t ? '?' + t : '';
}

function say(msg) { document.getElementById('status').textContent = msg || ''; }

/* ---- charts: hand-written SVG ---- */

function lineChart(title, xs, ys, opts) {
  const W = 480, H = 140, L = 64, R = 8, T = 20, B = 22;
  const o = opts || {};
  const pts = [];
  for (let i = 0; i < xs.length; i++) if (ys[i] !== null && ys[i] !== undefined) pts.push([xs[i], ys[i]]);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img',
    'aria-label': `${title}: ${pts.length} points, last ${pts.length ? (o.fmt || fmtNum)(pts[pts.length - 1][1]) : 'none'}` });
  svg.appendChild(s('text', { x: 4, y: 12 }, title));
  if (!pts.length) { svg.appendChild(s('text', { x: L, y: H / 2, class: 'sub' }, 'no data')); return svg; }
  const x0 = Math.min(...pts.map(p => p[0])), x1 = Math.max(...pts.map(p => p[0]));
  const yMax = Math.max(o.yMax || 0, ...pts.map(p => p[1])) || 1;
  const X = x => L + (x1 === x0 ? 0 : (x - x0) / (x1 - x0)) * (W - L - R);
  const Y = y => H - B - (y / yMax) * (H - T - B);
  for (const g of o.gaps || []) {
    const a = X(Math.max(x0, g.from_s)), b = X(Math.min(x1, g.to_s === null ? x1 : g.to_s));
    svg.appendChild(s('rect', { class: 'gap', x: a, y: T, width: Math.max(1, b - a), height: H - T - B }, s('title', {}, `gap: ${g.missing} snapshots missing`)));
  }
  svg.appendChild(s('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }));
  svg.appendChild(s('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }));
  svg.appendChild(s('text', { x: L - 4, y: T + 8, 'text-anchor': 'end' }, (o.fmt || fmtNum)(yMax)));
  svg.appendChild(s('text', { x: L - 4, y: H - B, 'text-anchor': 'end' }, '0'));
  svg.appendChild(s('text', { x: W - R, y: H - 6, 'text-anchor': 'end' }, o.xLabel ? o.xLabel(x1) : fmtNum(x1)));
  let d = '';
  pts.forEach((p, i) => { d += (i ? 'L' : 'M') + X(p[0]).toFixed(1) + ' ' + Y(p[1]).toFixed(1); });
  svg.appendChild(s('path', { class: 'series', d }));
  return svg;
}

function barRows(items) {
  const max = Math.max(1, ...items.map(i => i.value || 0));
  return h('div', { class: 'scroll' }, h('table', { class: 'bars' }, h('tbody', {}, items.map(i => {
    const bar = h('div', { class: 'bar' });
    bar.style.width = (100 * (i.value || 0) / max).toFixed(1) + '%';
    return h('tr', {}, h('th', { scope: 'row' }, i.label), h('td', { class: 'n' }, i.text), h('td', {}, bar));
  }))));
}

/* ---- live page ---- */

const live = { node: null, abort: null, lastId: null, points: [], alerts: [], updates: 0, prev: null };

function streamEvents(text, onEvent) {
  // One SSE block: "id:", "event:", "data:" lines; comments start with ':'.
  const ev = { id: null, event: 'message', data: '' };
  for (const line of text.split('\n')) {
    if (!line || line.startsWith(':')) continue;
    const i = line.indexOf(':');
    const k = i < 0 ? line : line.slice(0, i);
    const v = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
    if (k === 'id') ev.id = v;
    else if (k === 'event') ev.event = v;
    else if (k === 'data') ev.data += (ev.data ? '\n' : '') + v;
  }
  if (ev.data) onEvent(ev);
}

async function liveStream(node, onEvent, signal) {
  // fetch-based SSE: reconnects with Last-Event-ID until aborted.
  while (!signal.aborted) {
    try {
      const hd = headers({ Accept: 'text/event-stream' });
      if (live.lastId) hd['Last-Event-ID'] = live.lastId;
      const r = await fetch('/monitor/api/monitor/stream' + q({ node }), { headers: hd, signal });
      if (r.status === 401) { askToken(); return; }
      if (!r.ok || !r.body) throw new Error('stream answered ' + r.status);
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          streamEvents(block, ev => { if (ev.id) live.lastId = ev.id; onEvent(ev); });
        }
      }
    } catch (e) {
      if (signal.aborted) return;
    }
    await new Promise(res => setTimeout(res, 2000));
  }
}

function procName(p) {
  return fmtName(p.registered_name) || p.pid || '?';
}

function liveProcTable(list, metric, snap) {
  const win = (snap.window_ms || 1000) / 1000;
  // narrow screens show the name and the numbers only: a shorter cut
  const cut = window.innerWidth < 560 ? 16 : 22;
  const rows = (list || []).slice(0, 10).map(p => [
    p.pid ? nameCell(procName(p), cut, procHref(snap.node || live.node, p.pid)) : nameCell(procName(p), cut),
    nameCell(p.module, 20),
    nameCell(fmtMfa(p.current_function), 28),
    metric === 'reductions' ? fmtPct(p.cpu_share) : metric === 'memory' ? fmtBytes(p.memory_bytes) : fmtNum(p.message_queue_len, 0),
    metric === 'reductions' ? fmtNum((p.reductions || 0) / win) : metric === 'memory' ? fmtPct(p.cpu_share) : fmtBytes(p.memory_bytes),
  ]);
  const heads = { reductions: ['CPU share', 'reductions/s'], memory: ['memory', 'CPU share'],
    message_queue: ['mailbox', 'memory'] }[metric];
  return table(['process', { t: 'owned by', opt: 1 }, { t: 'executing in', opt: 1 }, { t: heads[0], n: 1 }, { t: heads[1], n: 1 }], rows,
    { label: 'top processes by ' + metric, empty: 'no process above zero' });
}

function liveDraw(root, data) {
  const snap = data.snapshot;
  const point = {
    t: snap.timestamp_ms,
    su: snap.scheduler_utilisation && snap.scheduler_utilisation.total,
    rq: snap.run_queue && snap.run_queue.total,
    mem: snap.memory && snap.memory.total,
    rps: snap.reductions && snap.reductions.per_second,
    pc: snap.processes && snap.processes.count,
  };
  live.points.push(point);
  while (live.points.length > LIVE_POINTS) live.points.shift();
  const win = (snap.window_ms || 1000) / 1000;
  const io = snap.io || {};
  const tiles = h('div', { class: 'tiles' },
    [['scheduler utilisation', fmtPct(point.su)], ['run queue', fmtNum(point.rq, 0)],
      ['memory', fmtBytes(point.mem)], ['reductions/s', fmtNum(point.rps)],
      ['processes', fmtNum(point.pc, 0)],
      ['IO in/s', fmtBytes((io.input_bytes || 0) / win)], ['IO out/s', fmtBytes((io.output_bytes || 0) / win)]]
      .map(([l, v]) => h('div', { class: 'tile' }, h('div', { class: 'v' }, v), h('div', { class: 'l' }, l))));
  const xs = live.points.map(p => (p.t - live.points[0].t) / 1000);
  const ago = x => '+' + fmtNum(x, 0) + ' s';
  const charts = h('div', { class: 'grid' },
    h('div', { class: 'panel' }, lineChart('scheduler utilisation', xs, live.points.map(p => p.su), { yMax: 1, fmt: fmtPct, xLabel: ago })),
    h('div', { class: 'panel' }, lineChart('run queue', xs, live.points.map(p => p.rq), { xLabel: ago })),
    h('div', { class: 'panel' }, lineChart('memory', xs, live.points.map(p => p.mem), { fmt: fmtBytes, xLabel: ago })),
    h('div', { class: 'panel' }, lineChart('reductions/s', xs, live.points.map(p => p.rps), { xLabel: ago })));
  const per = (snap.scheduler_utilisation && snap.scheduler_utilisation.per_scheduler) || [];
  const mem = snap.memory || {};
  const memCats = ['processes', 'binary', 'ets', 'code', 'atom', 'system'].filter(k => mem[k] !== undefined)
    .map(k => ({ label: k, value: mem[k], text: fmtBytes(mem[k]) }));
  const trace = (snap.trace && snap.trace.calls) || [];
  const tw = ((snap.trace && snap.trace.window_ms) || snap.window_ms || 1000) / 1000;
  const traceRows = trace.slice().sort((a, b) => (b.count || 0) - (a.count || 0)).slice(0, 20).map(c =>
    [nameCell(fmtMfa(`${c.module}.${c.function}/${c.arity}`), 40), fmtNum(c.count, 0), fmtNum((c.count || 0) / tw)]);
  const hot = (data.hot_modules || []).slice(0, 10).map(m =>
    [nameCell(m.module, 32), fmtPct(m.cpu_share), fmtBytes(m.memory_bytes), fmtNum(m.processes, 0)]);
  const current = data.alerts || [];
  const alertList = h('ul', { class: 'plain alerts' }, live.alerts.length ? live.alerts.slice(-20).reverse().map(a =>
    h('li', {}, h('span', { class: 'sev sev-' + a.severity }, a.severity), ' ', fmtTime(a.timestamp_ms), ' ',
      h('span', {}, a.message))) : h('li', { class: 'muted' }, 'no alert has fired while this page was open'));
  const top = snap.top_processes || {};
  clear(root);
  append(root, [
    h('p', { class: 'muted' }, `snapshot ${snap.seq} of session ${snap.session_id || '–'}, ${fmtTime(snap.timestamp_ms)}, window ${snap.window_ms} ms, OTP ${snap.otp_release || '?'}; updates on this page: `,
      h('span', { id: 'live-updates' }, String(live.updates))),
    tiles,
    h('h2', {}, 'Alerts'),
    h('div', { class: 'panel' },
      h('p', {}, current.length ? `${current.length} firing now: ` : 'nothing firing now',
        current.map(a => h('span', {}, ' ', h('span', { class: 'sev sev-' + a.severity }, a.severity), ' ', a.message))),
      alertList),
    charts,
    h('div', { class: 'grid' },
      h('div', { class: 'panel' }, h('h2', {}, 'Schedulers'),
        barRows(per.map((u, i) => ({ label: 'scheduler ' + (i + 1), value: u, text: fmtPct(u) })))),
      h('div', { class: 'panel' }, h('h2', {}, 'Memory by category'), barRows(memCats))),
    h('h2', {}, 'Top processes'),
    top.carried ? h('p', { class: 'muted', id: 'top-carried' }, 'the last scan\u2019s lists: the observer scans every process ' +
      `every ${(snap.observer && snap.observer.scan_every) || 'few'} snapshots to keep within its budget`) : null,
    h('div', { class: 'grid' },
      h('div', { class: 'panel' }, h('h3', {}, 'by CPU share'), liveProcTable(top.reductions, 'reductions', snap)),
      h('div', { class: 'panel' }, h('h3', {}, 'by memory'), liveProcTable(top.memory, 'memory', snap)),
      h('div', { class: 'panel' }, h('h3', {}, 'by mailbox'), liveProcTable(top.message_queue, 'message_queue', snap))),
    h('div', { class: 'grid' },
      h('div', { class: 'panel' }, h('h2', {}, 'Hot modules (owned by)'),
        table(['module', { t: 'CPU share', n: 1 }, { t: 'memory', n: 1 }, { t: 'processes', n: 1 }], hot, { label: 'hot modules' })),
      h('div', { class: 'panel' }, h('h2', {}, 'Traced functions'),
        table(['function', { t: 'calls', n: 1 }, { t: 'calls/s', n: 1 }], traceRows,
          { label: 'traced functions', empty: 'no module traced (start with modules to trace)' }))),
  ]);
}

async function pageLive(main, node) {
  live.abort && live.abort.abort();
  live.abort = null;
  const status = await api('/monitor/api/monitor/observe/status').catch(e => { say(e.message); return null; });
  const obs = (status && status.observations) || [];
  const running = obs.filter(o => o.state === 'running');
  const form = h('form', { class: 'inline', id: 'observe-form', 'aria-label': 'start an observation' },
    h('label', {}, 'node', h('input', { name: 'node', required: true, placeholder: 'app@127.0.0.1', value: node || '', size: 22 })),
    h('label', {}, 'cookie (optional)', h('input', { name: 'cookie', type: 'password', autocomplete: 'off', size: 12 })),
    h('label', {}, 'interval ms', h('input', { name: 'interval_ms', type: 'number', min: 250, value: 1000, size: 6 })),
    h('label', {}, 'modules to trace', h('input', { name: 'trace_modules', placeholder: 'App.Repo,App.Cache', size: 24 })),
    h('label', { title: 'the share of the node\'s work call counting may take; 0 counts every call' }, 'overhead %',
      h('input', { name: 'overhead', type: 'number', min: 0, max: 50, step: 'any', value: 5, size: 4 })),
    h('label', {}, 'project (optional)', h('input', { name: 'project', placeholder: '/abs/path', size: 18 })),
    h('label', { class: 'check' }, h('input', { name: 'call_time', type: 'checkbox' }), 'time per function'),
    h('button', { type: 'submit' }, 'Start observing'));
  form.addEventListener('submit', async ev => {
    ev.preventDefault();
    const f = new FormData(form);
    const body = { node: f.get('node').trim(), interval_ms: Number(f.get('interval_ms')) || 1000 };
    if (f.get('cookie')) body.cookie = f.get('cookie');
    const mods = String(f.get('trace_modules') || '').split(',').map(x => x.trim()).filter(Boolean);
    if (mods.length) body.trace_modules = mods;
    if (mods.length && String(f.get('overhead') || '').trim() !== '') body.overhead = `${Number(f.get('overhead'))}%`;
    if (f.get('project')) body.project = f.get('project');
    if (f.get('call_time')) body.call_time = true;
    try {
      await api('/monitor/api/monitor/observe/start', { method: 'POST', body });
      say('');
      location.hash = '#/live/' + encodeURIComponent(body.node);
    } catch (e) { say('start: ' + e.message); }
  });
  const list = h('ul', { class: 'plain' }, running.length ? running.map(o => h('li', {},
    h('a', { href: '#/live/' + encodeURIComponent(o.node) }, o.node), ` — ${o.snapshots} snapshots every ${o.interval_ms} ms`,
    o.trace_modules && o.trace_modules.length ? ', tracing ' + o.trace_modules.join(', ') : '')) :
    h('li', { class: 'muted' }, 'no observation running'));
  const body = h('div', { id: 'live-body' });
  clear(main);
  const startBox = h('details', { open: !node }, h('summary', {}, 'Observe a node'), form,
    h('p', { class: 'muted' }, 'Same caps and opt-ins as the API: interval at least 250 ms, at most 64 traced modules; the cookie stays in the monitor.'));
  append(main, [h('h1', {}, node ? 'Live: ' + node : 'Live nodes'),
    h('div', { class: 'panel' }, h('h2', {}, 'Observations'), list, startBox),
    body]);
  if (!node) return;
  const stop = h('button', { type: 'button', class: 'danger', id: 'stop-observe' }, 'Stop and build the profile');
  stop.addEventListener('click', async () => {
    stop.disabled = true;
    say('stopping ' + node + ' and building its profile…');
    try {
      const r = await api('/monitor/api/monitor/observe/stop', { method: 'POST', body: { node } });
      say('');
      if (r.profile_id) location.hash = '#/profile/' + r.profile_id;
    } catch (e) { say('stop: ' + e.message); stop.disabled = false; }
  });
  body.appendChild(h('div', { class: 'row' }, stop,
    h('a', { href: '#/ets/' + encodeURIComponent(node), id: 'ets-link' }, 'ETS tables'),
    h('a', { href: '#/ports/' + encodeURIComponent(node), id: 'ports-link' }, 'Ports and sockets'),
    h('a', { href: '#/apps/' + encodeURIComponent(node), id: 'apps-link' }, 'Applications'),
    h('a', { href: '#/memory/' + encodeURIComponent(node), id: 'memory-link' }, 'Memory')));
  const area = h('div', { id: 'live-area' }, h('p', { class: 'muted' }, 'waiting for the first snapshot…'));
  body.appendChild(area);
  live.node = node; live.lastId = null; live.points = []; live.alerts = []; live.updates = 0;
  const ctl = new AbortController();
  live.abort = ctl;
  api('/monitor/api/runtime/history' + q({ node, limit: LIVE_POINTS })).then(hist => {
    if (live.points.length) return;
    for (const p of hist.points || []) live.points.push({ t: p.timestamp_ms, su: p.scheduler_utilisation, rq: p.run_queue,
      mem: p.memory_total, rps: p.reductions_per_second, pc: p.processes });
  }).catch(() => {});
  liveStream(node, ev => {
    let data;
    try { data = JSON.parse(ev.data); } catch (e) { return; }
    if (ev.event === 'snapshot') { live.updates++; liveDraw(area, data); area.setAttribute('data-updates', String(live.updates)); }
    else if (ev.event === 'alert') live.alerts.push(data);
    else if (ev.event === 'end') say(`the observation of ${data.node} ended (${data.status}${data.reason ? ': ' + data.reason : ''})`);
    else if (ev.event === 'gap') say(`the stream skipped events ${data.from}–${data.to} (the monitor keeps the last 512)`);
  }, ctl.signal);
}

/* ---- one process (giulia process; docs/DASHBOARD.md) ---- */

function procRefs(node, list, total) {
  const items = (list || []).map(e => h('li', {},
    e.kind && e.kind !== 'process' ? e.kind + ' ' : '',
    e.id && e.id.startsWith('<') ? h('a', { href: procHref(node, e.id) }, h('code', {}, e.id)) : h('code', {}, e.id || ''),
    e.name ? ' ' : '', e.name ? h('code', {}, fmtName(e.name)) : ''));
  if (total > (list || []).length) items.push(h('li', { class: 'muted' }, `… ${(list || []).length} of ${total} shown`));
  return items.length ? h('ul', { class: 'plain refs' }, items) : h('span', { class: 'muted' }, 'none');
}

function moduleOf(mfa) {
  const i = mfa ? mfa.lastIndexOf('.', mfa.lastIndexOf('/')) : -1;
  return i > 0 ? mfa.slice(0, i) : null;
}

function mfaLink(mfa) {
  // joined to the graph: the module opens in the graph explorer; cut in
  // the middle to what the screen's width leaves
  const mod = moduleOf(mfa);
  const text = fmtMfa(mfa) || '–';
  const cell = nameCell(text, window.innerWidth < 560 ? 26 : 72);
  return mod && !mod.startsWith(':') ? h('a', { href: '#/graph' + q({ module: mod }), title: 'open ' + mod + ' in the graph' }, cell)
    : cell;
}

async function pageProcess(main, node, pid) {
  const opts = { values: false, state: false, messages: 0 };
  const back = h('a', { href: '#/live/' + encodeURIComponent(node), id: 'process-back' }, '← back to ' + node);
  const area = h('div', { id: 'process-area' }, h('p', { class: 'muted' }, 'reading the process…'));
  const values = h('input', { type: 'checkbox', name: 'values' });
  const state = h('input', { type: 'checkbox', name: 'state' });
  const messages = h('input', { type: 'number', name: 'messages', min: 0, max: 100, value: 0, size: 4 });
  const refresh = h('button', { type: 'submit', id: 'process-refresh' }, 'Read again');
  const form = h('form', { class: 'inline', 'aria-label': 'what to read' },
    h('label', { class: 'check', title: 'each value cut at 400 characters' }, values, 'dictionary values'),
    h('label', {}, 'messages (0–100)', messages),
    h('label', { class: 'check', title: 'sys:get_status of an OTP process, with a 1 s timeout, cut at 4000 characters' }, state, 'OTP state'),
    refresh);
  clear(main);
  append(main, [h('p', {}, back), h('h1', {}, 'Process ', h('code', {}, pid), ' on ', node),
    h('div', { class: 'panel' }, form,
      h('p', { class: 'muted' }, 'Read once, on request: one bounded call on the node (nothing loaded); messages, values and state only when asked.')),
    area]);
  const load = async () => {
    refresh.disabled = true;
    opts.values = values.checked; opts.state = state.checked; opts.messages = Number(messages.value) || 0;
    try {
      const p = await api('/monitor/api/runtime/process' + q({ node, process: pid, values: opts.values ? 'true' : null,
        state: opts.state ? 'true' : null, messages: opts.messages || null }));
      drawProcess(area, node, p);
      say('');
    } catch (e) {
      clear(area).appendChild(h('p', { class: 'muted' }, e.status === 404 ? `no process ${pid} on ${node} (it may have exited)` : 'could not read the process: ' + e.message));
    }
    refresh.disabled = false;
  };
  form.addEventListener('submit', ev => { ev.preventDefault(); load(); });
  await load();
}

function drawProcess(area, node, p) {
  const dict = p.dictionary || { count: 0, entries: [] };
  const rows = [
    ['registered name', p.registered_name ? h('code', {}, fmtName(p.registered_name)) : h('span', { class: 'muted' }, 'none')],
    ['status', p.status + (p.alive === false ? ' (exited during the window)' : '')],
    ['executing in', mfaLink(p.current_function)],
    ['initial call', mfaLink(p.proc_lib_initial_call || p.initial_call), p.proc_lib_initial_call ? ' (proc_lib)' : ''],
    ['ancestors', (p.ancestors || []).length ? (p.ancestors || []).map((a, i) => [i ? ', ' : '', a.startsWith('<') ? h('a', { href: procHref(node, a) }, h('code', {}, a)) : h('code', {}, fmtName(a))]) : h('span', { class: 'muted' }, 'none')],
    ['memory', `${fmtBytes(p.memory_bytes)} (heap ${fmtBytes(p.heap_bytes)}, total heap ${fmtBytes(p.total_heap_bytes)}, stack ${fmtBytes(p.stack_bytes)})`],
    ['refc binaries', `${fmtNum(p.binaries && p.binaries.count, 0)}, ${fmtBytes(p.binaries && p.binaries.bytes)}`],
    ['reductions/s', `${fmtNum(p.reductions_per_second)} over ${p.window_ms} ms (total ${fmtNum(p.reductions)})`],
    ['message queue', fmtNum(p.message_queue_len, 0)],
    ['group leader', procRefs(node, p.group_leader ? [p.group_leader] : [], 1)],
    ['flags', `trap_exit ${p.trap_exit}, priority ${p.priority}, ${fmtNum(p.minor_gcs, 0)} minor GCs, fullsweep_after ${p.fullsweep_after}`],
    ['links', procRefs(node, p.links, p.links_count)],
    ['monitors', procRefs(node, p.monitors, p.monitors_count)],
    ['monitored by', procRefs(node, p.monitored_by, p.monitored_by_count)],
  ];
  const dl = h('dl', { class: 'kv', id: 'process-summary' }, rows.map(([k, ...v]) => [h('dt', {}, k), h('dd', {}, v)]));
  const stack = table(['function', { t: 'file:line', opt: 1 }], (p.stack || []).map(f =>
    [mfaLink(f.function), f.file ? h('code', { class: 'nm' }, `${f.file}:${f.line}`) : '–']), { label: 'stack' });
  const dictRows = (dict.entries || []).map(e => e.value !== undefined ? [h('code', {}, e.key), h('code', {}, e.value)] : [h('code', {}, e.key)]);
  const withValues = (dict.entries || []).some(e => e.value !== undefined);
  const parts = [
    h('div', { class: 'panel' }, dl),
    h('div', { class: 'grid' },
      h('div', { class: 'panel' }, h('h2', {}, 'Stack'), stack),
      h('div', { class: 'panel' }, h('h2', {}, `Dictionary: ${dict.count} keys${dict.count > (dict.entries || []).length ? ' (the first ' + (dict.entries || []).length + ' shown)' : ''}`),
        table(withValues ? ['key', 'value'] : ['key'], dictRows, { label: 'dictionary', empty: 'empty' })))];
  if (p.messages) {
    parts.push(h('div', { class: 'panel' }, h('h2', {}, 'Messages'), p.messages.refused ?
      h('p', { class: 'muted' }, 'not read: the queue is longer than 10000 (reading it would copy it all)') :
      h('ol', { class: 'msgs' }, (p.messages.shown || []).map(m => h('li', {}, h('code', {}, m))))));
  }
  if (p.state) {
    parts.push(h('div', { class: 'panel' }, h('h2', {}, 'State (sys:get_status)'), p.state.error ?
      h('p', { class: 'muted' }, 'not read: ' + p.state.error) : h('pre', { class: 'state' }, p.state.text)));
  }
  clear(area);
  append(area, parts);
}

/* ---- ETS tables (giulia ets) ---- */

async function pageEts(main, node) {
  const back = h('a', { href: '#/live/' + encodeURIComponent(node), id: 'ets-back' }, '← back to ' + node);
  const sort = h('select', { name: 'sort' }, h('option', { value: 'memory' }, 'memory'), h('option', { value: 'size' }, 'size (objects)'));
  const limit = h('input', { type: 'number', name: 'limit', min: 1, max: 1000, value: 30, size: 5 });
  const form = h('form', { class: 'inline', 'aria-label': 'which tables' },
    h('label', {}, 'largest by', sort), h('label', {}, 'how many (1–1000)', limit),
    h('button', { type: 'submit' }, 'Read again'));
  const area = h('div', { id: 'ets-area' }, h('p', { class: 'muted' }, 'reading the tables…'));
  clear(main);
  append(main, [h('p', {}, back), h('h1', {}, 'ETS tables on ', node),
    h('div', { class: 'panel' }, form, h('p', { class: 'muted' }, 'Read once, on request: ets:info of each table in one bounded call, never a table\'s contents.')),
    area]);
  const load = async () => {
    try {
      const e = await api('/monitor/api/runtime/ets' + q({ node, sort: sort.value, limit: Number(limit.value) || 30 }));
      const rows = (e.tables || []).map(t => [
        nameCell(fmtName(t.name) + (t.named_table ? '' : ' ' + t.id), 28),
        t.owner && t.owner.startsWith('<') ? h('a', { href: procHref(node, t.owner), title: t.owner }, h('code', { class: 'nm' }, fmtName(t.owner_name) || t.owner)) : h('code', {}, t.owner || '–'),
        fmtBytes(t.memory_bytes), fmtNum(t.size, 0), t.type, t.protection,
        [t.read_concurrency ? 'read' : '', t.write_concurrency && t.write_concurrency !== 'false' ? (t.write_concurrency === true ? 'write' : t.write_concurrency) : ''].filter(Boolean).join(', ') || '–']);
      clear(area);
      append(area, [h('p', {}, `${fmtNum(e.count, 0)} tables, ${fmtBytes(e.memory_bytes)} in all; the ${rows.length} largest by ${e.sort}` +
        (e.scanned < e.count ? ` (the first ${e.scanned} looked at)` : '') + '.'),
      h('div', { class: 'panel' }, table(['table', 'owner', { t: 'memory', n: 1 }, { t: 'size', n: 1 }, { t: 'type', opt: 1 }, { t: 'protection', opt: 1 }, { t: 'concurrency', opt: 1 }],
        rows, { label: 'ETS tables', empty: 'no table' }))]);
      say('');
    } catch (err) {
      clear(area).appendChild(h('p', { class: 'muted' }, 'could not read the tables: ' + err.message));
    }
  };
  form.addEventListener('submit', ev => { ev.preventDefault(); load(); });
  await load();
}

/* ---- ports and sockets (giulia ports) ---- */

async function pagePorts(main, node) {
  const back = h('a', { href: '#/live/' + encodeURIComponent(node), id: 'ports-back' }, '← back to ' + node);
  const win = h('input', { type: 'number', name: 'window_ms', min: 10, max: 10000, value: 1000, size: 6 });
  const form = h('form', { class: 'inline', 'aria-label': 'window' },
    h('label', {}, 'window ms (10–10000)', win), h('button', { type: 'submit' }, 'Measure again'));
  const area = h('div', { id: 'ports-area' }, h('p', { class: 'muted' }, 'measuring…'));
  clear(main);
  append(main, [h('p', {}, back), h('h1', {}, 'Ports and sockets on ', node),
    h('div', { class: 'panel' }, form, h('p', { class: 'muted' }, 'Measured on request over the window: statistics of each port in one bounded call, nothing sent to the sockets.')),
    area]);
  const load = async () => {
    try {
      const e = await api('/monitor/api/runtime/ports' + q({ node, window_ms: Number(win.value) || 1000 }));
      const per = e.window_ms > 0 ? 1000 / e.window_ms : 0;
      const rows = (e.ports || []).map(p => [
        h('code', {}, p.id),
        p.owner ? h('a', { href: procHref(node, p.owner), title: p.owner }, h('code', { class: 'nm' }, fmtName(p.owner_name) || p.owner)) : '–',
        fmtBytes(p.input_bytes * per) + '/s', fmtBytes(p.output_bytes * per) + '/s',
        p.recv_packets === null ? '–' : fmtNum(p.recv_packets, 0), p.send_packets === null ? '–' : fmtNum(p.send_packets, 0),
        p.kind, nameCell(p.peer || (p.local ? 'listening on ' + p.local : p.name), 30)]);
      const kinds = Object.entries(e.kinds || {}).map(([k, n]) => `${k} ${n}`).join(', ');
      clear(area);
      append(area, [h('p', { id: 'ports-summary' }, `${fmtNum(e.count, 0)} ports (${kinds || 'none'})` +
        (e.fds && e.fds.used !== null ? `; ${e.fds.used} file descriptors of ${e.fds.max}` : '') + `; over ${e.window_ms} ms, most bytes first.`),
      h('div', { class: 'panel' }, table(['port', 'owner', { t: 'in', n: 1 }, { t: 'out', n: 1 }, { t: 'packets in', n: 1, opt: 1 }, { t: 'packets out', n: 1, opt: 1 }, { t: 'kind', opt: 1 }, { t: 'peer / program', opt: 1 }],
        rows, { label: 'ports', empty: 'no port' }))]);
      say('');
    } catch (err) {
      clear(area).appendChild(h('p', { class: 'muted' }, 'could not read the ports: ' + err.message));
    }
  };
  form.addEventListener('submit', ev => { ev.preventDefault(); load(); });
  await load();
}

/* ---- applications and supervision (giulia apps) ---- */

function supNode(node, n, open) {
  const label = [n.type === 'supervisor' ? '+ ' : '- ', h('code', {}, fmtName(n.id)),
    n.name ? [' ', n.pid && n.pid.startsWith('<') ? h('a', { href: procHref(node, n.pid) }, h('code', {}, fmtName(n.name))) : h('code', {}, fmtName(n.name))]
      : n.pid && n.pid.startsWith('<') ? [' ', h('a', { href: procHref(node, n.pid) }, h('code', {}, n.pid))] : '',
    (n.modules || []).length ? h('span', { class: 'muted' }, ' ' + n.modules.map(m => m === 'dynamic' ? m : fmtModule(m)).join(', ')) : '',
    n.children_count > (n.children || []).length ? h('span', { class: 'muted' }, ` (${(n.children || []).length} of ${n.children_count} children shown)`) : '',
    n.cut ? h('span', { class: 'muted' }, ' (deeper levels not read)') : '',
    n.error ? h('span', { class: 'muted' }, ' (which_children: ' + n.error + ')') : ''];
  if (!(n.children || []).length) return h('li', {}, label);
  return h('li', {}, h('details', { open }, h('summary', {}, label),
    h('ul', { class: 'tree' }, n.children.map(c => supNode(node, c, false)))));
}

async function pageApps(main, node, app) {
  const back = h('a', { href: app ? '#/apps/' + encodeURIComponent(node) : '#/live/' + encodeURIComponent(node), id: 'apps-back' },
    '← back to ' + (app ? 'the applications of ' : '') + node);
  const area = h('div', { id: 'apps-area' }, h('p', { class: 'muted' }, 'reading…'));
  clear(main);
  append(main, [h('p', {}, back), h('h1', {}, app ? ['Supervision tree of ', h('code', {}, app), ' on ', node] : 'Applications on ' + node), area]);
  try {
    const e = await api('/monitor/api/runtime/apps' + q({ node, app }));
    clear(area);
    if (!app) {
      const rows = (e.apps || []).slice().sort((a, b) => (b.memory_bytes || 0) - (a.memory_bytes || 0)).map(a => [
        h('a', { href: '#/apps/' + encodeURIComponent(node) + '/' + encodeURIComponent(a.name) }, h('code', {}, a.name)),
        a.version || '–', fmtNum(a.processes, 0), fmtBytes(a.memory_bytes), a.description || '']);
      const u = e.unattributed || {};
      append(area, [h('div', { class: 'panel' }, table(['application', { t: 'version', opt: 1 }, { t: 'processes', n: 1 }, { t: 'memory', n: 1 }, { t: 'description', opt: 1 }],
        rows, { label: 'applications' }), h('p', { class: 'muted' }, `not in any application: ${fmtNum(u.processes, 0)} processes, ${fmtBytes(u.memory_bytes)}`))]);
    } else {
      append(area, [h('p', { class: 'muted' }, `${e.app} ${e.version || ''}: ${e.nodes} nodes read; each supervisor asked with a 1 s timeout, at most 4 levels and 50 children each.`),
        h('div', { class: 'panel' }, e.tree ? h('ul', { class: 'tree', id: 'sup-tree' }, supNode(node, e.tree, true)) : h('p', { class: 'muted' }, 'no supervisor: a library application'))]);
    }
    say('');
  } catch (err) {
    clear(area).appendChild(h('p', { class: 'muted' }, 'could not read: ' + err.message));
  }
}

/* ---- memory you can act on (giulia alloc, giulia binleak) ---- */

const pct = u => (typeof u === 'number' ? Math.round(u * 100) + '%' : '–');

async function pageMemory(main, node) {
  const back = h('a', { href: '#/live/' + encodeURIComponent(node), id: 'memory-back' }, '← back to ' + node);
  const area = h('div', { id: 'alloc-area' }, h('p', { class: 'muted' }, 'reading…'));
  const sure = h('input', { type: 'checkbox', id: 'binleak-sure' });
  const run = h('button', { type: 'button', id: 'binleak-run', disabled: true }, 'Find binary leaks');
  sure.addEventListener('change', () => { run.disabled = !sure.checked; });
  const leaks = h('div', { id: 'binleak-area' });
  clear(main);
  append(main, [h('p', {}, back), h('h1', {}, 'Memory on ', node),
    h('h2', {}, 'Allocators'), area,
    h('h2', {}, 'Binary leaks'),
    h('div', { class: 'panel' },
      h('p', {}, 'As recon:bin_leak/1: each process\'s refc binaries before and after a garbage collection of it. This forces a garbage collection of every process of the node (at most 100,000, for at most 5 s).'),
      h('form', { class: 'inline', 'aria-label': 'binary leaks' }, h('label', { class: 'check' }, sure, ' force a garbage collection of every process'), run)),
    leaks]);
  run.addEventListener('click', async () => {
    run.disabled = true;
    clear(leaks).appendChild(h('p', { class: 'muted' }, 'collecting…'));
    try {
      const e = await api('/monitor/api/runtime/binleak' + q({ node, confirm: 'true', limit: 20 }));
      const rows = (e.processes || []).map(p => [
        h('a', { href: procHref(node, p.pid), title: p.pid }, h('code', { class: 'nm' }, fmtName(p.registered_name) || p.pid)),
        fmtBytes(p.freed_bytes), fmtBytes(p.before_bytes), fmtBytes(p.after_bytes),
        `${fmtNum(p.before_count, 0)} → ${fmtNum(p.after_count, 0)}`, nameCell(p.initial_call || '–', 30)]);
      clear(leaks);
      append(leaks, [h('p', { id: 'binleak-summary' }, `${fmtNum(e.collected, 0)} of ${fmtNum(e.count, 0)} processes collected in ${e.elapsed_ms} ms` +
        (e.cut ? ' (time budget reached)' : '') + `; they freed ${fmtBytes(e.freed_bytes)} (binary memory ${fmtBytes(e.binary_before)} → ${fmtBytes(e.binary_after)}).`),
      h('div', { class: 'panel' }, table(['process', { t: 'freed', n: 1 }, { t: 'before', n: 1, opt: 1 }, { t: 'after', n: 1 }, { t: 'binaries', n: 1, opt: 1 }, { t: 'initial call', opt: 1 }],
        rows, { label: 'binary leaks', empty: 'no process' }))]);
    } catch (err) {
      clear(leaks).appendChild(h('p', { class: 'muted' }, 'could not measure: ' + err.message));
    }
    run.disabled = !sure.checked;
  });
  try {
    const e = await api('/monitor/api/runtime/alloc' + q({ node, limit: 20 }));
    const types = (e.types || []).map(t => [h('code', {}, t.allocator), fmtNum(t.instances, 0), fmtBytes(t.carriers_bytes), fmtBytes(t.blocks_bytes), pct(t.usage),
      t.sbcs_carriers_bytes > 0 ? pct(t.sbcs_blocks_bytes / t.sbcs_carriers_bytes) : '–', t.mbcs_carriers_bytes > 0 ? pct(t.mbcs_blocks_bytes / t.mbcs_carriers_bytes) : '–']);
    const worst = (e.rows || []).map(r => [h('code', {}, `${r.allocator} #${r.instance}`), fmtBytes(r.unused_bytes), fmtBytes(r.sbcs_carriers_bytes), pct(r.sbcs_usage), fmtBytes(r.mbcs_carriers_bytes), pct(r.mbcs_usage)]);
    const cache = (e.cache || []).map(c => `instance ${c.instance}: ${fmtNum(c.hits, 0)} hits of ${fmtNum(c.calls, 0)} calls (${pct(c.hit_rate)})`).join('; ');
    clear(area);
    append(area, [h('p', { id: 'alloc-summary' }, `${e.allocators} allocators, ${e.instances} instances: carriers ${fmtBytes(e.carriers_bytes)}, blocks in use ${fmtBytes(e.blocks_bytes)}.`),
      h('div', { class: 'panel' }, table(['allocator', { t: 'instances', n: 1, opt: 1 }, { t: 'carriers', n: 1 }, { t: 'blocks', n: 1 }, { t: 'used', n: 1 }, { t: 'sbcs used', n: 1, opt: 1 }, { t: 'mbcs used', n: 1, opt: 1 }],
        types, { label: 'allocators' })),
      h('p', {}, 'Instances with the most carrier bytes unused (recon_alloc:fragmentation):'),
      h('div', { class: 'panel' }, table(['instance', { t: 'unused', n: 1 }, { t: 'sbcs', n: 1, opt: 1 }, { t: 'sbcs used', n: 1, opt: 1 }, { t: 'mbcs', n: 1, opt: 1 }, { t: 'mbcs used', n: 1 }],
        worst, { label: 'allocator instances' })),
      h('p', { class: 'muted', id: 'alloc-cache' }, 'mseg_alloc cache hit rates (recon_alloc:cache_hit_rates): ' + (cache || 'no mseg_alloc'))]);
    say('');
  } catch (err) {
    clear(area).appendChild(h('p', { class: 'muted' }, 'could not read the allocators: ' + err.message));
  }
}

/* ---- profiles ---- */

async function pageProfiles(main) {
  const r = await api('/api/runtime/profiles' + q({ limit: 200 }));
  const list = r.profiles || [];
  const pick = { a: null, b: null };
  const cmp = h('button', { type: 'button', disabled: true }, 'Compare the two chosen');
  cmp.addEventListener('click', () => { location.hash = `#/compare/${pick.a}/${pick.b}`; });
  const rows = list.map(p => {
    const ca = h('input', { type: 'radio', name: 'cmp-a', value: p.id, 'aria-label': `profile ${p.id} as before` });
    const cb = h('input', { type: 'radio', name: 'cmp-b', value: p.id, 'aria-label': `profile ${p.id} as after` });
    ca.addEventListener('change', () => { pick.a = p.id; cmp.disabled = !(pick.a && pick.b); });
    cb.addEventListener('change', () => { pick.b = p.id; cmp.disabled = !(pick.a && pick.b); });
    return [h('a', { href: '#/profile/' + p.id }, '#' + p.id), h('code', {}, p.node), h('code', {}, p.project || '–'),
      fmtTime(p.created_ms), ca, cb];
  });
  clear(main);
  append(main, [h('h1', {}, 'Profiles'),
    h('div', { class: 'panel' }, table(['profile', 'node', 'project', 'created', 'before', 'after'], rows,
      { label: 'profiles', empty: 'no profile yet: observe a node, then stop the observation' }), h('div', { class: 'row' }, cmp))]);
}

function evidenceList(ev) {
  const items = [];
  const walk = (prefix, v) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) { for (const [k, x] of Object.entries(v)) walk(prefix ? prefix + '.' + k : k, x); return; }
    let text;
    if (Array.isArray(v)) text = v.map(x => typeof x === 'object' ? JSON.stringify(x) : String(x)).join(', ');
    else if (typeof v === 'number') text = Number.isInteger(v) ? String(v) : v.toPrecision(4);
    else text = String(v);
    items.push(h('dt', {}, prefix), h('dd', {}, text));
  };
  walk('', ev || {});
  return h('dl', {}, items);
}

/* Where to look next on the node, from a recommendation's evidence: the
 * ETS tables when ETS memory grew, the processes it names. */
function recLinks(r, node) {
  const ev = r.evidence || {};
  const links = [];
  if (node && ev.categories && ev.categories.ets > 0)
    links.push(h('a', { href: '#/ets/' + encodeURIComponent(node), class: 'rec-ets' }, 'ETS tables on ' + node));
  for (const p of Array.isArray(ev.processes) ? ev.processes : [])
    if (node && p && p.pid) links.push(h('a', { href: procHref(node, p.pid) }, h('code', {}, p.pid)));
  return links.length ? h('p', {}, 'Look at: ', links.map((l, i) => [i ? ', ' : '', l])) : '';
}

function recView(r, node) {
  return h('article', { class: 'rec ' + (r.severity || ''), 'data-rule': r.id },
    h('div', {}, h('span', { class: 'sev sev-' + r.severity }, r.severity), ` #${r.rank} ${r.id} (rule ${r.rule}, priority ${r.priority})`,
      r.subject ? [' on ', h('code', {}, r.subject)] : ''),
    h('p', { class: 'finding' }, r.finding),
    (r.also || []).map(a => h('p', { class: 'muted' }, `also (${a.id}): `, a.finding)),
    h('details', {}, h('summary', {}, 'evidence'), evidenceList(r.evidence)),
    r.advice ? h('p', {}, h('strong', {}, 'Advice: '), r.advice) : '',
    recLinks(r, node));
}

async function pageProfile(main, id) {
  const row = await api('/api/runtime/profile/' + encodeURIComponent(id));
  const p = row.profile || {};
  const ss = p.session || {};
  const se = p.series || {};
  const t = se.t_s || [];
  const recs = p.recommendations || [];
  const hm = (p.hot_modules || []).map(m => [h('a', { href: '#/graph' + q({ module: m.module, path: row.project || '' }) }, h('code', {}, m.module)),
    fmtPct(m.reductions_share), fmtNum(m.samples, 0), fmtBytes(m.memory_bytes),
    m.graph && m.graph.complexity !== null && m.graph.complexity !== undefined ? String(m.graph.complexity) : '–',
    ((m.hottest_functions || []).slice(0, 3).map(f => `${f.name}/${f.arity}`).join(', ')) || '–']);
  const hf = (p.hot_functions || []).map(f => [nameCell(fmtMfa(`${f.module}.${f.function}/${f.arity}`), 48), fmtPct(f.reductions_share),
    fmtNum(f.samples, 0), f.calls === null || f.calls === undefined ? '–' : fmtNum(f.calls, 0), f.cyclomatic === null || f.cyclomatic === undefined ? '–' : String(f.cyclomatic)]);
  const th = (p.trace_hotspots || []).slice(0, 30).map(f => [nameCell(fmtMfa(f.mfa), 48), f.kind || '–', fmtNum(f.calls, 0), fmtNum(f.calls_per_second), fmtPct(f.calls_share)]);
  const xl = x => fmtNum(x, 0) + ' s';
  clear(main);
  append(main, [
    h('h1', {}, `Profile #${row.id} of `, h('code', {}, ss.node || row.node)),
    h('p', { class: 'muted' }, `${ss.status || '?'}${ss.reason ? ' (' + ss.reason + ')' : ''}, started ${fmtTime(ss.started_ms)}, ${fmtNum((ss.duration_ms || 0) / 1000)} s, ${ss.snapshot_count} snapshots every ${ss.interval_ms} ms`,
      ss.snapshots_missing ? `, ${ss.snapshots_missing} snapshots missing` : '',
      ss.traced_modules && ss.traced_modules.length ? ', traced: ' + ss.traced_modules.join(', ') : ''),
    h('h2', {}, `Recommendations (${recs.length})`),
    h('div', { class: 'panel', id: 'recommendations' }, recs.length ? recs.map(r => recView(r, ss.node || row.node)) : h('p', { class: 'muted' }, 'no rule fired')),
    h('h2', {}, 'Over time'),
    h('div', { class: 'grid' },
      h('div', { class: 'panel' }, lineChart('scheduler utilisation', t, se.scheduler_utilisation || [], { yMax: 1, fmt: fmtPct, gaps: se.gaps, xLabel: xl })),
      h('div', { class: 'panel' }, lineChart('run queue', t, se.run_queue || [], { gaps: se.gaps, xLabel: xl })),
      h('div', { class: 'panel' }, lineChart('memory', t, se.memory_bytes || [], { fmt: fmtBytes, gaps: se.gaps, xLabel: xl })),
      h('div', { class: 'panel' }, lineChart('reductions/s', t, se.reductions_per_second || [], { gaps: se.gaps, xLabel: xl })),
      h('div', { class: 'panel' }, lineChart('processes', t, se.process_count || [], { gaps: se.gaps, xLabel: xl }))),
    h('h2', {}, `Hot modules (${p.hot_modules_basis || 'executing'})`),
    h('div', { class: 'panel' }, table(['module', { t: 'share', n: 1 }, { t: 'samples', n: 1 }, { t: 'memory', n: 1 }, { t: 'complexity', n: 1 }, 'hottest'], hm, { label: 'hot modules' })),
    h('h2', {}, 'Hot functions'),
    h('div', { class: 'panel' }, table(['function', { t: 'share', n: 1 }, { t: 'samples', n: 1 }, { t: 'calls', n: 1 }, { t: 'cc', n: 1 }], hf, { label: 'hot functions' })),
    h('h2', {}, 'Traced functions'),
    h('div', { class: 'panel' }, table(['function', 'kind', { t: 'calls', n: 1 }, { t: 'calls/s', n: 1 }, { t: 'share', n: 1 }], th, { label: 'trace hotspots', empty: 'nothing traced' })),
  ]);
}

async function pageCompare(main, a, b) {
  const c = await api('/api/runtime/compare' + q({ a, b }));
  const lowerBetter = m => !/utilisation|reductions/.test(m.metric) || /run queue/.test(m.metric);
  const mrows = (c.metrics || []).map(m => {
    const fmt = m.kind === 'bytes' ? fmtBytes : m.kind === 'share' ? fmtPct : fmtNum;
    let verdict = '=';
    let cls = null;
    if (m.delta) {
      const better = lowerBetter(m) ? m.delta < 0 : m.delta > 0;
      verdict = better ? '▲ better' : '▼ worse';
      cls = better ? 'better' : 'worse';
    }
    return [m.metric, fmt(m.a), fmt(m.b), m.change_ratio === null || m.change_ratio === undefined ? '–' : fmtPct(m.change_ratio), h('span', { class: cls }, verdict)];
  });
  const hm = c.hot_modules || {};
  const mods = [].concat((hm.entered || []).map(x => ['entered', x]), (hm.left || []).map(x => ['left', x]), (hm.stayed || []).map(x => ['stayed', x]))
    .map(([k, x]) => [k, h('code', {}, x.module), fmtPct(x.share_a), fmtPct(x.share_b)]);
  const rc = c.recommendations || {};
  const recRows = [].concat((rc.resolved || []).map(x => ['resolved', x]), (rc.new || []).map(x => ['new', x]), (rc.remaining || []).map(x => ['remaining', x]))
    .map(([k, x]) => [h('span', { class: k === 'resolved' ? 'better' : k === 'new' ? 'worse' : null }, k), x.id, x.subject ? h('code', {}, x.subject) : '–', x.finding]);
  clear(main);
  append(main, [h('h1', {}, `Compare #${a} (before) and #${b} (after)`),
    h('p', { class: 'muted' }, c.same_node ? `same node ${c.node_a}` : `nodes ${c.node_a} and ${c.node_b}`),
    h('div', { class: 'panel' }, h('h2', {}, 'Metrics'), table(['metric', { t: 'before', n: 1 }, { t: 'after', n: 1 }, { t: 'change', n: 1 }, 'verdict'], mrows, { label: 'metrics' })),
    h('div', { class: 'grid' },
      h('div', { class: 'panel' }, h('h2', {}, 'Hot modules'), table(['', 'module', { t: 'before', n: 1 }, { t: 'after', n: 1 }], mods, { label: 'hot modules compared' })),
      h('div', { class: 'panel' }, h('h2', {}, 'Recommendations'), table(['', 'rule', 'subject', 'finding'], recRows, { label: 'recommendations compared' })))]);
}

/* ---- graph explorer ---- */

const graphCache = { path: null, modules: null, risk: null, cycles: null, heat: null };

/* The project's modules (for the search box and complexity), once per
 * project; the other overlays' data only when that overlay is asked for. */
async function graphBase(path, overlay) {
  if (graphCache.path !== path) {
    const mods = await api('/api/index/modules' + q({ path }));
    graphCache.path = path;
    graphCache.modules = new Map((mods.modules || []).map(m => [m.name, m]));
    graphCache.risk = graphCache.cycles = graphCache.heat = null;
  }
  if (overlay === 'risk' && !graphCache.risk) {
    const risk = await api('/api/knowledge/change_risk' + q({ path, top: 100000 })).catch(() => ({ modules: [] }));
    graphCache.risk = new Map((risk.modules || []).map(m => [m.module, m.score]));
  }
  if (overlay === 'cycles' && !graphCache.cycles) {
    const cycles = await api('/api/knowledge/cycles' + q({ path })).catch(() => ({ cycles: [] }));
    graphCache.cycles = new Set([].concat(...(cycles.cycles || []).map(c => c.modules)));
  }
  if (overlay === 'heat' && !graphCache.heat) {
    // The newest profile, if any (through the list: no 404 when there is none).
    const latest = await api('/api/runtime/profiles' + q({ limit: 1 })).then(l => (l.profiles && l.profiles[0])
      ? api('/api/runtime/profile/' + l.profiles[0].id) : null).catch(() => null);
    const heat = new Map();
    const prof = latest && latest.profile;
    for (const m of (prof && (prof.hot_modules || [])) || []) heat.set(m.module, m.reductions_share);
    graphCache.heat = heat;
  }
  return graphCache;
}

/* Dependencies (outgoing) and dependents (incoming) of `center` to `depth`,
 * breadth first, at most GRAPH_NODE_CAP modules. Edges are those seen while
 * expanding: every edge of an expanded module. */
async function neighbourhood(path, center, depth) {
  const nodes = new Map([[center, 0]]);
  const edges = new Map();
  let truncated = false;
  const walk = async (dir) => {
    let frontier = [center];
    for (let d = 1; d <= depth && frontier.length; d++) {
      // A full neighbourhood adds no module: asking further is wasted time.
      if (nodes.size >= GRAPH_NODE_CAP) { truncated = true; break; }
      const next = [];
      const answers = await Promise.all(frontier.map(m => api(`/api/knowledge/${dir}` + q({ module: m, path }))
        .catch(() => null)));
      answers.forEach((a, i) => {
        if (!a) return;
        for (const x of a[dir] || []) {
          const from = dir === 'dependencies' ? frontier[i] : x.module;
          const to = dir === 'dependencies' ? x.module : frontier[i];
          if (!nodes.has(x.module)) {
            if (nodes.size >= GRAPH_NODE_CAP) { truncated = true; continue; }
            nodes.set(x.module, dir === 'dependencies' ? d : -d);
            next.push(x.module);
          }
          edges.set(from + '\u0000' + to, { from, to, kinds: x.kinds || ['call'], count: x.count });
        }
      });
      frontier = next;
    }
  };
  await walk('dependencies');
  await walk('dependents');
  return { nodes, edges: [...edges.values()], truncated };
}

/* The kind an edge is drawn as: the first of EDGE_KINDS it has that is
 * shown (a call that is also an alias is a call), else 'other' for kinds
 * outside the list. */
function kindOf(e, shown) {
  const ks = e.kinds || [];
  const k = EDGE_KINDS.find(x => ks.includes(x) && shown.has(x));
  if (k) return k;
  return shown.has('other') && ks.some(x => !EDGE_KINDS.includes(x)) ? 'other' : null;
}

function overlayValue(kind, name, base, blast) {
  if (kind === 'heat') { const v = base.heat && base.heat.get(name); return v === undefined ? null : { v, text: fmtPct(v), max: 1 }; }
  if (kind === 'complexity') { const m = base.modules.get(name); return m ? { v: m.complexity, text: 'cx ' + m.complexity, max: null } : null; }
  if (kind === 'risk') { const v = base.risk && base.risk.get(name); return v === undefined ? null : { v, text: 'risk ' + fmtNum(v, 0), max: null }; }
  if (kind === 'blast') return blast && blast.has(name) ? { v: 1, text: 'depth ' + blast.get(name), max: 1 } : null;
  return null;
}

/* The heat level (0-3) of a value relative to the largest drawn. */
function heatLevel(ratio) {
  return ratio <= 0 ? 0 : ratio < 0.34 ? 1 : ratio < 0.67 ? 2 : 3;
}

function drawGraph(wrap, state) {
  const { nb, base, center, shown, overlay, blast, onPick } = state;
  const cols = new Map();
  for (const [name, d] of nb.nodes) { if (!cols.has(d)) cols.set(d, []); cols.get(d).push(name); }
  const keys = [...cols.keys()].sort((a, b) => a - b);
  for (const k of keys) cols.get(k).sort();
  const NW = 190, NH = 38, GX = 80, GY = 12, PAD = 20;
  const pos = new Map();
  const maxRows = Math.max(...keys.map(k => cols.get(k).length));
  const height = PAD * 2 + maxRows * (NH + GY);
  keys.forEach((k, ci) => {
    const list = cols.get(k);
    const off = (height - list.length * (NH + GY)) / 2;
    list.forEach((name, ri) => pos.set(name, { x: PAD + ci * (NW + GX), y: off + ri * (NH + GY) }));
  });
  const width = PAD * 2 + keys.length * (NW + GX) - GX;
  const svg = s('svg', { id: 'graph-svg', width, height, viewBox: `0 0 ${width} ${height}`, role: 'group',
    'aria-label': `neighbourhood of ${center}: ${nb.nodes.size} modules` });
  const defs = s('defs', {});
  const css = getComputedStyle(document.documentElement);
  const colour = k => css.getPropertyValue('--k-' + k).trim() || '#888';
  for (const k of EDGE_KINDS.concat(['other'])) {
    defs.appendChild(s('marker', { id: 'arrow-' + k, viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
      s('path', { d: 'M0 0L10 5L0 10z', fill: colour(k) })));
  }
  svg.appendChild(defs);
  const eg = s('g', { class: 'edges' });
  let edgeCount = 0;
  for (const e of nb.edges) {
    const k = kindOf(e, shown);
    if (!k) continue;
    const a = pos.get(e.from), b = pos.get(e.to);
    if (!a || !b) continue;
    edgeCount++;
    const x1 = a.x + NW, y1 = a.y + NH / 2, x2 = b.x, y2 = b.y + NH / 2;
    const back = x2 <= x1;
    const d = back ? `M${a.x + NW / 2} ${a.y + NH} C${a.x + NW / 2} ${a.y + NH + 40}, ${b.x + NW / 2} ${b.y + NH + 40}, ${b.x + NW / 2} ${b.y + NH}`
      : `M${x1} ${y1} C${x1 + GX / 2} ${y1}, ${x2 - GX / 2} ${y2}, ${x2} ${y2}`;
    eg.appendChild(s('path', { class: 'edge', d, stroke: colour(k), 'stroke-dasharray': EDGE_DASH[k] || null, 'marker-end': `url(#arrow-${k})`, 'data-kind': k },
      s('title', {}, `${e.from} → ${e.to}: ${(e.kinds || []).join(', ')}${e.count ? ' (' + e.count + ')' : ''}`)));
  }
  svg.appendChild(eg);
  const vals = [...nb.nodes.keys()].map(n => overlayValue(overlay, n, base, blast)).filter(Boolean);
  const vmax = Math.max(1e-9, ...vals.map(v => v.max || v.v));
  const ng = s('g', { class: 'nodes' });
  for (const [name] of nb.nodes) {
    const p = pos.get(name);
    const ov = overlayValue(overlay, name, base, blast);
    const inCycle = !!base.cycles && base.cycles.has(name);
    const cls = ['node', name === center ? 'center' : '', overlay === 'cycles' && inCycle ? 'cycle' : '',
      overlay === 'blast' && ov ? 'blast' : '', state.selected === name ? 'selected' : ''].join(' ').trim();
    const label = name.length > 28 ? name.slice(0, 27) + '…' : name;
    const sub = overlay === 'cycles' ? (inCycle ? '↻ in a cycle' : '') : ov ? ov.text : '';
    const d = nb.nodes.get(name);
    const g = s('g', { class: cls, transform: `translate(${p.x},${p.y})`, tabindex: 0, role: 'button', 'data-module': name,
      'aria-label': `${name}${d < 0 ? ', depends on it at depth ' + -d : d > 0 ? ', dependency at depth ' + d : ', centre'}${sub ? ', ' + sub : ''}` },
      s('title', {}, name), s('rect', { width: NW, height: NH, rx: 6 }),
      s('text', { x: 8, y: 15 }, label), s('text', { x: 8, y: 30, class: 'sub' }, sub));
    if (ov && overlay !== 'blast') g.classList.add('heat' + heatLevel(ov.v / vmax));
    g.addEventListener('click', () => onPick(name));
    g.addEventListener('keydown', ev => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); onPick(name); } });
    ng.appendChild(g);
  }
  svg.appendChild(ng);
  svg.setAttribute('data-centre', center);
  svg.setAttribute('data-depth', String(state.depth));
  svg.setAttribute('data-nodes', String(nb.nodes.size));
  svg.setAttribute('data-edges', String(edgeCount));
  // Fit the width when that keeps labels readable (at most a third smaller),
  // else keep the natural size and let the frame scroll.
  const room = wrap.clientWidth - 2;
  if (room > 0 && width > room && width <= room * 1.5) {
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    svg.style.width = '100%';
    svg.style.height = 'auto';
  }
  clear(wrap).appendChild(svg);
}

async function moduleDetails(panel, path, name, recentre, onBlast) {
  clear(panel).appendChild(h('p', { class: 'muted' }, 'loading ' + name + '…'));
  let d;
  try { d = await api('/api/index/module_details' + q({ module: name, path })); } catch (e) {
    clear(panel).appendChild(h('p', {}, h('code', {}, name), ': ', e.message)); return;
  }
  const fnBox = h('div', { id: 'function-details' });
  const fns = (d.functions || []).map(f => {
    const b = h('button', { type: 'button', class: 'ghost' }, `${f.name}/${f.arity}`);
    b.addEventListener('click', async () => {
      clear(fnBox).appendChild(h('p', { class: 'muted' }, 'loading…'));
      try {
        const fd = await api('/api/knowledge/function_details' + q({ module: name, function: `${f.name}/${f.arity}`, path }));
        const who = l => (l || []).map(c => h('li', {}, h('code', {}, c.module ? `${c.module}.${c.name || c.function}/${c.arity}` : JSON.stringify(c))));
        const blastBtn = h('button', { type: 'button', id: 'function-blast' }, 'Show its blast radius on the graph');
        blastBtn.addEventListener('click', () => onBlast(name, `${f.name}/${f.arity}`));
        clear(fnBox);
        append(fnBox, [h('h3', {}, h('code', {}, `${name}.${f.name}/${f.arity}`)), blastBtn,
          h('p', {}, `${fd.visibility || f.visibility || ''} ${fd.kind || ''}, line ${fd.line || f.line || '?'}, cyclomatic ${fd.cyclomatic ?? f.cyclomatic ?? '–'}, cognitive ${fd.cognitive ?? f.cognitive ?? '–'}`),
          h('h3', {}, `callers (${(fd.callers || []).length})`), h('ul', {}, who(fd.callers)),
          h('h3', {}, `callees (${(fd.callees || []).length})`), h('ul', {}, who(fd.callees))]);
      } catch (e) { clear(fnBox).appendChild(h('p', {}, e.message)); }
    });
    return [b, f.visibility || '', String(f.cyclomatic ?? '–'), String(f.line ?? '')];
  });
  const again = h('button', { type: 'button' }, 'Centre the graph here');
  again.addEventListener('click', () => recentre(name));
  clear(panel);
  append(panel, [h('h2', { id: 'details-title' }, h('code', {}, d.name || name)),
    h('p', { class: 'muted' }, `${d.file || 'no file'}${d.line_start ? ':' + d.line_start + '–' + d.line_end : ''}, ${d.kind || 'module'}`),
    h('p', {}, `${(d.dependents || []).length} dependents, ${(d.dependencies || []).length} dependencies`),
    again,
    h('h3', {}, `functions (${(d.functions || []).length})`),
    table(['function', 'visibility', { t: 'cc', n: 1 }, { t: 'line', n: 1 }], fns, { label: 'functions' }), fnBox]);
}

async function pageGraph(main, params) {
  const projects = (await api('/api/projects')).projects || [];
  const path = params.get('path') || (projects[0] && projects[0].path) || '';
  clear(main);
  if (!path) { append(main, [h('h1', {}, 'Graph'), h('p', {}, 'No project indexed yet: POST /api/index/scan or run giulia index.')]); return; }
  const t0 = performance.now();
  const overlay = params.get('overlay') || 'none';
  const depth = Math.max(1, Math.min(4, Number(params.get('depth')) || 1));
  let center = params.get('module') || '';
  // The neighbourhood of a named module is asked for at once, alongside the
  // module list (the first question to a project also loads its graph).
  const early = center ? neighbourhood(path, center, depth).catch(() => null) : null;
  const base = await graphBase(path, overlay);
  const names = [...base.modules.keys()].sort();
  if (!center || !base.modules.has(center)) {
    // The most depended-upon project module is a good first view.
    center = names.slice().sort((a, b) => ((base.modules.get(b).in_degree || 0) - (base.modules.get(a).in_degree || 0)))[0] || names[0] || '';
  }
  const shown = new Set((params.get('kinds') || EDGE_KINDS.concat(['other']).join(',')).split(','));
  const go = changes => {
    const p = new URLSearchParams({ path, module: center, depth, overlay, kinds: [...shown].join(',') });
    for (const [k, v] of Object.entries(changes)) p.set(k, v);
    location.hash = '#/graph?' + p.toString();
  };
  const dl = h('datalist', { id: 'module-names' }, names.map(n => h('option', { value: n })));
  const search = h('input', { id: 'module-search', list: 'module-names', value: center, size: 28, 'aria-label': 'module', autocomplete: 'off' });
  const form = h('form', { class: 'inline', role: 'search' },
    h('label', {}, 'project', h('select', { id: 'project', onchange: ev => { location.hash = '#/graph?' + new URLSearchParams({ path: ev.target.value }); } },
      projects.map(p => h('option', { value: p.path, selected: p.path === path }, p.path)))),
    h('label', {}, 'module', search), dl,
    h('label', {}, 'depth', h('select', { id: 'depth', onchange: ev => go({ depth: ev.target.value }) },
      [1, 2, 3, 4].map(d => h('option', { value: d, selected: d === depth }, String(d))))),
    h('label', {}, 'overlay', h('select', { id: 'overlay', onchange: ev => go({ overlay: ev.target.value }) },
      [['none', 'none'], ['heat', 'heat (latest profile)'], ['complexity', 'complexity'], ['risk', 'change risk'], ['blast', 'blast radius'], ['cycles', 'cycles']]
        .map(([v, l]) => h('option', { value: v, selected: v === overlay }, l)))),
    h('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', ev => { ev.preventDefault(); if (search.value.trim()) go({ module: search.value.trim() }); });
  const kinds = h('fieldset', { class: 'legend' }, h('legend', {}, 'edge kinds (colour and dash)'),
    EDGE_KINDS.concat(['other']).map(k => {
      const cb = h('input', { type: 'checkbox', checked: shown.has(k), 'data-kind': k });
      cb.addEventListener('change', () => { if (cb.checked) shown.add(k); else shown.delete(k); go({ kinds: [...shown].join(',') }); });
      const css = getComputedStyle(document.documentElement);
      return h('label', { class: 'check' }, cb, s('svg', { width: 28, height: 10, 'aria-hidden': 'true' },
        s('line', { x1: 0, y1: 5, x2: 28, y2: 5, stroke: css.getPropertyValue('--k-' + k).trim(), 'stroke-width': 2, 'stroke-dasharray': EDGE_DASH[k] || null })), k);
    }));
  const wrap = h('div', { class: 'graph-wrap', id: 'graph' }, h('p', { class: 'muted' }, 'loading…'));
  const details = h('aside', { class: 'panel', id: 'details', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Select a module (click, or Tab then Enter) for its functions.'));
  const note = h('p', { class: 'muted', id: 'graph-note' });
  append(main, [h('h1', {}, 'Graph explorer'), h('div', { class: 'panel' }, form, kinds), note,
    h('div', { class: 'graph-layout' }, wrap, details)]);
  if (!center) { clear(wrap).appendChild(h('p', {}, 'The project has no module.')); return; }
  const nb = (early && center === params.get('module') && await early) || await neighbourhood(path, center, depth);
  let blast = null;
  if (overlay === 'blast') {
    const im = await api('/api/knowledge/impact' + q({ module: center, depth, path })).catch(() => null);
    blast = new Map(((im && im.dependents) || []).map(x => [x.module, x.depth]));
  }
  const state = { nb, base, center, depth, shown, overlay, blast, selected: null, onPick: null };
  state.onPick = name => {
    state.selected = name;
    drawGraph(wrap, state);
    const el = wrap.querySelector(`[data-module="${CSS.escape(name)}"]`);
    if (el) el.focus();
    moduleDetails(details, path, name, m => go({ module: m }), showFunctionBlast);
  };
  // A function's blast radius: the modules of its callers (to the chosen
  // depth), outlined on the graph with their depth written on them.
  const showFunctionBlast = async (mod, fn) => {
    const im = await api('/api/knowledge/impact' + q({ module: mod, function: fn, depth, path })).catch(e => { say(e.message); return null; });
    if (!im) return;
    const m = new Map();
    for (const c of im.callers || []) if (c.module && c.module !== mod && (!m.has(c.module) || m.get(c.module) > c.depth)) m.set(c.module, c.depth);
    state.blast = m;
    state.overlay = 'blast';
    drawGraph(wrap, state);
    const shown = [...m.keys()].filter(x => nb.nodes.has(x)).length;
    note.textContent = `Blast radius of ${mod}.${fn} within depth ${depth}: ${(im.callers || []).length} callers in ${m.size} other modules (${shown} of them drawn here, outlined).`;
  };
  drawGraph(wrap, state);
  const ms = performance.now() - t0;
  wrap.setAttribute('data-render-ms', ms.toFixed(1));
  wrap.setAttribute('data-drawn-at', performance.now().toFixed(1)); /* since navigation (bench) */
  note.textContent = `${nb.nodes.size} modules and ${wrap.querySelector('svg').getAttribute('data-edges')} edges within depth ${depth} of ${center}` +
    (nb.truncated ? ` (cut at ${GRAPH_NODE_CAP} modules: lower the depth)` : '') + `; dependents on the left, dependencies on the right; drawn in ${ms.toFixed(0)} ms.`;
}

/* ---- router, theme, token ---- */

async function route() {
  const main = document.getElementById('main');
  const hash = location.hash || '#/live';
  const [pathPart, query] = hash.slice(1).split('?');
  const parts = pathPart.split('/').filter(Boolean).map(decodeURIComponent);
  const page = parts[0] || 'live';
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.page === (page === 'profile' || page === 'compare' ? 'profiles' : ['process', 'ets', 'ports', 'apps', 'memory'].includes(page) ? 'live' : page)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (page !== 'live' && live.abort) { live.abort.abort(); live.abort = null; }
  say('');
  try {
    if (page === 'live') await pageLive(main, parts[1] || null);
    else if (page === 'profiles') await pageProfiles(main);
    else if (page === 'profile') await pageProfile(main, parts[1]);
    else if (page === 'compare') await pageCompare(main, parts[1], parts[2]);
    else if (page === 'graph') await pageGraph(main, new URLSearchParams(query || ''));
    else if (page === 'process' && parts[1] && parts[2]) await pageProcess(main, parts[1], parts[2]);
    else if (page === 'ets' && parts[1]) await pageEts(main, parts[1]);
    else if (page === 'ports' && parts[1]) await pagePorts(main, parts[1]);
    else if (page === 'apps' && parts[1]) await pageApps(main, parts[1], parts[2] || null);
    else if (page === 'memory' && parts[1]) await pageMemory(main, parts[1]);
    else clear(main).appendChild(h('p', {}, 'No such page.'));
    document.body.setAttribute('data-page', page);
  } catch (e) {
    say(e.message);
  }
}

function applyTheme(t) {
  document.documentElement.setAttribute('data-theme', t);
  document.getElementById('theme').textContent = t === 'dark' ? 'Light theme' : 'Dark theme';
}

function init() {
  const saved = localStorage.getItem(THEME_KEY);
  applyTheme(saved || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
  document.getElementById('theme').addEventListener('click', () => {
    const t = document.documentElement.getAttribute('data-theme') === 'dark' ? 'light' : 'dark';
    localStorage.setItem(THEME_KEY, t);
    applyTheme(t);
    route();
  });
  document.getElementById('token-form').addEventListener('submit', () => {
    sessionStorage.setItem(TOKEN_KEY, document.getElementById('token-input').value);
    document.getElementById('token-input').value = '';
    route();
  });
  window.addEventListener('hashchange', route);
  route();
}

document.addEventListener('DOMContentLoaded', init);
