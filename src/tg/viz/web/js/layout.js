// The graph layout worker. The page never runs this function: it puts its source (and dagre's) into a Blob and
// starts a Worker from it (index.js makeLayoutWorker), which works both over HTTP and from a file:// export.
//
// Request: {labels: [string], edges: Int32Array [src, dst, count]*, focus: [node index], dir: "LR" | "TB" | "auto",
//           viewport: [width, height]}
// Replies: {phase: "partial" | "full", nodes: Int32Array (indices laid out), box: Float32Array [x, y, w, h]* (centres),
//           edges: Int32Array (indices into the request's edges), pts: Float32Array (each edge's points, from
//           ptsOff[k] to ptsOff[k+1]), engine: "dagre" | "layered", dir, ms}, or {phase: "error", message}
// Big graphs get a "partial" reply first: the neighbourhood of the focus (changed nodes, else the sinks), so the page
// shows something at once, then the "full" one. dagre slows down fast with the size (2,000 nodes take ~15 s, 10,000
// run out of memory), so graphs above DAGRE_MAX use layeredLayout below: Sugiyama-style ranks, barycentre ordering and
// straight edges, linear in the graph size.
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

  function layeredLayout(g) {  // laid out left to right; top to bottom is the same with x and y swapped
    const tb = g.dir === "TB", n = g.n, w = tb ? g.h : g.w, h = tb ? g.w : g.h, RANK_GAP = 60, NODE_GAP = 12;
    const preds = Array.from({ length: n }, () => []), succs = Array.from({ length: n }, () => []);
    for (const [v, u] of g.edges) { succs[v].push(u); preds[u].push(v); }
    // topological order (Kahn); anything left in a cycle goes last
    const indeg = preds.map((p) => p.length), order = [];
    for (let i = 0; i < n; i++) if (indeg[i] === 0) order.push(i);
    for (let k = 0; k < order.length; k++) for (const u of succs[order[k]]) if (--indeg[u] === 0) order.push(u);
    if (order.length < n) { const seen = new Set(order); for (let i = 0; i < n; i++) if (!seen.has(i)) order.push(i); }
    // rank = longest path from the sources, then pull every node right up against its first consumer (short edges)
    const rank = new Int32Array(n);
    for (const v of order) for (const u of succs[v]) rank[u] = Math.max(rank[u], rank[v] + 1);
    for (let k = n - 1; k >= 0; k--) {
      const v = order[k];
      if (succs[v].length) rank[v] = Math.max(rank[v], -reduceMax(succs[v], (u) => -rank[u]) - 1);
    }
    const nranks = reduceMax(rank, (r) => r, -1) + 1, layers = Array.from({ length: nranks }, () => []);
    // first order within ranks: depth first from the sinks, so each subtree's nodes start out next to each other
    const seen = new Uint8Array(n), stack = [];
    for (let k = n - 1; k >= 0; k--) if (!succs[order[k]].length) stack.push(order[k]);
    stack.reverse();
    while (stack.length) {
      const v = stack.pop();
      if (seen[v]) continue;
      seen[v] = 1;
      layers[rank[v]].push(v);
      for (let j = preds[v].length - 1; j >= 0; j--) if (!seen[preds[v][j]]) stack.push(preds[v][j]);
    }
    for (const v of order) if (!seen[v]) layers[rank[v]].push(v);  // (only in cycles)
    // then barycentre sweeps, right to left (from the sink) then left to right
    const pos = new Float64Array(n);
    const setPos = (layer) => layer.forEach((v, i) => { pos[v] = i; });
    layers.forEach(setPos);
    const sweep = (r, nb) => {
      const key = new Map(layers[r].map((v) => [v, nb[v].length ? nb[v].reduce((a, u) => a + pos[u], 0) / nb[v].length : pos[v]]));
      layers[r].sort((a, b) => key.get(a) - key.get(b));
      setPos(layers[r]);
    };
    for (let it = 0; it < 4; it++) {
      for (let r = nranks - 2; r >= 0; r--) sweep(r, succs);
      for (let r = 1; r < nranks; r++) sweep(r, preds);
    }
    // x: columns as wide as their widest node; y: pull towards the neighbours' mean, keep order and spacing
    const x = new Float64Array(n), y = new Float64Array(n);
    let cx = 0;
    for (const layer of layers) {
      const cw = reduceMax(layer, (v) => w[v]);
      for (const v of layer) x[v] = cx + cw / 2;
      cx += cw + RANK_GAP;
      let cy = 0;
      for (const v of layer) { y[v] = cy + h[v] / 2; cy += h[v] + NODE_GAP; }
      for (const v of layer) y[v] -= cy / 2;  // centre each column on y=0
    }
    const pack = (layer) => {  // remove overlaps top to bottom, then shift back so the mean position is kept
      let shift = 0, prev = -Infinity;
      for (const v of layer) {
        const want = y[v];
        y[v] = Math.max(want, prev + NODE_GAP + h[v] / 2);
        prev = y[v] + h[v] / 2;
        shift += y[v] - want;
      }
      shift /= layer.length || 1;
      for (const v of layer) y[v] -= shift;
    };
    for (let it = 0; it < 6; it++) {
      const up = it % 2 === 0, nb = up ? succs : preds;
      for (let k = 0; k < nranks; k++) {
        const layer = layers[up ? nranks - 1 - k : k];
        for (const v of layer) if (nb[v].length) y[v] = 0.5 * y[v] + 0.5 * nb[v].reduce((a, u) => a + y[u], 0) / nb[v].length;
        pack(layer);
      }
    }
    const pts = g.edges.map(([v, u]) => (tb ? [y[v], x[v] + w[v] / 2, y[u], x[u] - w[u] / 2] : [x[v] + w[v] / 2, y[v], x[u] - w[u] / 2, y[u]]));
    return tb ? { x: y, y: x, pts } : { x, y, pts };
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

  function run(req, subset, phase) {
    const t0 = performance.now(), { edges } = req;
    const local = new Map(subset.map((v, i) => [v, i]));
    const g = { n: subset.length, w: new Float64Array(subset.length), h: new Float64Array(subset.length), edges: [], dir: req.dir };
    subset.forEach((v, i) => {
      const lines = req.labels[v].split("\n");
      g.w[i] = Math.ceil(Math.max(...lines.map(measure))) + 2 * PAD_X;
      g.h[i] = lines.length * LINE_HEIGHT + 2 * PAD_Y;
    });
    const edgeIdx = [];
    for (let k = 0; k < edges.length / 3; k++) {
      const v = local.get(edges[3 * k]), u = local.get(edges[3 * k + 1]);
      if (v !== undefined && u !== undefined && v !== u) { g.edges.push([v, u]); edgeIdx.push(k); }
    }
    const useDagre = typeof dagre !== "undefined" && g.n <= DAGRE_MAX;  // (no dagre: an export without vendor_src.js)
    const { x, y, pts } = (useDagre ? dagreLayout : layeredLayout)(g);
    const box = new Float32Array(4 * g.n);
    for (let i = 0; i < g.n; i++) box.set([x[i], y[i], g.w[i], g.h[i]], 4 * i);
    const ptsOff = new Int32Array(pts.length + 1);
    pts.forEach((p, k) => { ptsOff[k + 1] = ptsOff[k] + p.length; });
    const msg = { phase, nodes: Int32Array.from(subset), box, edges: Int32Array.from(edgeIdx), pts: Float32Array.from(pts.flat()),
      ptsOff, engine: useDagre ? "dagre" : "layered", dir: req.dir, ms: performance.now() - t0 };
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

  self.onmessage = (e) => {
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
        run(req, neighbourhood(n, req.edges, seeds, PARTIAL_SIZE), "partial");
      }
      run(req, Array.from({ length: n }, (_, i) => i), "full");
    } catch (err) {
      postMessage({ phase: "error", message: String(err && err.stack || err) });
    }
  };
}
