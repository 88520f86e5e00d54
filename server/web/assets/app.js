// docgraph's page: ask the store a question, read the ranked passages,
// explore the graph around them, and browse the documents.
//
// Everything that comes from the store (document text, titles, file
// names, entity names) goes into the page as text: text nodes,
// textContent and setAttribute, never parsed as HTML. The Content-Security-
// Policy forbids inline script as a second line of defence.
'use strict';

// The page counts what the CSP blocked: nothing should ever be, since no
// markup from the store is parsed, and a test reads the count.
document.documentElement.dataset.cspViolations = '0';
document.addEventListener('securitypolicyviolation', () => {
  const root = document.documentElement;
  root.dataset.cspViolations = String(Number(root.dataset.cspViolations) + 1);
});

const SVG_NS = 'http://www.w3.org/2000/svg';
const TOKEN_KEY = 'docgraph.token';
const $ = (id) => document.getElementById(id);

// el builds an element: attrs are set with setAttribute ("on..." keys add
// listeners), children are nodes or strings (appended as text).
function el(tag, attrs, ...kids) {
  return build(document.createElement(tag), attrs, kids);
}

function svg(tag, attrs, ...kids) {
  return build(document.createElementNS(SVG_NS, tag), attrs, kids);
}

function build(e, attrs, kids) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const k of kids.flat()) {
    if (k === undefined || k === null || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

const basename = (p) => String(p || '').split(/[\\/]/).pop();
const plural = (n, one, many) => `${n} ${n === 1 ? one : many || one + 's'}`;
const docHref = (id, chunk) => '?doc=' + encodeURIComponent(id) + (chunk === undefined ? '' : '&chunk=' + encodeURIComponent(chunk));

function status(text, isError) {
  const s = $('status');
  s.textContent = text || '';
  s.classList.toggle('error', Boolean(isError));
}

// ---- The API ----

class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// api fetches a route of the JSON API with the session's token; a 401
// asks for the token and throws.
async function api(path, init) {
  const headers = new Headers((init && init.headers) || {});
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.set('Authorization', 'Bearer ' + token);
  // Relative to the page, so the page works wherever a program mounts
  // the handler (http.StripPrefix("/docgraph", g.Handler())).
  const resp = await fetch(path.replace(/^\//, ''), Object.assign({}, init, { headers, cache: 'no-store' }));
  if (resp.status === 401) {
    askToken(Boolean(token));
    throw new APIError(401, 'unauthorized', 'This server asks for a token.');
  }
  if (!resp.ok) {
    let body = {};
    try { body = await resp.json(); } catch (e) { /* not JSON */ }
    throw new APIError(resp.status, body.code || 'http_' + resp.status, body.message || resp.statusText);
  }
  return resp;
}

async function getJSON(path, init) {
  return (await api(path, init)).json();
}

function failed(e) {
  if (e.name === 'AbortError' || e.code === 'unauthorized') return;
  status(e.message || String(e), true);
}

// ---- The token ----

function askToken(refused) {
  for (const v of document.querySelectorAll('main > section')) v.hidden = v.id !== 'token-view';
  const err = $('token-error');
  err.hidden = !refused;
  err.textContent = refused ? 'The server refused that token.' : '';
  status('');
  $('token').focus();
}

$('token-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
  $('token').value = '';
  $('token-view').hidden = true;
  lastQuery = '';
  start();
});

// ---- Views and navigation ----

let lastQuery = ''; // the question and mode whose results are on screen

function params() {
  return new URLSearchParams(location.search);
}

function navigate(url) {
  history.pushState(null, '', url);
  route();
}

window.addEventListener('popstate', () => route());

// Links within the page change the view without a reload.
document.addEventListener('click', (ev) => {
  const a = ev.target.closest && ev.target.closest('a[data-nav], nav.views a[data-view]');
  if (!a || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  ev.preventDefault();
  navigate(a.getAttribute('href'));
});

function show(view) {
  for (const v of ['token', 'ask', 'documents', 'doc', 'stats']) $(v + '-view').hidden = v !== view;
  const current = view === 'doc' ? 'documents' : view;
  for (const a of document.querySelectorAll('nav.views a[data-view]')) {
    if (a.dataset.view === current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function route() {
  const p = params();
  const view = p.get('doc') ? 'doc' : p.get('view') || 'ask';
  show(view);
  status('');
  switch (view) {
    case 'documents': return showDocuments(p).catch(failed);
    case 'stats': return showStats().catch(failed);
    case 'doc': return showDocument(p.get('doc'), p.get('chunk')).catch(failed);
  }
  show('ask');
  const q = p.get('q') || '';
  const mode = p.get('mode') || 'mix';
  $('q').value = q;
  if ($('mode').querySelector(`option[value="${CSS.escape(mode)}"]`)) $('mode').value = mode;
  if (!q) {
    $('q').focus();
    return;
  }
  if (q + '\u0000' + mode !== lastQuery) {
    lastQuery = q + '\u0000' + mode;
    runQuery(q, mode);
  }
}

$('ask-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const q = $('q').value.trim();
  if (!q) return;
  lastQuery = '';
  navigate('?' + new URLSearchParams({ q, mode: $('mode').value }));
});

// ---- Asking ----

let inFlight = null; // the AbortController of the query running

async function runQuery(q, mode) {
  if (inFlight) inFlight.abort();
  const ctl = (inFlight = new AbortController());
  const t0 = performance.now();
  clearResults();
  status('Searching…');
  let resp;
  try {
    resp = await api('/v1/query', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: q, mode, stream: true }),
      signal: ctl.signal,
    });
    let answer = '';
    for await (const ev of serverEvents(resp.body)) {
      if (ctl !== inFlight) return;
      const data = JSON.parse(ev.data);
      if (ev.event === 'token') {
        answer += data.text;
        $('answer-box').hidden = false;
        $('answer').textContent = answer;
        status('Answering…');
      } else if (ev.event === 'error') {
        throw new APIError(0, data.code, data.message);
      } else if (ev.event === 'result') {
        showResult(data, t0);
      }
    }
  } catch (e) {
    if (ctl === inFlight) failed(e);
  }
}

// serverEvents reads a text/event-stream body: {event, data} per event.
async function* serverEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value.replace(/\r\n?/g, '\n');
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let event = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}

function clearResults() {
  for (const id of ['answer-box', 'passages-box', 'graph-box', 'warnings', 'entity']) $(id).hidden = true;
  for (const id of ['answer', 'passages', 'warnings', 'graph', 'entity', 'graph-note']) $(id).replaceChildren();
  graph.nodes.clear();
  graph.edges.clear();
  graph.selected = null;
}

function showResult(res, t0) {
  const passages = res.passages || [];
  if (res.answer) {
    $('answer-box').hidden = false;
    $('answer').replaceChildren(...withCitations(res.answer, res.sources || [], passages));
  }
  const warnings = (res.warnings || []).concat(res.fallback_reason ? ['Answered by mix: ' + res.fallback_reason] : []);
  if (warnings.length) {
    $('warnings').hidden = false;
    $('warnings').replaceChildren(...warnings.map((w) => el('li', {}, w)));
  }
  $('passages-box').hidden = false;
  $('passages').replaceChildren(...passages.map(passageItem));
  if (!passages.length) $('passages').append(el('li', { class: 'hint' }, 'No passage matched.'));
  // The time to the first result: from the start of the page's load (a
  // shared ?q= link) and from the start of the query.
  const root = document.documentElement;
  root.dataset.resultMs = performance.now().toFixed(1);
  root.dataset.queryMs = (performance.now() - t0).toFixed(1);
  status(`${plural(passages.length, 'passage')} in ${Math.round(performance.now() - t0)} ms`);
  const entities = (res.entities || []).slice(0, 3).map((e) => e.id);
  const chunks = passages.slice(0, 10).map((p) => p.chunk_id);
  if (chunks.length || entities.length) loadGraph(chunks, entities).catch(failed);
}

// withCitations turns [n] in an answer into links to the passage source n
// came from.
function withCitations(text, sources, passages) {
  const out = [];
  const parts = text.split(/\[(\d+)\]/);
  for (let i = 0; i < parts.length; i++) {
    if (i % 2 === 0) {
      if (parts[i]) out.push(document.createTextNode(parts[i]));
      continue;
    }
    const src = sources.find((s) => String(s.n) === parts[i]);
    const at = src ? passages.findIndex((p) => p.chunk_id === src.chunk_id) : -1;
    if (at < 0) {
      out.push(document.createTextNode(`[${parts[i]}]`));
      continue;
    }
    out.push(el('a', { class: 'cite', href: '#passage-' + (at + 1), title: src.doc_title || basename(src.doc_path) }, `[${parts[i]}]`));
  }
  return out;
}

function passageItem(p, i) {
  const long = p.text.length > 600;
  const text = el('p', { class: 'text' + (long ? ' clamp' : '') }, p.text);
  const more = long && el('button', {
    type: 'button', class: 'link', 'aria-expanded': 'false',
    onclick: (ev) => {
      const open = text.classList.toggle('clamp') === false;
      ev.currentTarget.setAttribute('aria-expanded', String(open));
      ev.currentTarget.textContent = open ? 'Show less' : 'Show all';
    },
  }, 'Show all');
  const li = el('li', { class: 'passage', id: 'passage-' + (i + 1), tabindex: '-1', 'data-chunk': p.chunk_id },
    el('h3', {}, p.doc_title || basename(p.doc_path)),
    el('p', { class: 'where' },
      el('span', { class: 'path' }, p.doc_path), ` · chunk ${p.chunk_index} · score ${Number(p.score).toFixed(3)}`),
    text,
    el('p', { class: 'actions' }, more, el('a', { href: docHref(p.doc_id, p.chunk_index), 'data-nav': true }, 'Open document')));
  // Pointing at a passage lights up the entities it mentions.
  const light = (on) => {
    for (const g of document.querySelectorAll('#graph .node')) {
      const n = graph.nodes.get(g.dataset.id);
      g.classList.toggle('lit', on && n && n.chunks.includes(p.chunk_id));
    }
  };
  li.addEventListener('mouseenter', () => light(true));
  li.addEventListener('mouseleave', () => light(false));
  return li;
}

// ---- The graph ----

const graph = { nodes: new Map(), edges: new Map(), selected: null };
const TYPES = ['person', 'organization', 'location', 'date', 'work', 'document', 'event', 'number'];

function addNode(n, near) {
  let d = graph.nodes.get(n.id);
  if (!d) {
    d = { id: n.id, chunks: [], seed: false };
    if (near) {
      // New neighbours start around the entity they were found from.
      const a = (graph.nodes.size * 2.39996) % (2 * Math.PI);
      d.x = near.x + 30 * Math.cos(a);
      d.y = near.y + 30 * Math.sin(a);
    }
    graph.nodes.set(n.id, d);
  }
  d.name = n.name || d.name || n.id;
  d.type = n.type || d.type || '';
  d.mentions = n.mentions || d.mentions || 0;
  if (n.chunks) d.chunks = n.chunks;
  if (n.seed) d.seed = true;
  return d;
}

function addEdge(e) {
  if (!graph.nodes.has(e.source) || !graph.nodes.has(e.target) || e.source === e.target) return;
  if (!graph.edges.has(e.id)) graph.edges.set(e.id, e);
}

async function loadGraph(chunks, entities) {
  const qs = new URLSearchParams();
  for (const c of chunks) qs.append('chunk', c);
  for (const e of entities) qs.append('entity', e);
  qs.set('limit', '40');
  const g = await getJSON('/v1/subgraph?' + qs);
  for (const n of g.nodes) addNode(n);
  for (const e of g.edges) addEdge(e);
  if (!graph.nodes.size) return;
  $('graph-box').hidden = false;
  $('graph-note').textContent = `${plural(graph.nodes.size, 'entity', 'entities')}, ${plural(graph.edges.size, 'relation')}` +
    (g.truncated ? ' (the most mentioned; more were left out)' : '');
  layout(300, 1);
  draw();
  document.documentElement.dataset.graphMs = performance.now().toFixed(1);
}

// layout places the nodes with a force simulation (Fruchterman and
// Reingold): nodes push each other apart, relations pull their ends
// together, and a weak pull to the centre keeps loose parts near. heat
// (0..1) is how far nodes already placed may move.
function layout(rounds, heat) {
  const ns = [...graph.nodes.values()];
  const n = ns.length;
  if (!n) return;
  // The drawing's own size sets the scale, so that a label is as big on
  // screen as the text around it: k is the distance two linked nodes
  // settle at, and the pull to the centre holds the whole within about R.
  const s = $('graph');
  const W = s.clientWidth || 600, H = s.clientHeight || 440;
  const k = Math.max(28, Math.min(90, 0.75 * Math.sqrt((W * H) / n)));
  const R = 0.4 * Math.min(W, H);
  const pull = Math.max(0.02, (n * k * k) / (R * R) / 4);
  ns.forEach((d, i) => {
    if (d.x === undefined) {
      // A spiral, so the start (and so the drawing) is the same each time.
      const a = i * 2.39996, r = k * Math.sqrt(i + 1);
      d.x = r * Math.cos(a);
      d.y = r * Math.sin(a);
    }
  });
  let temp = k * 2 * heat;
  const edges = [...graph.edges.values()];
  for (let round = 0; round < rounds; round++) {
    for (const d of ns) d.dx = d.dy = 0;
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const a = ns[i], b = ns[j];
        let dx = a.x - b.x, dy = a.y - b.y;
        let d2 = dx * dx + dy * dy;
        if (d2 < 0.01) { dx = 0.1 * (j - i); dy = 0.1; d2 = dx * dx + dy * dy; }
        const f = (k * k) / d2;
        a.dx += dx * f; a.dy += dy * f;
        b.dx -= dx * f; b.dy -= dy * f;
      }
    }
    for (const e of edges) {
      const a = graph.nodes.get(e.source), b = graph.nodes.get(e.target);
      const dx = a.x - b.x, dy = a.y - b.y;
      const f = Math.sqrt(dx * dx + dy * dy) / k;
      a.dx -= dx * f; a.dy -= dy * f;
      b.dx += dx * f; b.dy += dy * f;
    }
    for (const d of ns) {
      d.dx -= d.x * pull;
      d.dy -= d.y * pull;
      const len = Math.sqrt(d.dx * d.dx + d.dy * d.dy) || 1;
      const step = Math.min(len, Math.max(temp, 1));
      d.x += (d.dx / len) * step;
      d.y += (d.dy / len) * step;
    }
    temp *= 0.985;
  }
  separate(ns);
}

