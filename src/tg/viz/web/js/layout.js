// The graph layout worker. The page never runs this function: it puts its source, and the layout libraries' (dagre's
// and elkjs's bundles, vendor.txt), into a Blob and starts a Worker from it (index.js makeLayoutWorker), which works
// both over HTTP and from a file:// export (there the libraries' text comes from data/vendor_src.js).
//
// Request: {labels: [string], edges: Int32Array [src, dst, count]*, focus: [node index], dir: "LR" | "TB" | "auto",
//           viewport: [width, height]}
// Replies: {phase: "partial" | "full", nodes: Int32Array (indices laid out), box: Float32Array [x, y, w, h]* (centres),
//           edges: Int32Array (indices into the request's edges), pts: Float32Array (each edge's points, from
//           ptsOff[k] to ptsOff[k+1]), engine: "dagre" | "elk", dir, ms}, or {phase: "error", message}
// The layout is a library's, never one of our own: dagre (as tinygrad's VIZ) for graphs up to DAGRE_MAX nodes, where it
// is the faster one, and ELK's layered algorithm (Eclipse Layout Kernel, the elkjs package) above: dagre slows down
// fast with the size and runs out of memory at 10,000 nodes, which ELK lays out in ~15 s. Big graphs get a "partial"
// reply first, the neighbourhood of the focus (changed nodes, else the sinks) laid out by dagre, so the page shows
// something at once, then the "full" one. Everything runs here, off the page's main thread.
"use strict";

