// The graph-rewrite explorer. Three levels, as in tinygrad's VIZ: a context (a schedule or a kernel) holds steps
// (one graph_rewrite each), a step holds rewrites (event 0 is its input graph, event k the graph after rewrite k).
"use strict";

const $ = (s) => document.querySelector(s);
const el = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
};
const UOP_LINES_SHOWN = 300, DIFF_LINES_SHOWN = 600, LABEL_MAX = 36, STREAMS_KEPT = 32;

let ctxs = [];               // GET /ctxs
const refToCtx = new Map();  // a context's "ref" -> its index (KERNEL nodes link to it)
const streams = new Map();   // "ctx_step" -> {events, done, cancel}
const state = { ctx: -1, step: 0, rewrite: 0, expanded: false };
let shown = null;            // what the graph shows: {key, rewrite, model}
let view, layoutWorker = null, workerUrl = null;
const store = (() => { try { return window.localStorage; } catch { return null; } })();  // may be off for file://
let layoutDir = store?.getItem("tgviz.dir") ?? "auto";  // "auto", "LR" (as tinygrad's VIZ) or "TB": the header's toggle

// *** state, URL hash and history ***

function setState(patch, { push = false } = {}) {
  Object.assign(state, patch);
  const hash = state.ctx < 0 ? "" : `#ctx=${state.ctx}&step=${state.step}&rewrite=${state.rewrite}`;
  if (hash !== location.hash && !(hash === "" && location.hash === "")) {
    history[push ? "pushState" : "replaceState"](null, "", hash || location.pathname + location.search);
  }
  render();
}

function stateFromHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const num = (k, max) => Math.max(0, Math.min(max, parseInt(p.get(k)) || 0));
  if (!p.has("ctx") || !ctxs.length) return { ctx: -1, step: 0, rewrite: 0, expanded: false };
  const ctx = num("ctx", ctxs.length - 1), step = num("step", Math.max(0, ctxs[ctx].steps.length - 1));
  return { ctx, step, rewrite: num("rewrite", ctxs[ctx].steps[step]?.match_count ?? 0), expanded: true };
}
window.addEventListener("popstate", () => setState(stateFromHash()));
window.addEventListener("hashchange", () => setState(stateFromHash()));

// *** sidebar: contexts and their steps ***

function buildSidebar() {
  const list = $("#ctx-list");
  list.replaceChildren(...ctxs.map((c, i) => {
    const name = el("span", { className: "name" });
    name.innerHTML = ansiToHtml(c.name);
    const head = el("div", { className: "ctx-name", title: stripAnsi(c.name) }, name, el("span", { className: "count", textContent: c.steps.length }));
    head.onclick = () => setState(i === state.ctx ? { expanded: !state.expanded } :
      { ctx: i, step: 0, rewrite: 0, expanded: true }, { push: true });
    return el("div", { className: "ctx" }, head, el("div", { className: "steps" }));
  }));
}

function updateSidebar() {
  const items = $("#ctx-list").children;
  for (let i = 0; i < items.length; i++) {
    const item = items[i], open = i === state.ctx && state.expanded, box = item.querySelector(".steps");
    item.classList.toggle("active", i === state.ctx);
    item.classList.toggle("open", open);
    if (!open) { box.replaceChildren(); continue; }
    if (!box.children.length) {
      box.replaceChildren(...ctxs[i].steps.map((s, j) => {
        const name = s.name ?? `${s.loc[0].split("/").pop()}:${s.loc[1]}`;
        const row = el("div", { className: "step" + (s.match_count === 0 ? " dim" : ""), title: `${s.loc[0]}:${s.loc[1]}` },
          el("span", { className: "name", textContent: name }), el("span", { className: "count", textContent: s.match_count }));
        row.style.paddingLeft = `${18 + 14 * s.depth}px`;
        row.onclick = () => setState({ step: j, rewrite: 0 });
        return row;
      }));
    }
    [...box.children].forEach((row, j) => row.classList.toggle("active", j === state.step));
  }
  const active = (state.expanded && items[state.ctx]?.querySelector(".step.active")) || items[state.ctx]?.firstChild;
  if (active && active !== scrolledTo) active.scrollIntoView({ block: "nearest" });  // (forces a layout: only on a change)
  scrolledTo = active;
}
let scrolledTo = null;

// *** streaming a step's events ***

