// The dashboard in a real browser: Debian's chromium, headless, driven by
// puppeteer-core (installed by scripts/deps.sh under build/browser-client),
// against a real `giulia serve` and a real observed node. Run by
// tests/e2e/dash.c, which starts everything and passes one JSON argument:
//
//   {"puppeteer": DIR, "chromium": PATH, "base": "http://127.0.0.1:PORT",
//    "artefacts": DIR, "node": NAME, "cookie": C, "trace": "M1,M2", "project": P,
//    "graph": {"path": P, "module": M, "depth": 1, "nodes": N, "edges": E, "click": M2},
//    "hostile": {"path": P, "module": M,       (optional: a crafted project's module,
//                "function": F, "process": R, "alert": A}}  and names on the node)
//
// Prints one line per check ("ok NAME" or "FAIL NAME: why") and a last line
// "RESULT {json}"; exits 1 when a check failed. Screenshots go to artefacts/.
import { createRequire } from 'node:module';
import path from 'node:path';

const cfg = JSON.parse(process.argv[2]);
const require = createRequire(path.join(cfg.puppeteer, 'package.json'));
const puppeteer = require('puppeteer-core');

let failed = 0;
const result = {};
function check(name, cond, why) {
  if (cond) console.log('ok ' + name);
  else { failed++; console.log('FAIL ' + name + ': ' + why); }
}