function tgLayoutWorker() {
  const FONT = "12px 'DejaVu Sans Mono', Menlo, Consolas, monospace", LINE_HEIGHT = 15, PAD_X = 8, PAD_Y = 6;
  const PARTIAL_ABOVE = 300, PARTIAL_SIZE = 200, DAGRE_MAX = 1000;
  const reduceMax = (xs, f, init = -Infinity) => { let m = init; for (const x of xs) m = Math.max(m, f(x)); return m; };  // no spread: any length
  const measure = (() => {
    const ctx = typeof OffscreenCanvas !== "undefined" ? new OffscreenCanvas(1, 1).getContext("2d") : null;
    if (ctx) ctx.font = FONT;
    const cache = new Map();
    return (s) => {
      let w = cache.get(s);
      if (w === undefined) cache.set(s, w = ctx ? ctx.measureText(s).width : 7.2 * s.length);
      return w;
    };
  })();

  // g: {n, w, h, edges: [[src, dst]], dir} over local indices -> {x, y (centres), pts: [[x, y, ...] per edge]}
  function dagreLayout(g) {
    const dg = new dagre.graphlib.Graph({ multigraph: false });
    dg.setGraph({ rankdir: g.dir, nodesep: 14, ranksep: 30, edgesep: 8 });
    dg.setDefaultEdgeLabel(() => ({}));
    for (let i = 0; i < g.n; i++) dg.setNode(String(i), { width: g.w[i], height: g.h[i] });
    for (const [v, w] of g.edges) dg.setEdge(String(v), String(w));
    dagre.layout(dg);
    const x = new Float64Array(g.n), y = new Float64Array(g.n);
    for (let i = 0; i < g.n; i++) { const d = dg.node(String(i)); x[i] = d.x; y[i] = d.y; }
    const pts = g.edges.map(([v, w]) => dg.edge(String(v), String(w)).points.flatMap((p) => [p.x, p.y]));
    return { x, y, pts };
  }

  // ELK's layered algorithm (Eclipse Layout Kernel, elkjs). Its bundle runs ELK in-process behind a fake worker, so
  // it lays the graph out here, in this worker, and never starts one of its own. Constructing the first ELK runs the
  // bundle's worker half, which sees a worker global and takes over self.onmessage: ours is put back.
  let elk = null;
  async function elkLayout(g) {
    if (!elk) { const ours = self.onmessage; elk = new ELK(); self.onmessage = ours; }
    const tb = g.dir === "TB", children = new Array(g.n);
    for (let i = 0; i < g.n; i++) children[i] = { id: String(i), width: g.w[i], height: g.h[i] };
    const graph = { id: "root", children, edges: g.edges.map(([v, u], k) => ({ id: `e${k}`, sources: [String(v)], targets: [String(u)] })) };
    const res = await elk.layout(graph, { layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": tb ? "DOWN" : "RIGHT",
      // orthogonal edges: the view rounds their corners. POLYLINE spreads the layers far apart when they are tall,
      // and SPLINES failed (a NullPointerException) on the 10,000-node test graph
      "elk.edgeRouting": "ORTHOGONAL",
      "elk.layered.nodePlacement.bk.fixedAlignment": "BALANCED",  // each node centred on its neighbours, as dagre
      // crossing minimisation is the part that grows fastest: fewer restarts on big graphs (default 7; 2,000 nodes
      // with long edges: 10.5 s at 7, 6.5 s at 1)
      "elk.layered.thoroughness": String(g.n > 4000 ? 1 : 3),
      "elk.spacing.nodeNode": "14", "elk.layered.spacing.nodeNodeBetweenLayers": "30", "elk.spacing.edgeEdge": "8",
      "elk.layered.spacing.edgeEdgeBetweenLayers": "8",
    } });
    const x = new Float64Array(g.n), y = new Float64Array(g.n);
    for (const c of res.children) { const i = +c.id; x[i] = c.x + c.width / 2; y[i] = c.y + c.height / 2; }
    const pts = new Array(g.edges.length);
    for (const e of res.edges) {
      const p = [];
      for (const sec of e.sections ?? []) {
        for (const q of [sec.startPoint, ...(sec.bendPoints ?? []), sec.endPoint]) {
          if (p.length && p[p.length - 2] === q.x && p[p.length - 1] === q.y) continue;  // (sections meet end to start)
          p.push(q.x, q.y);
        }
      }
      pts[+e.id.slice(1)] = p;
    }
    return { x, y, pts };
  }
  // the neighbourhood of the seeds, breadth first over edges in both directions
  function neighbourhood(n, edges, seeds, limit) {
    const adj = Array.from({ length: n }, () => []);
    for (let k = 0; k < edges.length; k += 3) { adj[edges[k]].push(edges[k + 1]); adj[edges[k + 1]].push(edges[k]); }
    const keep = new Set(seeds.slice(0, limit)), queue = [...keep];
    for (let k = 0; k < queue.length && keep.size < limit; k++) {
      for (const u of adj[queue[k]]) if (!keep.has(u) && keep.size < limit) { keep.add(u); queue.push(u); }
    }
    return [...keep].sort((a, b) => a - b);
  }

  // the engine for a graph of n nodes: dagre up to DAGRE_MAX, ELK above; whichever is there when the other is missing
  // (an export whose data/vendor_src.js lacks it)
  function engineFor(n) {
    const hasDagre = typeof dagre !== "undefined", hasElk = typeof ELK !== "undefined";
    if (!hasDagre && !hasElk) throw new Error("no layout library: the page could not load /vendor/dagre.min.js or /vendor/elk.bundled.js");
    return hasDagre && (n <= DAGRE_MAX || !hasElk) ? "dagre" : "elk";
  }

  async function run(req, subset, phase) {
    const t0 = performance.now(), { edges } = req;
    const local = new Map(subset.map((v, i) => [v, i]));
    const g = { n: subset.length, w: new Float64Array(subset.length), h: new Float64Array(subset.length), edges: [], dir: req.dir };
    subset.forEach((v, i) => {
      const lines = req.labels[v].split("\n");
      g.w[i] = Math.ceil(reduceMax(lines, measure)) + 2 * PAD_X;
      g.h[i] = lines.length * LINE_HEIGHT + 2 * PAD_Y;
    });
    const edgeIdx = [];
    for (let k = 0; k < edges.length / 3; k++) {
      const v = local.get(edges[3 * k]), u = local.get(edges[3 * k + 1]);
      if (v !== undefined && u !== undefined && v !== u) { g.edges.push([v, u]); edgeIdx.push(k); }
    }
    const engine = engineFor(g.n);
    const { x, y, pts } = engine === "dagre" ? dagreLayout(g) : await elkLayout(g);
    const box = new Float32Array(4 * g.n);
    for (let i = 0; i < g.n; i++) box.set([x[i], y[i], g.w[i], g.h[i]], 4 * i);
    const ptsOff = new Int32Array(pts.length + 1);
    pts.forEach((p, k) => { ptsOff[k + 1] = ptsOff[k] + p.length; });
    const msg = { phase, nodes: Int32Array.from(subset), box, edges: Int32Array.from(edgeIdx), pts: Float32Array.from(pts.flat()),
      ptsOff, engine, dir: req.dir, ms: performance.now() - t0 };
    postMessage(msg, [msg.nodes.buffer, msg.box.buffer, msg.edges.buffer, msg.pts.buffer, msg.ptsOff.buffer]);
  }

  // "auto": the direction in which the whole graph would fit the viewport at the larger zoom, estimated from the
  // longest-path ranks: deep graphs go top to bottom, wide ones left to right (labels are wider than tall)
  function pickDir(req) {
    const n = req.labels.length, E = req.edges, succs = Array.from({ length: n }, () => []), indeg = new Int32Array(n);
    for (let k = 0; k < E.length; k += 3) { succs[E[k]].push(E[k + 1]); indeg[E[k + 1]]++; }
    const rank = new Int32Array(n), order = [];
    for (let v = 0; v < n; v++) if (!indeg[v]) order.push(v);
    for (let k = 0; k < order.length; k++) {
      for (const u of succs[order[k]]) { rank[u] = Math.max(rank[u], rank[order[k]] + 1); if (--indeg[u] === 0) order.push(u); }
    }
    const per = new Map();
    for (const r of rank) per.set(r, (per.get(r) || 0) + 1);
    const depth = per.size, width = reduceMax(per.values(), (c) => c);
    let w = 0, h = 0;
    for (const l of req.labels) { const lines = l.split("\n"); w += Math.max(...lines.map(measure)) + 2 * PAD_X; h += lines.length * LINE_HEIGHT + 2 * PAD_Y; }
    [w, h] = [w / n, h / n];
    const [vw, vh] = req.viewport;
    const lr = Math.min(1.5, vw / (depth * (w + 30)), vh / (width * (h + 14)));
    const tb = Math.min(1.5, vw / (width * (w + 14)), vh / (depth * (h + 30)));
    return tb > lr ? "TB" : "LR";
  }

  self.onmessage = async (e) => {
    const req = e.data, n = req.labels.length;
    try {
      if (req.dir === "auto") req.dir = n ? pickDir(req) : "LR";
      if (n > PARTIAL_ABOVE) {
        let seeds = req.focus.filter((v) => v < n);
        if (!seeds.length) {  // no changes: start from the sinks (nodes nothing consumes)
          const used = new Uint8Array(n);
          for (let k = 0; k < req.edges.length; k += 3) used[req.edges[k]] = 1;
          for (let v = 0; v < n; v++) if (!used[v]) seeds.push(v);
        }
        await run(req, neighbourhood(n, req.edges, seeds, PARTIAL_SIZE), "partial");
      }
      await run(req, Array.from({ length: n }, (_, i) => i), "full");
    } catch (err) {
      postMessage({ phase: "error", message: String(err && err.stack || err) });
    }
  };
}