// separate moves apart nodes whose labels overlap: forces place points,
// but a label is a wide box to the right of its node. Each overlap is
// undone along the axis it is smaller on, a few passes over all pairs.
function separate(ns) {
  const box = (d) => {
    const r = radius(d);
    return { x0: d.x - r, x1: d.x + r + 4 + 6.8 * short(d.name).length, y0: d.y - Math.max(r, 8), y1: d.y + Math.max(r, 8) };
  };
  for (let pass = 0; pass < 80; pass++) {
    let moved = false;
    for (let i = 0; i < ns.length; i++) {
      for (let j = i + 1; j < ns.length; j++) {
        const a = box(ns[i]), b = box(ns[j]);
        const ox = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
        const oy = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
        if (ox <= 0 || oy <= 0) continue;
        moved = true;
        if (oy <= ox) {
          const s = (ns[i].y < ns[j].y || (ns[i].y === ns[j].y && i < j) ? -1 : 1) * (oy / 2 + 0.5);
          ns[i].y += s;
          ns[j].y -= s;
        } else {
          const s = (ns[i].x < ns[j].x ? -1 : 1) * (ox / 2 + 0.5);
          ns[i].x += s;
          ns[j].x -= s;
        }
      }
    }
    if (!moved) return;
  }
}

function radius(d) {
  return Math.min(16, 5 + 3 * d.chunks.length + (d.seed ? 3 : 0));
}

