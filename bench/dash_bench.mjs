// The dashboard's weight and the graph explorer's first render, measured in
// headless chromium (Debian's) through puppeteer-core (build/browser-client).
// Run by bench/bench_dash.sh with one JSON argument:
//   {"puppeteer": DIR, "chromium": PATH, "base": URL, "path": PROJECT,
//    "modules": [M, ...], "depth": [1, 2], "rounds": N}
// Prints one JSON object: the first load's bytes on the wire (gzip) and
// decoded, per request; per module and depth the median time from
// navigation to the drawn SVG (and the page's own count from the route's
// start), the node and edge counts.
import { createRequire } from 'node:module';
import path from 'node:path';

const cfg = JSON.parse(process.argv[2]);
const require = createRequire(path.join(cfg.puppeteer, 'package.json'));
const puppeteer = require('puppeteer-core');
const browser = await puppeteer.launch({ executablePath: cfg.chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions'] });
const out = { weight: null, graph: [] };
const median = a => { const s = a.slice().sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
try {
  // First load: a fresh page, no cache; the dashboard's own files only (the
  // API answers depend on the data and are listed apart).
  const page = await browser.newPage();
  const cdp = await page.createCDPSession();
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const reqs = new Map();
  cdp.on('Network.responseReceived', e => reqs.set(e.requestId, { url: e.response.url, encoding: e.response.headers['Content-Encoding'] || e.response.headers['content-encoding'] || '' }));
  cdp.on('Network.loadingFinished', e => { const r = reqs.get(e.requestId); if (r) r.wire = e.encodedDataLength; });
  cdp.on('Network.dataReceived', e => { const r = reqs.get(e.requestId); if (r) r.decoded = (r.decoded || 0) + e.dataLength; });
  await page.goto(cfg.base + '/#/profiles', { waitUntil: 'networkidle0' });
  const list = [...reqs.values()];
  const assets = list.filter(r => !new URL(r.url).pathname.startsWith('/api/') && !new URL(r.url).pathname.startsWith('/monitor/'));
  out.weight = {
    assets_wire: assets.reduce((a, r) => a + (r.wire || 0), 0),
    assets_decoded: assets.reduce((a, r) => a + (r.decoded || 0), 0),
    all_wire: list.reduce((a, r) => a + (r.wire || 0), 0),
    requests: list.map(r => ({ path: new URL(r.url).pathname, wire: r.wire, decoded: r.decoded, encoding: r.encoding })),
  };
  await page.close();

  for (const module of cfg.modules) {
    for (const depth of cfg.depth) {
      const nav = [], own = [];
      let counts = null;
      for (let i = 0; i < cfg.rounds; i++) {
        const p = await browser.newPage();
        await p.setViewport({ width: 1400, height: 1000 });
        const q = new URLSearchParams({ path: cfg.path, module, depth: String(depth) });
        await p.goto(cfg.base + '/#/graph?' + q.toString(), { waitUntil: 'domcontentloaded' });
        await p.waitForSelector('#graph-svg', { timeout: 120000 });
        const m = await p.evaluate(() => ({ nav: Number(document.getElementById('graph').getAttribute('data-drawn-at')), own: Number(document.getElementById('graph').getAttribute('data-render-ms')),
          nodes: Number(document.getElementById('graph-svg').getAttribute('data-nodes')),
          edges: Number(document.getElementById('graph-svg').getAttribute('data-edges')) }));
        nav.push(m.nav); own.push(m.own); counts = [m.nodes, m.edges];
        await p.close();
      }
      out.graph.push({ module, depth, nodes: counts[0], edges: counts[1], navigation_to_svg_ms: median(nav), route_to_svg_ms: median(own), rounds: cfg.rounds });
    }
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
