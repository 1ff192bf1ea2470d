// The profiler: a timeline of GET /get_profile's Chrome trace events, one row per (pid, tid), boxes by ts/dur (µs).
"use strict";

const LEFT = 190, TOP = 30, ROW_H = 26, BOX_H = 18;
const PALETTE = ["#7aa2f7", "#9ece6a", "#e0af68", "#bb9af7", "#7dcfff", "#ff9e64", "#2ac3de", "#f7768e", "#73daca", "#c0caf5"];
const $ = (s) => document.querySelector(s);
const colorOf = (name) => { let h = 0; for (const c of name) h = (h * 31 + c.charCodeAt(0)) | 0; return PALETTE[Math.abs(h) % PALETTE.length]; };

function fmtTime(us) {
  const a = Math.abs(us);
  return a >= 1e6 ? `${+(us / 1e6).toFixed(3)} s` : a >= 1e3 ? `${+(us / 1e3).toFixed(3)} ms` : `${+us.toFixed(3)} µs`;
}

// trace events -> rows [{pid, tid, name, events: [{name, ts, dur, args}] sorted by ts}]
function parseTrace(trace) {
  const procs = new Map(), threads = new Map(), rows = new Map(), open = new Map();
  const row = (pid, tid) => {
    const k = `${pid}:${tid}`;
    if (!rows.has(k)) rows.set(k, { pid, tid, events: [] });
    return rows.get(k);
  };
  for (const e of trace.traceEvents ?? []) {
    if (e.ph === "M" && e.name === "process_name") procs.set(e.pid, e.args?.name);
    else if (e.ph === "M" && e.name === "thread_name") { threads.set(`${e.pid}:${e.tid}`, e.args?.name); row(e.pid, e.tid); }
    else if (e.ph === "X" || e.ph === "i" || e.ph === "I") row(e.pid, e.tid).events.push({ name: e.name, ts: +e.ts, dur: +(e.dur ?? 0), args: e.args });
    else if (e.ph === "B") { const k = `${e.pid}:${e.tid}`; if (!open.has(k)) open.set(k, []); open.get(k).push(e); }
    else if (e.ph === "E") {
      const b = open.get(`${e.pid}:${e.tid}`)?.pop();
      if (b) row(e.pid, e.tid).events.push({ name: b.name, ts: +b.ts, dur: e.ts - b.ts, args: { ...b.args, ...e.args } });
    }
  }
  const cmp = (a, b) => (typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b)));
  const out = [...rows.values()].sort((a, b) => cmp(a.pid, b.pid) || cmp(a.tid, b.tid));
  for (const r of out) {
    r.events.sort((a, b) => a.ts - b.ts);
    r.name = `${procs.get(r.pid) ?? `pid ${r.pid}`} · ${threads.get(`${r.pid}:${r.tid}`) ?? `tid ${r.tid}`}`;
  }
  return out;
}

function niceStep(span, px) {  // a 1/2/5 x 10^k tick step giving roughly one tick per 110 px
  const raw = span / Math.max(1, px / 110), p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
}