const short = (s) => (s.length > 28 ? s.slice(0, 27) + '…' : s);

function draw() {
  const s = $('graph');
  const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest('#graph .node');
  const ns = [...graph.nodes.values()];
  const xs = ns.map((d) => d.x), ys = ns.map((d) => d.y);
  // The view holds every node and its label (which runs to the right),
  // and is never smaller than the drawing, so a small graph is not blown up.
  const pad = 24, W = s.clientWidth || 600, H = s.clientHeight || 440;
  let x0 = Math.min(...xs) - pad, y0 = Math.min(...ys) - pad;
  let w = Math.max(...xs) + 140 - x0, h = Math.max(...ys) + pad - y0;
  if (w < W) { x0 -= (W - w) / 2; w = W; }
  if (h < H) { y0 -= (H - h) / 2; h = H; }
  s.setAttribute('viewBox', `${x0.toFixed(1)} ${y0.toFixed(1)} ${w.toFixed(1)} ${h.toFixed(1)}`);
  const edges = svg('g', { class: 'edges' });
  for (const e of graph.edges.values()) {
    const a = graph.nodes.get(e.source), b = graph.nodes.get(e.target);
    edges.append(svg('line', {
      class: 'edge', 'data-source': e.source, 'data-target': e.target,
      x1: a.x.toFixed(1), y1: a.y.toFixed(1), x2: b.x.toFixed(1), y2: b.y.toFixed(1),
    }, svg('title', {}, `${a.name} — ${e.keywords || e.type || e.description || 'related'} — ${b.name}`)));
  }
  const nodes = svg('g', { class: 'nodes' });
  for (const d of ns) {
    const r = radius(d);
    const type = TYPES.includes(String(d.type).toLowerCase()) ? String(d.type).toLowerCase() : 'other';
    const g = svg('g', {
      class: `node t-${type}` + (d.seed ? ' seed' : ''), 'data-id': d.id, tabindex: 0, role: 'button',
      'aria-label': d.name + (d.type ? ` (${d.type})` : ''), transform: `translate(${d.x.toFixed(1)} ${d.y.toFixed(1)})`,
      onclick: () => selectEntity(d.id),
      onkeydown: (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          selectEntity(d.id);
        }
      },
    }, svg('title', {}, d.name + (d.type ? ` (${d.type})` : '')), svg('circle', { r }), svg('text', { x: r + 4, y: 4 }, short(d.name)));
    nodes.append(g);
  }
  s.replaceChildren(edges, nodes);
  markSelection();
  if (focused) {
    const again = s.querySelector(`.node[data-id="${CSS.escape(focused.dataset.id)}"]`);
    if (again) again.focus();
  }
}