function getStream(ctx, step) {
  const key = `${ctx}_${step}`;
  let s = streams.get(key);
  if (s && (s.done || s.cancel)) return s;
  // only one live stream: a step we left half-loaded is fetched again from the start
  for (const o of streams.values()) if (o.cancel && !o.done) { o.cancel(); o.cancel = null; }
  s = { key, events: [], done: false, error: null, cancel: null };
  streams.delete(key);
  streams.set(key, s);
  if (streams.size > STREAMS_KEPT) streams.delete(streams.keys().next().value);  // forget the oldest step's events
  s.cancel = streamStep(ctx, step, (ev) => {
    s.events.push(ev);
    if (isShowing(ctx, step)) render();
  }, () => {
    s.done = true; s.cancel = null;
    if (isShowing(ctx, step)) render();
  }, (err) => {
    s.error = err.message; s.cancel = null; s.done = true;
    if (isShowing(ctx, step)) render();
  });
  return s;
}
const isShowing = (ctx, step) => state.ctx === ctx && state.step === step;

// *** graph: model, layout worker, view ***

// the JSON graph of one event as arrays the worker and the view share; cached on the event
function graphModel(ev) {
  if (ev.model) return ev.model;
  const ids = Object.keys(ev.graph), index = new Map(ids.map((id, i) => [id, i])), nodes = [], edges = [];
  ids.forEach((id, i) => {
    const { label, src, color, ref, tag } = ev.graph[id];
    const refIdx = ref != null ? refToCtx.get(ref) : undefined;
    const full = refIdx !== undefined ? `${label}\ncodegen@${stripAnsi(ctxs[refIdx].name)}` : label;
    // long lines (ShapeTrackers, KernelInfo) are cut in the drawing; the tooltip has them whole
    const short = full.length <= LABEL_MAX ? full : full.split("\n").map((l) => (l.length > LABEL_MAX ? l.slice(0, LABEL_MAX - 1) + "…" : l)).join("\n");
    nodes.push({ label: short, full, color, ref: refIdx ?? null, tag });
    const srcIdx = src.map((s) => index.get(String(s))).filter((v) => v !== undefined);
    if (srcIdx.length === 1) edges.push(srcIdx[0], i, 1);
    else {  // one edge per distinct source, with the number of uses
      const counts = new Map();
      for (const v of srcIdx) counts.set(v, (counts.get(v) || 0) + 1);
      for (const [v, c] of counts) edges.push(v, i, c);
    }
  });
  const changed = new Set((ev.changed_nodes || []).map((id) => index.get(String(id))).filter((i) => i !== undefined));
  return (ev.model = { ids, index, nodes, edges: Int32Array.from(edges), changed });
}

// the layout libraries (vendor.txt): dagre for small graphs and the first view of a big one, ELK for big graphs
const LAYOUT_LIBS = ["/vendor/dagre.min.js", "/vendor/elk.bundled.js"];
async function makeLayoutWorker() {
  if (!workerUrl) {
    const srcs = await Promise.all(LAYOUT_LIBS.map(getVendorSource));
    LAYOUT_LIBS.forEach((p, i) => { if (!srcs[i]) console.warn(`viz: no ${p}, the layout worker does without it`); });
    // each in a try: one that throws (the build's stand-in for a missing file touches document) leaves the others
    const libs = srcs.map((s, i) => (s ? `try {\n${s}\n;} catch (e) { console.error("viz: ${LAYOUT_LIBS[i]}:", e); }\n` : ""));
    const src = `${libs.join("")}(${tgLayoutWorker.toString()})();`;
    workerUrl = URL.createObjectURL(new Blob([src], { type: "application/javascript" }));
  }
  return new Worker(workerUrl);
}