class Timeline {
  constructor(canvas, rows) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.rows = rows;
    [this.t0, this.t1] = [Infinity, -Infinity];
    for (const r of rows) for (const e of r.events) { this.t0 = Math.min(this.t0, e.ts); this.t1 = Math.max(this.t1, e.ts + e.dur); }
    if (this.t0 === Infinity) [this.t0, this.t1] = [0, 1];
    if (this.t1 <= this.t0) this.t1 = this.t0 + 1;
    this.fit();
    this.hover = null;
    new ResizeObserver(() => this.redraw()).observe(canvas);
    this.attachInput();
  }
  fit() { const pad = (this.t1 - this.t0) * 0.02; [this.v0, this.v1] = [this.t0 - pad, this.t1 + pad]; this.redraw(); }
  get width() { return this.canvas.getBoundingClientRect().width; }
  xOf(t) { return LEFT + ((t - this.v0) / (this.v1 - this.v0)) * (this.width - LEFT); }
  tOf(x) { return this.v0 + ((x - LEFT) / (this.width - LEFT)) * (this.v1 - this.v0); }
  redraw() { if (!this.pending) this.pending = requestAnimationFrame(() => { this.pending = 0; this.draw(); }); }

  draw() {
    const { canvas, ctx } = this, dpr = window.devicePixelRatio || 1, { width, height } = canvas.getBoundingClientRect();
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    // time axis and grid
    const step = niceStep(this.v1 - this.v0, width - LEFT);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    for (let t = Math.ceil((this.v0 - this.t0) / step) * step + this.t0; t <= this.v1; t += step) {
      const x = Math.round(this.xOf(t)) + 0.5;
      ctx.fillStyle = "#222738";
      ctx.fillRect(x, TOP, 1, height - TOP);
      ctx.fillStyle = "#8189a0";
      ctx.fillText(fmtTime(t - this.t0), x + 3, TOP / 2);
    }
    // rows: label gutter on the left, boxes clipped to the right of it
    this.rows.forEach((r, i) => {
      const y = TOP + i * ROW_H;
      if (i % 2) { ctx.fillStyle = "#ffffff06"; ctx.fillRect(0, y, width, ROW_H); }
      ctx.save();
      ctx.beginPath(); ctx.rect(LEFT, y, width - LEFT, ROW_H); ctx.clip();
      for (const e of r.events) {
        const x0 = this.xOf(e.ts), x1 = this.xOf(e.ts + e.dur);
        if (x1 < LEFT || x0 > width) continue;
        const w = Math.max(2, x1 - x0), by = y + (ROW_H - BOX_H) / 2;
        ctx.fillStyle = colorOf(e.name);
        ctx.globalAlpha = this.hover?.e === e ? 1 : 0.85;
        ctx.fillRect(x0, by, w, BOX_H);
        ctx.globalAlpha = 1;
        if (this.hover?.e === e) { ctx.strokeStyle = "#fff"; ctx.lineWidth = 1.5; ctx.strokeRect(x0, by, w, BOX_H); }
        if (w > 30) {  // the name, cut to fit inside the box
          ctx.fillStyle = "#11131a";
          const vis0 = Math.max(x0, LEFT) + 4, room = Math.min(x1, width) - vis0 - 4;
          let s = e.name;
          while (s.length > 1 && ctx.measureText(s).width > room) s = s.slice(0, -2) + "…";
          if (room > 12) ctx.fillText(s, vis0, by + BOX_H / 2 + 0.5);
        }
      }
      ctx.restore();
      ctx.fillStyle = "#141722";
      ctx.fillRect(0, y, LEFT - 1, ROW_H);
      ctx.fillStyle = "#d5d9e6";
      ctx.fillText(r.name, 10, y + ROW_H / 2, LEFT - 20);
    });
    ctx.fillStyle = "#272c3c";
    ctx.fillRect(LEFT - 1, 0, 1, height);
    ctx.fillRect(0, TOP - 1, width, 1);
  }

  pick(x, y) {
    const i = Math.floor((y - TOP) / ROW_H), r = this.rows[i];
    if (!r || x < LEFT) return null;
    const t = this.tOf(x), slack = (this.v1 - this.v0) * (2 / (this.width - LEFT));  // 2 px, for tiny boxes
    let best = null;
    for (const e of r.events) if (t >= e.ts - slack && t <= e.ts + e.dur + slack) best = e;  // the last (innermost) one
    return best && { e: best, row: r };
  }

  attachInput() {
    const c = this.canvas, local = (ev) => { const b = c.getBoundingClientRect(); return [ev.clientX - b.left, ev.clientY - b.top]; };
    c.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const [x] = local(ev);
      if (ev.shiftKey) { const d = (ev.deltaY / (this.width - LEFT)) * (this.v1 - this.v0); this.v0 += d; this.v1 += d; }
      else {
        const t = this.tOf(Math.max(LEFT, x)), f = Math.exp(ev.deltaY * 0.0015);
        const span = Math.max(1e-3, (this.v1 - this.v0) * f);
        this.v0 = t - (t - this.v0) * (span / (this.v1 - this.v0));
        this.v1 = this.v0 + span;
      }
      this.redraw();
    }, { passive: false });
    let drag = null;
    c.addEventListener("pointerdown", (ev) => { drag = { x: ev.clientX, v0: this.v0, v1: this.v1 }; c.setPointerCapture(ev.pointerId); });
    c.addEventListener("pointerup", () => { drag = null; });
    c.addEventListener("dblclick", () => this.fit());
    const tip = $("#tooltip");
    c.addEventListener("pointermove", (ev) => {
      if (drag) {
        const d = ((ev.clientX - drag.x) / (this.width - LEFT)) * (drag.v1 - drag.v0);
        [this.v0, this.v1] = [drag.v0 - d, drag.v1 - d];
        return this.redraw();
      }
      const [x, y] = local(ev), h = this.pick(x, y);
      if (h?.e !== this.hover?.e) { this.hover = h; this.redraw(); }
      if (!h) { tip.hidden = true; return; }
      const args = h.e.args && Object.keys(h.e.args).length ? "\n" + Object.entries(h.e.args).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join("\n") : "";
      tip.textContent = `${h.e.name}\n${h.row.name}\nstart ${fmtTime(h.e.ts - this.t0)} · duration ${fmtTime(h.e.dur)}${args}`;
      tip.hidden = false;
      tip.style.left = `${Math.min(x + 14, this.width - 300)}px`;
      tip.style.top = `${y + 14}px`;
    });
    c.addEventListener("pointerleave", () => { tip.hidden = true; if (this.hover) { this.hover = null; this.redraw(); } });
  }
}