function markSelection() {
  const sel = graph.selected;
  const near = new Set();
  for (const line of document.querySelectorAll('#graph .edge')) {
    const on = sel && (line.dataset.source === sel || line.dataset.target === sel);
    line.classList.toggle('near', Boolean(on));
    if (on) near.add(line.dataset.source).add(line.dataset.target);
  }
  for (const g of document.querySelectorAll('#graph .node')) {
    g.classList.toggle('selected', g.dataset.id === sel);
    g.classList.toggle('near', g.dataset.id !== sel && near.has(g.dataset.id));
    if (g.dataset.id === sel) g.setAttribute('aria-pressed', 'true');
    else g.removeAttribute('aria-pressed');
  }
}

async function selectEntity(id) {
  graph.selected = id;
  markSelection();
  const box = $('entity');
  box.hidden = false;
  box.replaceChildren(el('p', { class: 'hint' }, 'Loading…'));
  let d;
  try {
    d = await getJSON('/v1/entities/' + encodeURIComponent(id) + '?limit=8');
  } catch (e) {
    box.replaceChildren(el('p', { class: 'error' }, e.message));
    return;
  }
  if (graph.selected !== id) return;
  addNode(d);
  const expand = el('button', { type: 'button', onclick: () => expandEntity(id, expand) }, 'Expand one more hop');
  const neighbours = d.relations.map((r) => {
    const out = r.source === id;
    const other = { id: out ? r.target : r.source, name: out ? r.target_name : r.source_name };
    return el('li', {},
      el('button', { type: 'button', class: 'link', onclick: () => showNeighbour(d, other, r) }, other.name),
      el('span', { class: 'rel' }, ' — ' + short2(r.keywords || r.type || r.description, 100)));
  });
  const passages = d.passages.map((p) => el('li', {},
    el('p', { class: 'where' }, el('strong', {}, p.doc_title || basename(p.doc_path)), ` · chunk ${p.chunk_index} · `,
      el('a', { href: docHref(p.doc_id, p.chunk_index), 'data-nav': true }, 'Open document')),
    el('p', { class: 'text' }, short2(p.text, 320))));
  box.replaceChildren(
    el('div', { class: 'entity-head' },
      el('h3', { id: 'entity-name' }, d.name),
      el('button', { type: 'button', class: 'close', 'aria-label': 'Close the entity', onclick: closeEntity }, '×')),
    el('p', { class: 'where' }, [d.type, plural(d.mentions, 'passage mentions', 'passages mention') + ' it'].filter(Boolean).join(' · ')),
    el('p', { class: 'desc' }, d.description || 'No description.'),
    el('p', { class: 'actions' }, expand),
    el('h4', {}, 'Neighbours'),
    neighbours.length ? el('ul', { class: 'neighbours' }, neighbours) : el('p', { class: 'hint' }, 'No relations.'),
    el('h4', {}, 'Passages'),
    passages.length ? el('ul', { class: 'mentions' }, passages) : el('p', { class: 'hint' }, 'No passages.'));
  box.focus({ preventScroll: true });
  box.scrollIntoView({ block: 'nearest' });
}

