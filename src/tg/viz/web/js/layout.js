// The graph layout worker. The page never runs this function: it puts its source, and the layout libraries' (dagre's
// and elkjs's bundles, vendor.txt), into a Blob and starts a Worker from it (index.js makeLayoutWorker), which works
// both over HTTP and from a file:// export (there the libraries' text comes from data/vendor_src.js).
//
// Request: {labels: [string], edges: Int32Array [src, dst, count]*, focus: [node index], dir: "LR" | "TB" | "auto",
//           viewport: [width, height]}
// Replies: {phase: "partial" | "full", nodes: Int32Array (indices laid out), box: Float32Array [x, y, w, h]* (centres),
//           edges: Int32Array (indices into the request's edges), pts: Float32Array (each edge's points, from
//           ptsOff[k] to ptsOff[k+1]), engine: "dagre" | "elk", dir, ms}, or {phase: "error", message}
// The layout is a library's, never one of our own: dagre (as tinygrad's VIZ) for small graphs, where it is the faster
// one, and ELK's layered algorithm (Eclipse Layout Kernel, the elkjs package) for big ones: dagre slows down fast with
// the size and the edges' lengths (engineFor), ELK lays a 10,000-node graph out in 10-15 s. Big graphs get a "partial"
// reply first, the neighbourhood of the focus (changed nodes, else the sinks) laid out by dagre, so the page shows
// something at once, then the "full" one. Everything runs here, off the page's main thread.
"use strict";

