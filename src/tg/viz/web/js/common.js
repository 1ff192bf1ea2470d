// Shared by index.html and profiler.html: the data source (the server's endpoints, or the static export's data/*.js
// files when opened from file://), ANSI colours and a small syntax highlighter.
"use strict";

const IS_FILE = location.protocol === "file:";

// *** data source ***

// file://: fetch() and EventSource are blocked, so each data file is a script that calls tgVizData(key, value)
const dataWaiters = new Map();  // key -> [resolve, reject]
window.tgVizData = (key, value) => {
  const w = dataWaiters.get(key);
  if (w) { dataWaiters.delete(key); w[0](value); }
};
function loadDataScript(key) {
  return new Promise((resolve, reject) => {
    dataWaiters.set(key, [resolve, reject]);
    const s = document.createElement("script");
    s.src = `data/${key}.js`;
    s.onerror = () => { dataWaiters.delete(key); reject(new Error(`can't load data/${key}.js`)); };
    s.onload = () => s.remove();  // the data lives on in the resolved value, not in the DOM
    document.head.appendChild(s);
  });
}

async function getCtxs() {
  if (IS_FILE) return loadDataScript("ctxs");
  const r = await fetch("ctxs");
  if (!r.ok) throw new Error(`GET /ctxs: ${r.status}`);
  return r.json();
}

// the profile (Chrome trace-event JSON) or null when the run had no PROFILE=1
async function getProfile() {
  if (IS_FILE) return loadDataScript("profile").catch(() => null);
  const r = await fetch("get_profile");
  return r.ok ? r.json() : null;
}

// Streams the events of one step: onEvent(ev) for each, onEnd() after the last. Returns a function that cancels.
function streamStep(ctx, step, onEvent, onEnd, onError) {
  let cancelled = false;
  if (IS_FILE) {
    loadDataScript(`ctx_${ctx}_${step}`).then((evs) => {
      // hand them over one per task, as the event stream does, so a long list never blocks the page
      const next = (i) => {
        if (cancelled) return;
        if (i === evs.length) return onEnd();
        onEvent(evs[i]);
        setTimeout(next, 0, i + 1);
      };
      next(0);
    }, (e) => { if (!cancelled) onError(e); });
    return () => { cancelled = true; };
  }
  const es = new EventSource(`ctxs?ctx=${ctx}&idx=${step}`);
  es.onmessage = (e) => {
    if (e.data === "END") { es.close(); return onEnd(); }
    onEvent(JSON.parse(e.data));
  };
  es.onerror = () => { es.close(); if (!cancelled) onError(new Error("event stream failed")); };
  return () => { cancelled = true; es.close(); };
}

// Source text of a layout library, for the worker's Blob: fetched, or from data/vendor_src.js in an export (loaded
// once: a second loadDataScript of the same key while the first is pending would leave the first waiting forever)
let vendorSrc = null;
async function getVendorSource(urlPath) {
  if (IS_FILE) return (await (vendorSrc ??= loadDataScript("vendor_src").catch(() => ({}))))[urlPath] ?? null;
  const r = await fetch(urlPath.slice(1));
  return r.ok ? r.text() : null;
}

// *** text helpers ***

const escapeHtml = (s) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
const stripAnsi = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");

// "E_\x1b[33m4\x1b[0m" -> HTML with coloured spans (30-37 normal, 90-97 bright)
const ANSI_COLORS = ["#7f849c", "#f7768e", "#9ece6a", "#e0af68", "#7aa2f7", "#bb9af7", "#7dcfff", "#c0caf5"];
function ansiToHtml(s) {
  let out = "", open = false;
  for (const part of s.split(/(\x1b\[[0-9;]*m)/)) {
    const m = part.match(/^\x1b\[([0-9;]*)m$/);
    if (!m) { out += escapeHtml(part); continue; }
    if (open) { out += "</span>"; open = false; }
    const code = parseInt(m[1] || "0");
    if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) {
      out += `<span style="color:${ANSI_COLORS[code % 10]}">`;
      open = true;
    }
  }
  return open ? out + "</span>" : out;
}

// Tiny highlighter for C kernels and UOp text: one regex, tokens get a class (see .tok-* in viz.css)
const C_KEYWORDS = new Set(("void int float double half char short long unsigned signed bool for if else return while " +
  "const restrict struct union typedef static inline extern sizeof break continue __attribute__ define").split(" "));
const TOKEN_RE = /(\/\/[^\n]*|\/\*[\s\S]*?\*\/|#[a-z]+)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(\b(?:0x[0-9a-fA-F]+|\d+\.?\d*(?:e[+-]?\d+)?)[fuUlL]*\b)|(\bdtypes\.[\w.]+(?:\(\d*\))?|\bOps\.\w+)|([A-Za-z_]\w*)/g;
function highlight(code) {
  let out = "", last = 0;
  for (const m of code.matchAll(TOKEN_RE)) {
    out += escapeHtml(code.slice(last, m.index));
    last = m.index + m[0].length;
    const cls = m[1] ? "com" : m[2] ? "str" : m[3] ? "num" : m[4] ? "type" :
      C_KEYWORDS.has(m[5]) ? "kw" : code[last] === "(" ? "fn" : null;
    out += cls ? `<span class="tok-${cls}">${escapeHtml(m[0])}</span>` : escapeHtml(m[0]);
  }
  return out + escapeHtml(code.slice(last));
}

const fmtCount = (n) => n.toLocaleString("en-US");