let layoutSeq = 0;
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));
async function showGraph(key, rewrite, ev) {
  const sameStep = shown?.key === key, seq = ++layoutSeq, anchor = sameStep ? view.anchor() : null;
  const cur = shown = { key, rewrite, model: shown?.model };
  if (layoutWorker) { layoutWorker.terminate(); layoutWorker = null; }  // drop a layout still running for the previous graph
  await nextTask();  // the panel was just rebuilt: build the model in a task of its own, so neither blocks for long
  if (seq !== layoutSeq || shown !== cur) return;
  const model = cur.model = graphModel(ev);
  setGraphStatus("layout", `laying out ${fmtCount(model.nodes.length)} nodes…`);
  const worker = layoutWorker = await makeLayoutWorker();
  if (seq !== layoutSeq) return worker.terminate();
  const t0 = performance.now();
  worker.onmessage = ({ data }) => {
    if (seq !== layoutSeq) return;
    if (data.phase === "error") return setGraphStatus("error", `layout failed: ${data.message}`);
    const partial = data.phase === "partial";
    // keep the node under the middle of the screen in place (from the partial layout, or the previous rewrite's
    // graph); a new step, or a graph with nothing in common, starts fitted to the screen, except that a big graph's
    // first (partial) view zooms to its changes: they, not the whole graph, are what one came for
    const a = view.g?.model === model && view.g.layout.phase === "partial" ? view.anchor() : partial ? null : anchor;
    view.setGraph(model, data, model.changed);
    if (!view.restoreAnchor(a)) {
      const box = partial && model.changed.size && view.bounds([...model.changed]);
      if (box) view.fit([box[0] - 300, box[1] - 200, box[2] + 300, box[3] + 200], 1);
      else view.fit();
    }
    const total = model.nodes.length, ms = Math.round(performance.now() - t0);
    const graphEl = $("#graph");
    $("#dir-btn").textContent = layoutDir === "auto" ? `auto: ${data.dir}` : layoutDir;
    Object.assign(graphEl.dataset, { nodes: data.nodes.length, edges: data.edges.length, total: total,
      changed: view.g.changed.size, layout: data.phase, engine: data.engine, key, rewrite });
    if (partial) setGraphStatus("partial", `showing ${fmtCount(data.nodes.length)} of ${fmtCount(total)} nodes around the ` +
      `${model.changed.size ? "changes" : "sink"}; laying out the rest…`);
    else setGraphStatus("ok", `${fmtCount(total)} nodes · ${fmtCount(data.edges.length)} edges · ${data.engine} layout ${ms} ms`);
    if (!partial) { worker.terminate(); if (layoutWorker === worker) layoutWorker = null; }
  };
  worker.onerror = (e) => { if (seq === layoutSeq) setGraphStatus("error", `layout worker: ${e.message}`); };
  worker.postMessage({ labels: model.nodes.map((n) => n.label), edges: model.edges, focus: [...model.changed], dir: layoutDir,
    viewport: [view.canvas.clientWidth, view.canvas.clientHeight] });
}

function setGraphStatus(kind, text) {
  const s = $("#graph-status");
  s.textContent = text;
  s.className = kind;
}

// *** the right panel: step, rewrite, rule, diff, kernel code, uop ***

function section(title, ...body) { return el("section", {}, el("h3", { textContent: title }), ...body); }
// a highlighted code block; a long one shows maxLines first, filled in the next task (a 10,000-node graph's uop text
// would otherwise add ~100 ms to the task that shows it)
function codeBlock(text, { maxLines, cls = "" } = {}) {
  const lines = text.split("\n"), pre = el("pre", { className: "code " + cls });
  const fill = (n) => { pre.innerHTML = highlight(lines.slice(0, n).join("\n")); };
  if (maxLines) setTimeout(fill, 0, maxLines);
  else fill(lines.length);
  if (maxLines && lines.length > maxLines) {
    const more = el("button", { className: "more", textContent: `show all ${fmtCount(lines.length)} lines` });
    more.onclick = () => { fill(lines.length); more.remove(); };
    return el("div", {}, pre, more);
  }
  return pre;
}
const trimLines = (s) => s.replace(/^\s*\n|\s+$/g, "");  // leading blank lines, trailing space
const locText = (loc) => `${loc[0].replaceAll("\\", "/").split("/").slice(-2).join("/")}:${loc[1]}`;