function tgLayoutWorker() {
  const FONT = "12px 'DejaVu Sans Mono', Menlo, Consolas, monospace", LINE_HEIGHT = 15, PAD_X = 8, PAD_Y = 6;
  const PARTIAL_ABOVE = 300, PARTIAL_SIZE = 200, DAGRE_MAX = 4000;  // (DAGRE_MAX: see engineFor)
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
  const ELK_OPTIONS = {
    "elk.algorithm": "layered",
    // orthogonal edges (the view rounds their corners): POLYLINE spreads the layers far apart when they are tall, and
    // SPLINES failed (a NullPointerException) on the 10,000-node test graph
    "elk.edgeRouting": "ORTHOGONAL",
    "elk.layered.nodePlacement.bk.fixedAlignment": "BALANCED",  // each node centred on its neighbours, as dagre does
    // one layered layout for the whole graph: splitting it into connected components is a recursive search, and
    // tinygrad's big graphs are one component (a SINK) anyway
    "elk.separateConnectedComponents": "false",
    "elk.spacing.nodeNode": "14", "elk.layered.spacing.nodeNodeBetweenLayers": "30", "elk.spacing.edgeEdge": "8",
    "elk.layered.spacing.edgeEdgeBetweenLayers": "8",
  };
  // ELK is Java compiled to JavaScript, and some of its phases recurse once per node on a path: a deep graph (a chain of
  // ~5,000 nodes) overflows a worker's stack in network-simplex layering or in Brandes & Koepf node placement. Such a
  // graph is laid out again with layers in model order (breadth first, the nodes given each after its sources) and
  // the simple node placement, which don't.
  const ELK_DEEP_OPTIONS = { "elk.layered.layering.strategy": "BF_MODEL_ORDER", "elk.layered.nodePlacement.strategy": "SIMPLE" };
  let elk = null;
  async function elkLayout(g) {
    if (!elk) { const ours = self.onmessage; elk = new ELK(); self.onmessage = ours; }
    const layout = (order, extra) => {
      const children = order.map((i) => ({ id: String(i), width: g.w[i], height: g.h[i] }));
      const edges = g.edges.map(([v, u], k) => ({ id: `e${k}`, sources: [String(v)], targets: [String(u)] }));
      return elk.layout({ id: "root", children, edges }, { layoutOptions: { ...ELK_OPTIONS,
        "elk.direction": g.dir === "TB" ? "DOWN" : "RIGHT",
        // crossing minimisation grows fastest with the size: fewer restarts on big graphs (the default is 7; a
        // 2,000-node graph with long edges: 10.5 s at 7, 6.5 s at 1)
        "elk.layered.thoroughness": String(g.n > 4000 ? 1 : 3), ...extra } });
    };
    let res;
    try {
      res = await layout(Array.from({ length: g.n }, (_, i) => i), {});
    } catch (err) {
      if (!/call stack/i.test(String(err))) throw err;
      res = await layout(depthFirstOrder(g), ELK_DEEP_OPTIONS);
    }
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

  // g's nodes, each right after its sources (depth first from the sinks, without recursion): the model order that
  // BF_MODEL_ORDER layers by. (Sources first, the order of Kahn's algorithm, would put every source in the first layer,
  // with edges across the whole graph: a 7,500-node chain then runs out of memory.)
  function depthFirstOrder(g) {
    const preds = Array.from({ length: g.n }, () => []), used = new Uint8Array(g.n), state = new Uint8Array(g.n), order = [];
    for (const [v, u] of g.edges) { preds[u].push(v); used[v] = 1; }
    const visit = (root) => {
      const stack = [root];
      while (stack.length) {
        const v = stack[stack.length - 1];
        if (state[v] === 0) {  // first time: its sources go on top, it waits for them
          state[v] = 1;
          for (let k = preds[v].length - 1; k >= 0; k--) if (state[preds[v][k]] === 0) stack.push(preds[v][k]);
        } else {
          stack.pop();
          if (state[v] === 1) { state[v] = 2; order.push(v); }
        }
      }
    };
    for (let v = 0; v < g.n; v++) if (!used[v]) visit(v);  // from the sinks (nodes nothing consumes)
    for (let v = 0; v < g.n; v++) if (state[v] === 0) visit(v);  // (nodes only on cycles)
    return order;
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

  // dagre's time grows with its layered graph, the nodes plus a dummy node for each rank an edge passes (1,000 nodes:
  // 2 s as a tree, 16 s when the edges reach up to 30 nodes back, where ELK takes 4.5 s; 2,000 such nodes: 81 s). So
  // dagre lays out the first view of a big graph and the graphs whose layered size, estimated with each node ranked by
  // its longest path to a sink, is at most DAGRE_MAX; ELK the others. Either does all when the other is missing (an
  // export whose data/vendor_src.js lacks it).
  function layeredSize(g) {
    const preds = Array.from({ length: g.n }, () => []), out = new Int32Array(g.n), rank = new Int32Array(g.n), order = [];
    for (const [v, u] of g.edges) { preds[u].push(v); out[v]++; }
    for (let v = 0; v < g.n; v++) if (!out[v]) order.push(v);
    for (let k = 0; k < order.length; k++) {
      const u = order[k];
      for (const v of preds[u]) { rank[v] = Math.max(rank[v], rank[u] + 1); if (--out[v] === 0) order.push(v); }
    }
    let size = g.n;
    for (const [v, u] of g.edges) size += Math.max(0, rank[v] - rank[u] - 1);
    return size;
  }
  function engineFor(g, phase) {
    const hasDagre = typeof dagre !== "undefined", hasElk = typeof ELK !== "undefined";
    if (!hasDagre && !hasElk) throw new Error("no layout library: the page could not load /vendor/dagre.min.js or /vendor/elk.bundled.js");
    if (!hasDagre || !hasElk) return hasDagre ? "dagre" : "elk";
    return phase === "partial" || layeredSize(g) <= DAGRE_MAX ? "dagre" : "elk";
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
    let engine = engineFor(g, phase), out;
    try {
      out = engine === "dagre" ? dagreLayout(g) : await elkLayout(g);
    } catch (err) {  // dagre recurses once per node on a path too, deeper than ELK: a 1,500-node chain overflows the stack
      if (engine !== "dagre" || typeof ELK === "undefined" || !/call stack/i.test(String(err))) throw err;
      engine = "elk";
      out = await elkLayout(g);
    }
    const { x, y, pts } = out;
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