const short2 = (s, n) => {
  s = String(s || '');
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
};

// Escape closes the entity panel, focus going back to its node.
$('entity').addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape') closeEntity();
});

function closeEntity() {
  const id = graph.selected;
  graph.selected = null;
  markSelection();
  $('entity').hidden = true;
  const g = id && $('graph').querySelector(`.node[data-id="${CSS.escape(id)}"]`);
  if (g) g.focus();
}

// showNeighbour adds a neighbour (and the relation to it) to the drawing
// when it is not there yet, then selects it.
function showNeighbour(from, other, rel) {
  if (!graph.nodes.has(other.id)) {
    addNode(other, graph.nodes.get(from.id));
    addEdge(rel);
    layout(120, 0.3);
    draw();
  } else {
    addEdge(rel);
  }
  selectEntity(other.id);
}

async function expandEntity(id, button) {
  button.disabled = true;
  try {
    const g = await getJSON('/v1/graph?entity=' + encodeURIComponent(id) + '&hops=1&limit=30');
    const before = graph.nodes.size, edgesBefore = graph.edges.size;
    const centre = graph.nodes.get(id);
    for (const n of g.nodes) addNode(n, centre);
    for (const e of g.edges) addEdge(e);
    const added = graph.nodes.size - before;
    status(added || graph.edges.size > edgesBefore
      ? `Added ${plural(added, 'entity', 'entities')} and ${plural(graph.edges.size - edgesBefore, 'relation')}`
      : 'No more neighbours to add.');
    $('graph-note').textContent = `${plural(graph.nodes.size, 'entity', 'entities')}, ${plural(graph.edges.size, 'relation')}`;
    layout(150, 0.4);
    draw();
  } catch (e) {
    failed(e);
  } finally {
    button.disabled = false;
  }
}