let panelKey = null;
function renderPanel(stream) {
  const ctx = ctxs[state.ctx], step = ctx.steps[state.step], ev = stream.events[Math.min(state.rewrite, stream.events.length - 1)];
  const n = step.match_count, avail = stream.events.length - 1;
  const progress = avail < n && !stream.done ? ` (received ${Math.max(0, avail)})` : "";
  const key = `${state.ctx}_${state.step}_${state.rewrite}_${avail >= state.rewrite}_${!!stream.error}`;
  if (key === panelKey) { const p = $("#rewrite-progress"); if (p) p.textContent = progress; return; }
  panelKey = key;
  const parts = [];
  // step header: where the graph_rewrite was called
  parts.push(section("Step", el("div", { className: "step-title", textContent: step.name ?? "" }),
    el("div", { className: "loc", textContent: locText(step.loc), title: step.loc.join(":") }),
    step.code_line ? codeBlock(step.code_line, { cls: "wrap" }) : ""));
  // rewrite slider
  if (n > 0) {
    const slider = el("input", { type: "range", min: 0, max: n, value: state.rewrite, id: "rewrite-slider" });
    slider.oninput = () => setState({ rewrite: +slider.value });
    const btn = (t, d, title) => el("button", { className: "btn small", textContent: t, title,
      onclick: () => setState({ rewrite: Math.max(0, Math.min(n, state.rewrite + d)) }) });
    const label = el("span", { className: "rewrite-label", id: "rewrite-label",
      textContent: state.rewrite === 0 ? `before · 0 / ${n}` : `rewrite ${state.rewrite} / ${n}` });
    parts.push(section("Rewrites", el("div", { className: "rewrite-nav" }, btn("◀", -1, "previous (←)"), slider,
      btn("▶", 1, "next (→)")), el("div", {}, label, el("span", { className: "muted", id: "rewrite-progress", textContent: progress }))));
  }
  if (stream.error) parts.push(el("div", { className: "error", textContent: stream.error }));
  if (ev && state.rewrite > 0 && state.rewrite <= avail) {
    if (ev.upat) parts.push(section("Rule", el("div", { className: "loc", textContent: locText(ev.upat[0]), title: ev.upat[0].join(":") }),
      codeBlock(String(ev.upat[1]), { cls: "wrap" })));
    if (ev.diff) {
      const pre = el("pre", { className: "code diff" }), diff = ev.diff.filter((l) => !/^(---|\+\+\+) ?\n?$/.test(l));  // no empty file headers
      pre.append(...diff.slice(0, DIFF_LINES_SHOWN).map((l) => el("div", { textContent: l.replace(/\n$/, ""),
        className: l.startsWith("@@") ? "hunk" : l.startsWith("+++") || l.startsWith("---") ? "hdr" : l[0] === "+" ? "add" : l[0] === "-" ? "del" : "" })));
      if (diff.length > DIFF_LINES_SHOWN) pre.append(el("div", { className: "muted", textContent: `… ${diff.length - DIFF_LINES_SHOWN} more lines` }));
      parts.push(section("Diff", pre));
    }
  } else if (state.rewrite > avail) parts.push(el("div", { className: "muted", textContent: `waiting for rewrite ${state.rewrite}…` }));
  if (ctx.kernel_code != null) parts.push(section("Kernel code", codeBlock(trimLines(ctx.kernel_code))));
  if (ev?.uop) {
    const d = el("details", { open: ctx.kernel_code == null }, el("summary", { textContent: "UOp" }), codeBlock(ev.uop, { maxLines: UOP_LINES_SHOWN }));
    parts.push(el("section", { className: "uop" }, d));
  }
  $("#panel").replaceChildren(...parts);
}

// *** render: sidebar + graph + panel for the current state ***

function render() {
  updateSidebar();
  $("#graph-hint").hidden = state.ctx >= 0;
  const crumbs = $("#crumbs");
  if (state.ctx < 0) {
    crumbs.textContent = `${ctxs.length} contexts`;
    $("#panel").replaceChildren(el("p", { className: "muted", textContent: "Select a context, then a step, to see its graph." }));
    panelKey = null;
    return;
  }
  const ctx = ctxs[state.ctx], step = ctx.steps[state.step];
  crumbs.innerHTML = ansiToHtml(ctx.name) + (step ? ` <span class="sep">›</span> ${escapeHtml(step.name ?? "")}` : "");
  if (!step) {  // a context without steps: just its code
    $("#panel").replaceChildren(ctx.kernel_code != null ? section("Kernel code", codeBlock(trimLines(ctx.kernel_code))) : "");
    view.clear();
    return;
  }
  const stream = getStream(state.ctx, state.step), key = `${state.ctx}_${state.step}`;
  renderPanel(stream);
  if (!stream.events.length) {
    if (shown?.key !== key) { view.clear(); shown = null; layoutSeq++; $("#graph").dataset.layout = "none"; }
    setGraphStatus(stream.error ? "error" : "layout", stream.error ?? "loading…");
    return;
  }
  const r = Math.min(state.rewrite, stream.events.length - 1);
  if (shown?.key !== key || shown.rewrite !== r) showGraph(key, r, stream.events[r]);
}