const browser = await puppeteer.launch({
  executablePath: cfg.chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${cfg.artefacts}/chromium-profile`],
});
const origin = new URL(cfg.base).origin;
const external = [], consoleErrors = [];
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 1000 });
  page.on('request', r => {
    const u = r.url();
    if (!u.startsWith(origin + '/') && !u.startsWith('data:')) external.push(u);
  });
  page.on('console', m => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', e => consoleErrors.push(String(e)));
  let dialogs = 0;
  page.on('dialog', d => { dialogs++; d.dismiss().catch(() => {}); });
  // Markup from a name that became markup: elements that run or load
  // something, any on* attribute (the page sets none: its handlers are
  // listeners), alert() calls and dialogs.
  const injected = async () => dialogs + await page.evaluate(() => window.__xss +
    document.querySelectorAll('main img, main script, main iframe, main object, main embed').length +
    [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => /^on/i.test(a.name))).length);
  // Waits until every [selector, text] pair holds (the element's text
  // contains the text), up to `ms`; answers which did not.
  const textsShown = async (pairs, ms) => {
    // a long name cut in its middle is whole in its tooltip
    await page.waitForFunction(ps => ps.every(([sel, t]) =>
      [...document.querySelectorAll(sel)].some(e => e.textContent.includes(t) ||
        [...e.querySelectorAll('[title]')].some(x => x.getAttribute('title').includes(t)))),
    { timeout: ms, polling: 500 }, pairs).catch(() => {});
    return page.evaluate(ps => ps.filter(([sel, t]) =>
      ![...document.querySelectorAll(sel)].some(e => e.textContent.includes(t) ||
        [...e.querySelectorAll('[title]')].some(x => x.getAttribute('title').includes(t)))).map(([sel]) => sel), pairs);
  };
  const hostileModuleText = cfg.hostile && cfg.hostile.module.replace(/^:/, '');
  await page.evaluateOnNewDocument(() => {
    window.__xss = 0;
    window.alert = () => { window.__xss++; };
  });
  const graphDrawn = async (centre, depth) => page.waitForFunction((c, d) => {
    const g = document.getElementById('graph-svg');
    return g && g.getAttribute('data-centre') === c && g.getAttribute('data-depth') === String(d);
  }, { timeout: 30000 }, centre, depth).catch(() => {});
  const shot = async (name) => {
    for (const [w, h] of [[1400, 1000], [390, 844]]) {
      await page.setViewport({ width: w, height: h });
      await new Promise(r => setTimeout(r, 150));
      await page.screenshot({ path: `${cfg.artefacts}/${name}-${w}.png`, fullPage: w === 390 ? false : true });
    }
    await page.setViewport({ width: 1400, height: 1000 });
  };

  // The page and its policy.
  const first = await page.goto(cfg.base + '/#/live', { waitUntil: 'domcontentloaded' });
  const csp = first.headers()['content-security-policy'] || '';

  // Start the observation from the page's form (the monitor's own route,
  // with its caps): it then shows that node's live page.
  await page.waitForSelector('#observe-form');
  const fill = async (name, value) => { await page.click(`#observe-form [name="${name}"]`, { clickCount: 3 }); await page.keyboard.type(value); };
  await fill('node', cfg.node);
  await fill('cookie', cfg.cookie);
  await fill('interval_ms', '1000');
  await fill('trace_modules', cfg.trace);
  await fill('project', cfg.project);
  await page.click('#observe-form button[type="submit"]');
  await page.waitForFunction(n => location.hash === '#/live/' + encodeURIComponent(n), { timeout: 60000 }, cfg.node).catch(() => {});
  const started = await page.evaluate(async n => {
    const s = await (await fetch('/monitor/api/monitor/observe/status')).json();
    return (s.observations || []).some(o => o.node === n && o.state === 'running');
  }, cfg.node);
  check('start-from-page', started, 'no observation of ' + cfg.node + ' runs after the form: ' + await page.$eval('#status', s => s.textContent));
  check('csp', /default-src 'none'/.test(csp) && /script-src 'self'/.test(csp) && /connect-src 'self'/.test(csp) && !/https?:/.test(csp),
    'Content-Security-Policy is ' + JSON.stringify(csp));

  // Live page: three SSE updates redrawn.
  const t0 = Date.now();
  await page.waitForFunction(() => {
    const a = document.getElementById('live-area');
    return a && Number(a.getAttribute('data-updates') || 0) >= 3;
  }, { timeout: 60000 }).catch(() => {});
  const updates = await page.$eval('#live-area', a => Number(a.getAttribute('data-updates') || 0)).catch(() => 0);
  result.live_updates = updates;
  result.live_wait_ms = Date.now() - t0;
  check('live-updates', updates >= 3, `${updates} SSE updates drawn in 60 s`);
  const tiles = await page.$$eval('.tile', t => t.length).catch(() => 0);
  check('live-tiles', tiles >= 7, `${tiles} metric tiles`);
  const procRows = await page.$$eval('table[aria-label="top processes by reductions"] tbody tr', r => r.length).catch(() => 0);
  check('live-top-processes', procRows >= 1, 'no row in the top processes by CPU share');
  // Hostile names from the node stay text on the live page: the registered
  // process in the top processes, its module among the hot modules, its
  // function among the traced ones, the rule file's summary in the alerts.
  if (cfg.hostile && cfg.hostile.process) {
    const missing = await textsShown([
      ['table[aria-label^="top processes by"]', cfg.hostile.process],
      ['table[aria-label="hot modules"]', hostileModuleText],
      ['table[aria-label="traced functions"]', '.' + cfg.hostile.function + '/1'],
      ['ul.alerts', cfg.hostile.alert]], 30000);
    const bad = await injected();
    check('hostile-live', missing.length === 0 && bad === 0,
      `not shown as text in ${JSON.stringify(missing)}; ${bad} injected element(s) or dialog(s)`);
  }
  await shot('live');

  // Names in the process tables read whole: one line each (cut in the
  // middle with the full name in a tooltip, never broken inside a word),
  // and at 390 px the table fits the screen with its numbers (the least
  // important columns dropped first).
  const procTable = 'table[aria-label="top processes by reductions"]';
  const broken = await page.$$eval('table[aria-label^="top processes by"] code.nm',
    cs => cs.filter(c => c.getClientRects().length > 1).map(c => c.textContent)).catch(() => ['?']);
  check('names-one-line', broken.length === 0, `names broken over lines: ${JSON.stringify(broken)}`);
  // One process: a click on a row of the top processes opens its page, the
  // back link returns to the live page; at 1400 and at 390 px.
  for (const [w, hgt] of [[1400, 1000], [390, 844]]) {
    await page.setViewport({ width: w, height: hgt });
    // a snapshot drawn at this width
    const seen = await page.$eval('#live-area', a => Number(a.getAttribute('data-updates') || 0)).catch(() => 0);
    await page.waitForFunction(n => Number(document.getElementById('live-area').getAttribute('data-updates') || 0) > n,
      { timeout: 30000 }, seen).catch(() => {});
    await page.waitForSelector(procTable + ' tbody tr a', { timeout: 30000 }).catch(() => {});
    if (w === 390) {
      const fit = await page.$eval(procTable, t => {
        const heads = [...t.querySelectorAll('th')].filter(x => getComputedStyle(x).display !== 'none').map(x => x.textContent);
        return { over: t.parentElement.scrollWidth - t.parentElement.clientWidth, heads };
      }).catch(() => ({ over: -1, heads: [] }));
      check('live-table-fits-390', fit.over <= 0 && fit.heads.includes('reductions/s') && fit.heads.includes('process'),
        `${fit.over} px cut; columns shown ${JSON.stringify(fit.heads)}`);
    }
    const href = await page.$eval(procTable + ' tbody tr a', a => a.getAttribute('href')).catch(() => null);
    await page.click(procTable + ' tbody tr a').catch(() => {});
    await page.waitForFunction(() => document.body.getAttribute('data-page') === 'process' &&
      document.getElementById('process-summary'), { timeout: 30000 }).catch(() => {});
    const pid = await page.$eval('main h1 code', c => c.textContent).catch(() => null);
    const terms = await page.$$eval('#process-summary dt', d => d.map(x => x.textContent)).catch(() => []);
    check(`process-page-${w}`, !!href && !!pid && href.endsWith('/' + encodeURIComponent(pid)) &&
      ['executing in', 'links', 'monitors', 'reductions/s', 'message queue'].every(t => terms.includes(t)),
      `clicked ${href}, page of ${pid} with ${JSON.stringify(terms)}`);
    const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    check(`process-page-fits-${w}`, over <= 0, `the page is ${over} px wider than the screen`);
    await page.screenshot({ path: `${cfg.artefacts}/process-${w}.png`, fullPage: w !== 390 });
    await page.click('#process-back').catch(() => {});
    await page.waitForFunction(n => location.hash === '#/live/' + encodeURIComponent(n) &&
      document.querySelector('table[aria-label="top processes by reductions"] tbody tr a'),
    { timeout: 30000 }, cfg.node).catch(() => {});
    check(`process-back-${w}`, await page.evaluate(() => document.body.getAttribute('data-page')) === 'live' &&
      !!await page.$(procTable + ' tbody tr a'), 'the back link did not return to the live page with its table');
  }
  await page.setViewport({ width: 1400, height: 1000 });
  // The node's ETS tables, from the live page's link.
  await page.click('#ets-link').catch(() => {});
  await page.waitForSelector('table[aria-label="ETS tables"] tbody tr', { timeout: 30000 }).catch(() => {});
  const etsRows = await page.$$eval('table[aria-label="ETS tables"] tbody tr', r => r.length).catch(() => 0);
  check('ets-page', etsRows >= 5, `${etsRows} ETS tables listed`);
  await shot('ets');
  await page.click('#ets-back').catch(() => {});
  await page.waitForSelector(procTable + ' tbody tr a', { timeout: 30000 }).catch(() => {});
  // Its ports and sockets over a window (every distributed node has a TCP
  // socket at least: its distribution listener).
  await page.click('#ports-link').catch(() => {});
  await page.waitForSelector('table[aria-label="ports"] tbody tr', { timeout: 30000 }).catch(() => {});
  const portsText = await page.$eval('#ports-summary', p => p.textContent).catch(() => '');
  const tcpRows = await page.$$eval('table[aria-label="ports"] tbody tr', r => r.filter(x => /tcp/.test(x.textContent)).length).catch(() => 0);
  check('ports-page', /file descriptors of \d+/.test(portsText) && tcpRows >= 1, `${JSON.stringify(portsText)}, ${tcpRows} tcp rows`);
  await shot('ports');
  await page.click('#ports-back').catch(() => {});
  await page.waitForSelector(procTable + ' tbody tr a', { timeout: 30000 }).catch(() => {});
  // Its applications, then one's supervision tree (kernel runs everywhere),
  // collapsed below its top supervisor.
  await page.click('#apps-link').catch(() => {});
  await page.waitForSelector('table[aria-label="applications"] tbody tr a', { timeout: 30000 }).catch(() => {});
  const appNames = await page.$$eval('table[aria-label="applications"] tbody tr a', a => a.map(x => x.textContent)).catch(() => []);
  await page.goto(cfg.base + '/#/apps/' + encodeURIComponent(cfg.node) + '/kernel', { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('#sup-tree', { timeout: 30000 }).catch(() => {});
  const tree = await page.evaluate(() => {
    const t = document.getElementById('sup-tree');
    return t ? { items: t.querySelectorAll('li').length, open: t.querySelectorAll('details[open]').length,
      closed: t.querySelectorAll('details:not([open])').length } : null;
  });
  check('apps-tree', appNames.includes('kernel') && tree && tree.items > 3 && tree.open === 1 && tree.closed >= 1,
    `applications ${JSON.stringify(appNames)}, tree ${JSON.stringify(tree)}`);
  await shot('apps');
  await page.goto(cfg.base + '/#/live/' + encodeURIComponent(cfg.node), { waitUntil: 'domcontentloaded' });
  await page.waitForSelector(procTable + ' tbody tr a', { timeout: 30000 }).catch(() => {});
  // Its memory: the allocators, then binary leaks only once the forced GC is ticked.
  await page.click('#memory-link').catch(() => {});
  await page.waitForSelector('table[aria-label="allocators"] tbody tr', { timeout: 30000 }).catch(() => {});
  const allocRows = await page.$$eval('table[aria-label="allocators"] tbody tr', r => r.filter(x => /binary_alloc/.test(x.textContent)).length).catch(() => 0);
  const runDisabled = await page.$eval('#binleak-run', b => b.disabled).catch(() => false);
  await page.click('#binleak-sure').catch(() => {});
  await page.click('#binleak-run').catch(() => {});
  await page.waitForSelector('#binleak-summary', { timeout: 30000 }).catch(() => {});
  const leakText = await page.$eval('#binleak-summary', p => p.textContent).catch(() => '');
  check('memory-page', allocRows === 1 && runDisabled && /processes collected/.test(leakText), `${allocRows} binary_alloc rows, run disabled ${runDisabled}, ${JSON.stringify(leakText)}`);
  await shot('memory');
  await page.click('#memory-back').catch(() => {});
  await page.waitForSelector(procTable + ' tbody tr a', { timeout: 30000 }).catch(() => {});

  // Graph explorer: the neighbourhood's counts, then a click opens details.
  const g = cfg.graph;
  const gq = new URLSearchParams({ path: g.path, module: g.module, depth: String(g.depth) });
  await page.goto(cfg.base + '/#/graph?' + gq.toString(), { waitUntil: 'domcontentloaded' });
  await graphDrawn(g.module, g.depth);
  const counts = await page.$eval('#graph-svg', s => [Number(s.getAttribute('data-nodes')), Number(s.getAttribute('data-edges')),
    s.querySelectorAll('.node').length, s.querySelectorAll('.edge').length]).catch(() => [0, 0, 0, 0]);
  result.graph = counts;
  result.graph_render_ms = await page.$eval('#graph', w => Number(w.getAttribute('data-render-ms'))).catch(() => null);
  check('graph-counts', counts[0] === g.nodes && counts[1] === g.edges && counts[2] === g.nodes && counts[3] === g.edges,
    `nodes/edges ${counts.join('/')} (attribute, attribute, drawn, drawn), expected ${g.nodes}/${g.edges}`);
  const target = `[data-module="${g.click.replace(/"/g, '\\"')}"]`;
  await page.click('#graph-svg ' + target).catch(() => {});
  await page.waitForFunction(m => { const t = document.getElementById('details-title'); return t && t.textContent === m; },
    { timeout: 15000 }, g.click).catch(() => {});
  const title = await page.$eval('#details-title', t => t.textContent).catch(() => null);
  check('graph-click-details', title === g.click, `details show ${JSON.stringify(title)}, expected ${g.click}`);
  // A function of it: its callers and callees, then its blast radius on the graph.
  const fnButton = await page.$$('#details table[aria-label="functions"] button');
  let blastCount = -1, fnTitle = null;
  for (const b of fnButton) {
    await b.click();
    await page.waitForSelector('#function-blast', { timeout: 15000 }).catch(() => {});
    fnTitle = await page.$eval('#function-details h3 code', c => c.textContent).catch(() => null);
    await page.click('#function-blast').catch(() => {});
    await page.waitForFunction(() => /^Blast radius of /.test(document.getElementById('graph-note').textContent), { timeout: 15000 }).catch(() => {});
    blastCount = await page.$$eval('#graph-svg .node.blast', n => n.length).catch(() => -1);
    if (blastCount > 0) break;
  }
  result.function_blast = { function: fnTitle, outlined: blastCount };
  check('function-blast-radius', blastCount > 0, `no caller module outlined (last: ${fnTitle}, ${blastCount})`);
  // Keyboard only: Tab from the module box until a graph node has the focus,
  // then Enter opens it.
  await page.focus('#module-search');
  let onNode = null;
  for (let i = 0; i < 60 && !onNode; i++) {
    await page.keyboard.press('Tab');
    onNode = await page.evaluate(() => document.activeElement && document.activeElement.closest &&
      document.activeElement.closest('#graph-svg') ? document.activeElement.getAttribute('data-module') : null);
  }
  await page.keyboard.press('Enter');
  await page.waitForFunction(m => { const t = document.getElementById('details-title'); return t && t.textContent === m; },
    { timeout: 15000 }, onNode).catch(() => {});
  const opened = await page.$eval('#details-title', t => t.textContent).catch(() => null);
  check('graph-keyboard', !!onNode && opened === onNode, `Tab reached ${onNode}, Enter opened ${opened}`);
  // The picture for the README: two levels, complexity as heat, details open.
  const g2 = new URLSearchParams({ path: g.path, module: g.module, depth: '2', overlay: 'complexity' });
  await page.goto(cfg.base + '/#/graph?' + g2.toString(), { waitUntil: 'domcontentloaded' });
  await graphDrawn(g.module, 2);
  await page.click('#graph-svg ' + target).catch(() => {});
  await page.waitForSelector('#details-title', { timeout: 15000 }).catch(() => {});
  await shot('graph');

  // Hostile names stay text: on the graph, in details.
  if (cfg.hostile) {
    const hq = new URLSearchParams({ path: cfg.hostile.path, module: cfg.hostile.module, depth: '1' });
    await page.goto(cfg.base + '/#/graph?' + hq.toString(), { waitUntil: 'domcontentloaded' });
    await graphDrawn(cfg.hostile.module, 1);
    const names = await page.$$eval('#graph-svg .node', n => n.map(x => x.getAttribute('data-module')));
    await page.click(`#graph-svg [data-module="${cfg.hostile.module.replace(/"/g, '\\"')}"]`).catch(() => {});
    await page.waitForFunction(m => { const t = document.getElementById('details-title'); return t && t.textContent === m; },
      { timeout: 15000 }, cfg.hostile.module).catch(() => {});
    const shown = await page.$eval('#details-title', t => t.textContent).catch(() => null);
    const bad = await injected();
    check('hostile-escaped', names.includes(cfg.hostile.module) && shown === cfg.hostile.module && bad === 0,
      `nodes ${JSON.stringify(names)}, details ${JSON.stringify(shown)}, injected ${bad}`);
  }

  // Stop the observation from the page: it lands on the profile, which shows
  // every recommendation.
  await page.goto(cfg.base + '/#/live/' + encodeURIComponent(cfg.node), { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('#stop-observe', { timeout: 30000 });
  // Enough snapshots for the rules to see the workload (the catalog's
  // registry needs a few windows of traced calls).
  await page.waitForFunction(async n => {
    const r = await fetch('/monitor/api/monitor/observe/status');
    const s = await r.json();
    return (s.observations || []).some(o => o.node === n && o.snapshots >= 15);
  }, { timeout: 60000, polling: 1000 }, cfg.node).catch(() => {});
  await shot('live');
  await page.click('#stop-observe');
  await page.waitForFunction(() => location.hash.startsWith('#/profile/') && document.body.getAttribute('data-page') === 'profile',
    { timeout: 180000 }).catch(() => {});
  const hash = await page.evaluate(() => location.hash);
  const id = (hash.match(/#\/profile\/(\d+)/) || [])[1];
  check('stop-from-page', !!id, 'the page did not open a profile after stop: ' + hash);
  if (id) {
    const api = await page.evaluate(async i => (await (await fetch('/api/runtime/profile/' + i)).json()), id);
    const want = ((api.profile && api.profile.recommendations) || []).map(r => r.id);
    const got = await page.$$eval('#recommendations article.rec', a => a.map(x => x.getAttribute('data-rule')));
    result.recommendations = got;
    check('profile-recommendations', want.length > 0 && JSON.stringify(got) === JSON.stringify(want),
      `page shows ${JSON.stringify(got)}, the profile has ${JSON.stringify(want)}`);
    const charts = await page.$$eval('svg.chart path.series', p => p.length);
    check('profile-charts', charts >= 4, `${charts} series drawn`);
    if (cfg.hostile && cfg.hostile.function) {
      const missing = await textsShown([['main', hostileModuleText], ['main', '.' + cfg.hostile.function + '/1']], 15000);
      const bad = await injected();
      check('hostile-profile', missing.length === 0 && bad === 0,
        `names not shown as text (${missing.length} missing); ${bad} injected element(s) or dialog(s)`);
    }
    await shot('profile');
    await page.goto(cfg.base + '/#/profiles', { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('table[aria-label="profiles"]', { timeout: 15000 }).catch(() => {});
    await shot('profiles');
    await page.goto(cfg.base + `/#/compare/${id}/${id}`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('table[aria-label="metrics"]', { timeout: 15000 }).catch(() => {});
    const mrows = await page.$$eval('table[aria-label="metrics"] tbody tr', r => r.length).catch(() => 0);
    check('compare', mrows > 0, 'no metric row on the compare page');
    if (cfg.hostile && cfg.hostile.function) {
      const missing = await textsShown([['main', hostileModuleText]], 15000);
      const bad = await injected();
      check('hostile-compare', missing.length === 0 && bad === 0,
        `the module not shown as text (${missing.length} missing); ${bad} injected element(s) or dialog(s)`);
    }
  }
  // The other theme renders too (the page starts in the system's).
  const before = await page.evaluate(() => document.documentElement.getAttribute('data-theme'));
  await page.click('#theme');
  const theme = await page.evaluate(() => document.documentElement.getAttribute('data-theme'));
  check('theme-toggle', (before === 'light' && theme === 'dark') || (before === 'dark' && theme === 'light'),
    `theme ${before} became ${theme}`);
  if (id) {
    await page.goto(cfg.base + '/#/profile/' + id, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#recommendations', { timeout: 15000 }).catch(() => {});
    await page.screenshot({ path: `${cfg.artefacts}/profile-${theme}-1400.png` });
  }

  check('no-console-errors', consoleErrors.length === 0, JSON.stringify(consoleErrors.slice(0, 5)));
  check('same-origin-only', external.length === 0, JSON.stringify(external.slice(0, 5)));
} catch (e) {
  failed++;
  console.log('FAIL exception: ' + (e && e.stack || e));
} finally {
  await browser.close();
}
console.log('RESULT ' + JSON.stringify(result));
process.exit(failed ? 1 : 0);