// ---- Documents ----

const STATUSES = ['done', 'failed', 'pending', 'processing'];
const statusClass = (s) => 'status-' + (STATUSES.includes(s) ? s : 'other');

async function showDocuments(p) {
  const offset = Math.max(0, parseInt(p.get('offset') || '0', 10) || 0);
  const st = p.get('status') || '';
  const prefix = p.get('path_prefix') || '';
  $('doc-status').value = STATUSES.includes(st) ? st : '';
  $('doc-prefix').value = prefix;
  const qs = new URLSearchParams({ offset: String(offset), limit: '50' });
  if (st) qs.set('status', st);
  if (prefix) qs.set('path_prefix', prefix);
  const page = await getJSON('/v1/documents?' + qs);
  $('docs').tBodies[0].replaceChildren(...page.documents.map(docRow));
  $('doc-summary').textContent = page.total === 0 ? 'No documents.'
    : `Documents ${offset + 1}–${offset + page.documents.length} of ${page.total}`;
  const to = (o) => {
    const q = new URLSearchParams(qs);
    q.delete('limit');
    q.set('view', 'documents');
    q.set('offset', String(o));
    return '?' + q;
  };
  $('doc-prev').disabled = offset === 0;
  $('doc-prev').onclick = () => navigate(to(Math.max(0, offset - page.limit)));
  $('doc-next').disabled = page.next_offset === undefined;
  $('doc-next').onclick = () => navigate(to(page.next_offset));
}