// *** keyboard, as tinygrad's VIZ ***

document.addEventListener("keydown", (e) => {
  if (e.target.closest?.("input:not([type=range]), textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
  const { ctx, step, rewrite, expanded } = state, keys = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Enter", " "];
  if (!keys.includes(e.key) || !ctxs.length) return;
  e.preventDefault();
  const steps = ctx >= 0 ? ctxs[ctx].steps.length : 0;
  if (e.key === "ArrowUp" || e.key === "ArrowDown") {
    const d = e.key === "ArrowUp" ? -1 : 1;
    // in an open context: move through its steps; otherwise move through the contexts
    if (ctx >= 0 && expanded && steps) return setState({ step: Math.max(0, Math.min(steps - 1, step + d)), rewrite: 0 });
    return setState({ ctx: Math.max(0, Math.min(ctxs.length - 1, ctx + d)), step: 0, rewrite: 0, expanded: false });
  }
  if (e.key === "Enter") return setState(ctx < 0 ? { ctx: 0, expanded: true } : { expanded: !expanded });
  if (ctx < 0) return;
  const n = ctxs[ctx].steps[step]?.match_count ?? 0;
  if (e.key === "ArrowLeft") return setState({ rewrite: Math.max(0, rewrite - 1) });
  if (e.key === "ArrowRight") return setState({ rewrite: Math.min(n, rewrite + 1) });
  if (e.key === " ") view.fit();  // space: fit the graph to the screen
});

// *** start ***

async function main() {
  $("#profiler-link").href = IS_FILE ? "profiler.html" : "profiler";
  const tip = $("#tooltip");
  view = new GraphView($("#graph-canvas"), {
    onNodeClick: (i) => {
      const r = view.g?.model.nodes[i].ref;  // the drawn graph's model (a newer one may be in layout)
      if (r != null) setState({ ctx: r, step: 0, rewrite: 0, expanded: true }, { push: true });
    },
    onHover: (i, e) => {
      if (i < 0 || !view.g) { tip.hidden = true; return; }
      const m = view.g.model.nodes[i];
      tip.textContent = `${m.full}\nid ${view.g.model.ids[i]}` + (m.ref != null ? "\nclick: open the kernel" : "");
      tip.hidden = false;
      const r = $("#graph").getBoundingClientRect();
      tip.style.left = `${e.clientX - r.left + 14}px`;
      tip.style.top = `${e.clientY - r.top + 14}px`;
    },
  });
  $("#fit-btn").onclick = () => view.fit();
  const dirBtn = $("#dir-btn");
  dirBtn.textContent = layoutDir;
  dirBtn.onclick = () => {
    layoutDir = dirBtn.textContent = { auto: "LR", LR: "TB", TB: "auto" }[layoutDir];
    store?.setItem("tgviz.dir", layoutDir);
    shown = null;  // lay the graph out again
    if (state.ctx >= 0) render();
  };
  try {
    ctxs = await getCtxs();
  } catch (err) {
    setGraphStatus("error", `can't load the contexts: ${err.message}`);
    return;
  }
  ctxs.forEach((c, i) => { if (c.ref != null) refToCtx.set(c.ref, i); });
  buildSidebar();
  $("#ctx-count").textContent = `${ctxs.length}`;
  setState(stateFromHash());
}

// test hook: what the page shows (tests/viz/check_page.mjs reads it)
window.tgViz = {
  get state() { return { ...state }; },
  get ctxs() { return ctxs; },
  events: (ctx, step) => streams.get(`${ctx}_${step}`)?.events.length ?? 0,
  get view() { return view && { cam: { ...view.cam }, drawnNodes: view.drawnNodes, drawnEdges: view.drawnEdges }; },
  // page coordinates of a node's centre (null when it isn't laid out)
  nodePos(id) {
    const nd = view.g?.byIndex.get(view.g.model.index.get(String(id))), r = view.canvas.getBoundingClientRect();
    return nd ? { x: r.left + nd.x * view.cam.k + view.cam.x, y: r.top + nd.y * view.cam.k + view.cam.y } : null;
  },
  setState,
};

main();