function renderSummary(rows) {  // total time per event name, biggest first
  const by = new Map();
  for (const r of rows) for (const e of r.events) {
    const s = by.get(e.name) ?? { name: e.name, n: 0, total: 0 };
    s.n++; s.total += e.dur;
    by.set(e.name, s);
  }
  const list = [...by.values()].sort((a, b) => b.total - a.total).slice(0, 100), all = list.reduce((a, s) => a + s.total, 0) || 1;
  const tr = (cells, tag = "td") => `<tr>${cells.map((c) => `<${tag}>${c}</${tag}>`).join("")}</tr>`;
  $("#summary").innerHTML = `<table>${tr(["name", "count", "total", "average", "share"], "th")}` +
    list.map((s) => tr([escapeHtml(s.name), s.n, fmtTime(s.total), fmtTime(s.total / s.n), `${((100 * s.total) / all).toFixed(1)}%`])).join("") + "</table>";
}

async function main() {
  $("#explorer-link").href = IS_FILE ? "index.html" : "./";
  const trace = await getProfile();
  const box = $("#timeline");
  if (!trace) {
    box.replaceChildren(Object.assign(document.createElement("div"), { className: "empty",
      textContent: "No profile in this trace: run the program with PROFILE=1 (and VIZ=1) to record one." }));
    $("#summary").remove();
    return;
  }
  const rows = parseTrace(trace), n = rows.reduce((a, r) => a + r.events.length, 0);
  Object.assign(box.dataset, { rows: rows.length, events: n });
  const tl = new Timeline($("#timeline-canvas"), rows);
  $("#crumbs").textContent = `${fmtCount(n)} events on ${rows.length} rows · span ${fmtTime(tl.t1 - tl.t0)}`;
  $("#fit-btn").onclick = () => tl.fit();
  renderSummary(rows);
  window.tgViz = { rows, timeline: tl };
}

main();