function docNotes(d) {
  const out = [];
  if (d.error) out.push(el('p', { class: 'error' }, 'Failed: ' + d.error));
  if (d.warnings && d.warnings.length) {
    out.push(el('details', {}, el('summary', {}, plural(d.warnings.length, 'warning')),
      el('ul', {}, d.warnings.map((w) => el('li', {}, w)))));
  }
  return out;
}

function docRow(d) {
  return el('tr', { class: statusClass(d.status) },
    el('td', { 'data-label': 'Document' },
      el('a', { href: docHref(d.id), 'data-nav': true }, d.title || basename(d.path)),
      el('div', { class: 'path' }, d.path)),
    el('td', { 'data-label': 'Format' }, d.format),
    el('td', { 'data-label': 'Status' }, el('span', { class: 'badge ' + statusClass(d.status) }, d.status)),
    el('td', { 'data-label': 'Chunks', class: 'num' }, String(d.chunks)),
    el('td', { 'data-label': 'Notes', class: 'notes' }, docNotes(d)));
}

$('doc-filter').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const q = new URLSearchParams({ view: 'documents' });
  if ($('doc-status').value) q.set('status', $('doc-status').value);
  if ($('doc-prefix').value) q.set('path_prefix', $('doc-prefix').value);
  navigate('?' + q);
});

$('doc-back').addEventListener('click', () => {
  if (history.length > 1) history.back();
  else navigate('?view=documents');
});

async function showDocument(id, chunk) {
  $('doc-title').textContent = 'Loading…';
  for (const x of ['doc-meta', 'doc-notes', 'doc-text']) $(x).replaceChildren();
  const d = await getJSON('/v1/documents/' + encodeURIComponent(id));
  $('doc-title').textContent = d.title || basename(d.path);
  const meta = [['Path', d.path], ['Format', d.format], ['Status', d.status], ['Chunks', String(d.chunks)],
    ['Size', plural(d.size, 'byte')], ['Updated', new Date(d.updated_at).toLocaleString()]];
  $('doc-meta').replaceChildren(...meta.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  $('doc-notes').replaceChildren(...docNotes(d));
  const text = $('doc-text');
  let hit = null;
  for (const s of d.segments) {
    const span = el('span', { class: 'seg', id: 'chunk-' + s.chunk_index, title: 'chunk ' + s.chunk_index }, s.text);
    // The passage's chunk is marked where the document has more than one.
    if (chunk !== null && String(s.chunk_index) === chunk && d.segments.length > 1) {
      span.classList.add('hit');
      hit = span;
    }
    text.append(span);
  }
  if (!d.segments.length) text.append(el('p', { class: 'hint' }, d.status === 'done' ? 'The document has no text.' : `No text: the document is ${d.status}.`));
  if (d.truncated) text.append(el('p', { class: 'hint' }, 'The text is cut here: the document is too long to show whole.'));
  if (hit && hit !== text.firstChild) hit.scrollIntoView({ block: 'start' });
}

// ---- Stats ----

async function showStats() {
  const s = await getJSON('/v1/stats');
  const by = Object.entries(s.by_status || {}).map(([k, v]) => `${v} ${k}`).join(', ');
  const rows = [
    ['Documents', String(s.documents) + (by ? ` (${by})` : '')],
    ['Chunks', String(s.chunks)],
    ['Entities', String(s.entities)],
    ['Relations', String(s.relations)],
    ['Mentions', String(s.mentions)],
    ['Embedder', `${s.embedder} (${s.dimension} dimensions)`],
    ['Answers', s.llm ? 'written by a model, streamed' : 'passages only (the server runs without --llm)'],
    ['Store', s.store],
    ['Graph version', s.graph_version],
    ['Requests served', String(s.requests)],
    ['Up for', `${s.uptime_seconds} s`],
  ];
  $('stats').replaceChildren(...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

// ---- Start ----

// start shows the view the address names and, meanwhile, learns whether
// the server has a model (which the logic mode needs).
function start() {
  route();
  getJSON('/v1/stats').then((s) => {
    const logic = $('mode').querySelector('option[value="logic"]');
    logic.hidden = logic.disabled = !s.llm;
  }, () => {});
}

start();
