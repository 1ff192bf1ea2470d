// GraphView: draws a laid-out UOp graph on a canvas, with pan (drag), zoom (wheel) and node picking.
// Drawing is culled to the viewport and drops the text when it would be too small to read, so a 10,000-node graph
// redraws in a few milliseconds.
"use strict";

const GRAPH_FONT = "12px 'DejaVu Sans Mono', Menlo, Consolas, monospace", GRAPH_LINE_HEIGHT = 15, GRAPH_PAD = [8, 6];
const CHANGED_COLOR = "#ff9e3b", EDGE_COLOR = "#5c6378", NODE_STROKE = "#2b2f3d";

const darkCache = new Map();
function isDark(color) {  // "#rrggbb" with a luminance under 0.5
  let d = darkCache.get(color);
  if (d === undefined) {
    const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color || "");
    d = !!m && (0.2126 * parseInt(m[1], 16) + 0.7152 * parseInt(m[2], 16) + 0.0722 * parseInt(m[3], 16)) / 255 < 0.5;
    darkCache.set(color, d);
  }
  return d;
}

class GraphView {
  constructor(canvas, { onNodeClick, onHover }) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.cam = { x: 0, y: 0, k: 1 };  // screen = world * k + (x, y), in CSS pixels
    this.g = null;                     // {model, nodes: [{i, x, y, w, h}], edges: [{i, pts, bbox}], changed: Set<node index>}
    this.hover = -1;
    this.onNodeClick = onNodeClick;
    this.onHover = onHover;
    new ResizeObserver(() => this.redraw()).observe(canvas);
    this.attachInput();
  }

  // model: {ids, nodes: [{label, color, ref, tag}], edges: Int32Array}; layout: a worker reply
  setGraph(model, layout, changed) {
    const nodes = [], byIndex = new Map();
    for (let k = 0; k < layout.nodes.length; k++) {
      const b = layout.box.subarray(4 * k, 4 * k + 4);
      const nd = { i: layout.nodes[k], x: b[0], y: b[1], w: b[2], h: b[3] };
      nodes.push(nd);
      byIndex.set(nd.i, nd);
    }
    const edges = [];
    for (let k = 0; k < layout.edges.length; k++) {
      const pts = layout.pts.subarray(layout.ptsOff[k], layout.ptsOff[k + 1]);
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (let j = 0; j < pts.length; j += 2) {
        x0 = Math.min(x0, pts[j]); x1 = Math.max(x1, pts[j]); y0 = Math.min(y0, pts[j + 1]); y1 = Math.max(y1, pts[j + 1]);
      }
      edges.push({ i: layout.edges[k], count: model.edges[3 * layout.edges[k] + 2], pts, bbox: [x0, y0, x1, y1] });
    }
    this.g = { model, nodes, byIndex, edges, changed: new Set([...changed].filter((i) => byIndex.has(i))), layout };
    this.hover = -1;
    this.onHover(-1);
    this.redraw();
  }

  clear() { this.g = null; this.hover = -1; this.onHover(-1); this.redraw(); }

  bounds(indices) {  // world bounding box of some node indices (all when omitted)
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const nd of indices ? indices.map((i) => this.g.byIndex.get(i)).filter(Boolean) : this.g.nodes) {
      x0 = Math.min(x0, nd.x - nd.w / 2); x1 = Math.max(x1, nd.x + nd.w / 2);
      y0 = Math.min(y0, nd.y - nd.h / 2); y1 = Math.max(y1, nd.y + nd.h / 2);
    }
    return x0 === Infinity ? null : [x0, y0, x1, y1];
  }

  // zoom to show a world box (the whole graph by default), zooming in at most to maxK
  fit(box = this.g && this.bounds(), maxK = 1.5) {
    if (!box) return;
    const { width, height } = this.canvas.getBoundingClientRect(), pad = 32;
    const k = Math.min(maxK, (width - 2 * pad) / Math.max(1, box[2] - box[0]), (height - 2 * pad) / Math.max(1, box[3] - box[1]));
    this.cam = { k, x: width / 2 - k * (box[0] + box[2]) / 2, y: height / 2 - k * (box[1] + box[3]) / 2 };
    this.redraw();
  }

  // the node closest to the middle of the screen, with its screen position (keeps the view steady across layouts)
  anchor() {
    if (!this.g || !this.g.nodes.length) return null;
    const { width, height } = this.canvas.getBoundingClientRect();
    const wx = (width / 2 - this.cam.x) / this.cam.k, wy = (height / 2 - this.cam.y) / this.cam.k;
    let best = null, bd = Infinity;
    for (const nd of this.g.nodes) {
      const d = (nd.x - wx) ** 2 + (nd.y - wy) ** 2;
      if (d < bd) { bd = d; best = nd; }
    }
    return { id: this.g.model.ids[best.i], sx: best.x * this.cam.k + this.cam.x, sy: best.y * this.cam.k + this.cam.y };
  }

  // put the node with anchor's id back where it was on screen; false if it's gone
  restoreAnchor(a) {
    const i = a && this.g.model.index.get(a.id), nd = i !== undefined && this.g.byIndex.get(i);
    if (!nd) return false;
    this.cam.x = a.sx - nd.x * this.cam.k;
    this.cam.y = a.sy - nd.y * this.cam.k;
    this.redraw();
    return true;
  }

  redraw() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => { this.pending = 0; this.draw(); });
  }

  draw() {
    const { canvas, ctx, cam } = this, dpr = window.devicePixelRatio || 1;
    const { width, height } = canvas.getBoundingClientRect();
    if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(height * dpr);
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    if (!this.g) return;
    ctx.setTransform(dpr * cam.k, 0, 0, dpr * cam.k, dpr * cam.x, dpr * cam.y);
    // the visible world rectangle, for culling
    const vx0 = -cam.x / cam.k, vy0 = -cam.y / cam.k, vx1 = (width - cam.x) / cam.k, vy1 = (height - cam.y) / cam.k;
    const visible = (x0, y0, x1, y1) => x1 >= vx0 && x0 <= vx1 && y1 >= vy0 && y0 <= vy1;
    const { model, nodes, edges, changed } = this.g, tb = this.g.layout.dir === "TB";

    // edges: one path for all of them; arrowheads and multiplicity badges only when big enough to see
    ctx.strokeStyle = EDGE_COLOR;
    ctx.lineWidth = Math.max(1.2, 0.8 / cam.k);
    ctx.beginPath();
    const ends = [];
    for (const e of edges) {
      if (!visible(...e.bbox)) continue;
      const p = e.pts, n = p.length / 2;
      ctx.moveTo(p[0], p[1]);
      if (n === 2 && tb) {  // two points (a straight edge): an S curve along the rank direction
        const dy = Math.max(20, (p[3] - p[1]) / 2);
        ctx.bezierCurveTo(p[0], p[1] + dy, p[2], p[3] - dy, p[2], p[3]);
      } else if (n === 2) {
        const dx = Math.max(20, (p[2] - p[0]) / 2);
        ctx.bezierCurveTo(p[0] + dx, p[1], p[2] - dx, p[3], p[2], p[3]);
      } else {  // the layout's points (dagre's control points, ELK's bends): curve through their midpoints
        for (let j = 1; j < n - 1; j++) ctx.quadraticCurveTo(p[2 * j], p[2 * j + 1], (p[2 * j] + p[2 * j + 2]) / 2, (p[2 * j + 1] + p[2 * j + 3]) / 2);
        ctx.lineTo(p[2 * n - 2], p[2 * n - 1]);
      }
      ends.push(e);
    }
    ctx.stroke();
    this.drawnEdges = ends.length;
    if (cam.k > 0.25) {
      // the direction into an edge's end: along the ranks for S curves, else from the last control point
      const into = (p) => {
        const n = p.length / 2, [x, y] = [p[2 * n - 2], p[2 * n - 1]];
        const [dx, dy] = n === 2 ? (tb ? [0, 1] : [1, 0]) : [x - p[2 * n - 4], y - p[2 * n - 3]], len = Math.hypot(dx, dy) || 1;
        return [x, y, dx / len, dy / len];
      };
      ctx.fillStyle = EDGE_COLOR;
      ctx.beginPath();
      for (const e of ends) {
        const [x, y, dx, dy] = into(e.pts);
        ctx.moveTo(x, y);
        ctx.lineTo(x - 8 * dx - 4 * dy, y - 8 * dy + 4 * dx);
        ctx.lineTo(x - 8 * dx + 4 * dy, y - 8 * dy - 4 * dx);
        ctx.closePath();
      }
      ctx.fill();
      ctx.font = "bold 9px sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      for (const e of ends) {
        if (e.count < 2) continue;
        const [ex, ey, dx, dy] = into(e.pts), [x, y] = [ex - 16 * dx, ey - 16 * dy];
        ctx.fillStyle = "#e0af68";
        ctx.beginPath(); ctx.arc(x, y, 6, 0, 2 * Math.PI); ctx.fill();
        ctx.fillStyle = "#1a1b26";
        ctx.fillText(String(e.count), x, y + 0.5);
      }
    }

    // nodes
    const showText = cam.k * 12 >= 4.5;
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    ctx.font = GRAPH_FONT;
    let drawn = 0;
    for (const nd of nodes) {
      const x0 = nd.x - nd.w / 2, y0 = nd.y - nd.h / 2;
      if (!visible(x0, y0, x0 + nd.w, y0 + nd.h)) continue;
      drawn++;
      const m = model.nodes[nd.i];
      // rounded boxes when zoomed in; plain rectangles (much cheaper) when 10,000 of them are on screen
      const box = (pad) => {
        ctx.beginPath();
        if (showText) ctx.roundRect(x0 - pad, y0 - pad, nd.w + 2 * pad, nd.h + 2 * pad, 4 + pad);
        else ctx.rect(x0 - pad, y0 - pad, nd.w + 2 * pad, nd.h + 2 * pad);
      };
      if (changed.has(nd.i)) {  // a glow behind the changed nodes
        ctx.fillStyle = "rgba(255, 158, 59, 0.3)";
        box(Math.max(5, 3 / cam.k));
        ctx.fill();
      }
      ctx.fillStyle = m.color || "#ffffff";
      box(0);
      ctx.fill();
      const ring = changed.has(nd.i) ? [CHANGED_COLOR, 2.5] : nd.i === this.hover ? ["#7aa2f7", 2] : m.ref != null ? ["#7aa2f7", 1.5] : null;
      if (ring || showText) {
        ctx.strokeStyle = ring ? ring[0] : NODE_STROKE;
        ctx.lineWidth = ring ? ring[1] : 1;
        ctx.stroke();
      }
      if (!showText) continue;
      const dark = isDark(m.color);  // light text on dark fills (KERNEL, COPY)
      ctx.fillStyle = dark ? "#f0f2f8" : "#15161e";
      const lines = m.label.split("\n");
      for (let j = 0; j < lines.length; j++) {
        if (m.ref != null && j === lines.length - 1) ctx.fillStyle = dark ? "#b4ccff" : "#1f4fb8";  // the kernel link line
        ctx.fillText(lines[j], x0 + GRAPH_PAD[0], y0 + GRAPH_PAD[1] + j * GRAPH_LINE_HEIGHT + 1);
      }
      if (m.tag != null) {  // tag badge on the top-left corner
        ctx.fillStyle = "#ffd700";
        ctx.beginPath(); ctx.arc(x0, y0, 7, 0, 2 * Math.PI); ctx.fill();
        ctx.fillStyle = "#000";
        ctx.font = "bold 8px sans-serif";
        ctx.textAlign = "center";
        ctx.fillText(String(m.tag).slice(0, 3), x0, y0 - 4);
        ctx.font = GRAPH_FONT;
        ctx.textAlign = "left";
      }
    }
    this.drawnNodes = drawn;
  }

  pick(sx, sy) {  // node index under a screen point, or -1
    if (!this.g) return -1;
    const wx = (sx - this.cam.x) / this.cam.k, wy = (sy - this.cam.y) / this.cam.k;
    for (const nd of this.g.nodes) if (Math.abs(wx - nd.x) <= nd.w / 2 && Math.abs(wy - nd.y) <= nd.h / 2) return nd.i;
    return -1;
  }

  zoomAt(sx, sy, factor) {
    const k = Math.min(8, Math.max(0.002, this.cam.k * factor));
    this.cam.x = sx - (sx - this.cam.x) * (k / this.cam.k);
    this.cam.y = sy - (sy - this.cam.y) * (k / this.cam.k);
    this.cam.k = k;
    this.redraw();
  }

  attachInput() {
    const c = this.canvas, local = (e) => { const r = c.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
    c.addEventListener("wheel", (e) => {
      e.preventDefault();
      const [sx, sy] = local(e);
      if (e.ctrlKey || !e.shiftKey) this.zoomAt(sx, sy, Math.exp(-e.deltaY * (e.deltaMode ? 0.05 : 0.0015)));
      else { this.cam.x -= e.deltaY; this.redraw(); }  // shift+wheel pans sideways
    }, { passive: false });
    let drag = null;
    c.addEventListener("pointerdown", (e) => {
      drag = { sx: e.clientX, sy: e.clientY, cx: this.cam.x, cy: this.cam.y, moved: false };
      c.setPointerCapture(e.pointerId);
    });
    c.addEventListener("pointermove", (e) => {
      if (drag) {
        const dx = e.clientX - drag.sx, dy = e.clientY - drag.sy;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (drag.moved) {
          this.cam.x = drag.cx + dx; this.cam.y = drag.cy + dy;
                this.redraw();
        }
        return;
      }
      const i = this.pick(...local(e));
      if (i !== this.hover) {
        this.hover = i;
        c.style.cursor = i >= 0 && this.g.model.nodes[i].ref != null ? "pointer" : "default";
        this.onHover(i, e);
        this.redraw();
      } else if (i >= 0) this.onHover(i, e);
    });
    c.addEventListener("pointerup", (e) => {
      if (drag && !drag.moved) { const i = this.pick(...local(e)); if (i >= 0) this.onNodeClick(i); }
      drag = null;
    });
    c.addEventListener("pointerleave", () => { if (this.hover >= 0) { this.hover = -1; this.onHover(-1); this.redraw(); } });
  }
}
