// End-to-end test of tinygrad-viz: record a program, serve (or export) its trace, check the pages in Chromium.
//   node tests/viz/run_viz_test.mjs --viz BUILD/tinygrad-viz --record BUILD/viz_record --mode MODE --out DIR
// MODE: t347 (the tutorial's Tensor([1,2,3,4]) + 3 + 4, served over HTTP), t347-export (the same, as a static export
// opened from file://), big (one rewrite step over a ~10,000-node graph, served). DIR keeps the trace, the export
// and the screenshots (DIR/*.png). Exit status: 0 pass, 1 fail, 77 skipped (no chromium or node_modules).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { checkPage, loadPlaywright, SKIP } from "./check_page.mjs";

const args = process.argv.slice(2), opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const VIZ = opt("--viz"), RECORD = opt("--record"), MODE = opt("--mode", "t347"), OUT = path.resolve(opt("--out", "viz_test_out"));
if (!VIZ || !RECORD) { console.error("usage: run_viz_test.mjs --viz BIN --record BIN --mode t347|t347-export|big --out DIR"); process.exit(2); }

const failures = [];
const check = (cond, what) => { console.log(`  ${cond ? "ok" : "FAIL"}: ${what}`); if (!cond) failures.push(what); return cond; };
const finish = () => {
  console.log(failures.length ? `FAILED: ${failures.join("; ")}` : "passed");
  process.exit(failures.length ? 1 : 0);
};

const pw = await loadPlaywright();
if (pw.skip) { console.log(`skipped: ${pw.skip}`); process.exit(SKIP); }

// *** record ***

fs.rmSync(OUT, { recursive: true, force: true });
fs.mkdirSync(OUT, { recursive: true });
const trace = path.join(OUT, "trace");
const recordMode = MODE.replace(/-export$/, "");
console.log(`record: ${RECORD} ${recordMode} ${trace}`);
const rec = spawnSync(RECORD, [recordMode, trace], { stdio: "inherit", timeout: 120000 });
if (!check(rec.status === 0 && fs.existsSync(trace), `viz_record ${recordMode} writes the trace (exit ${rec.status})`)) finish();

// *** static export, opened from file:// ***

if (MODE.endsWith("-export")) {
  const dir = path.join(OUT, "export");
  const ex = spawnSync(VIZ, ["export", trace, dir], { stdio: "inherit", timeout: 120000 });
  check(ex.status === 0, `tinygrad-viz export (exit ${ex.status})`);
  if (process.env.VIZ_WEB_DIR) {  // the page files being edited, over the ones built into the binary (as check_page.mjs)
    for (const f of ["index.html", "profiler.html", "js", "css"]) fs.cpSync(path.join(process.env.VIZ_WEB_DIR, f), path.join(dir, f), { recursive: true });
  }
  for (const f of ["index.html", "profiler.html", "js/index.js", "css/viz.css", "vendor/dagre.min.js", "vendor/elk.bundled.js", "data/ctxs.js", "data/ctx_0_0.js",
    "data/profile.js", "data/vendor_src.js"]) check(fs.existsSync(path.join(dir, f)), `export has ${f}`);
  const vendorSrc = path.join(dir, "data", "vendor_src.js"), vendorText = fs.existsSync(vendorSrc) ? fs.readFileSync(vendorSrc, "utf8") : "";
  for (const k of ["/vendor/dagre.min.js", "/vendor/elk.bundled.js"]) check(vendorText.includes(`${JSON.stringify(k)}:`), `data/vendor_src.js has ${k}`);
  const c = await checkPage({ url: pathToFileURL(path.join(dir, "index.html")).href, screenshot: path.join(OUT, "explorer.png"),
    profileScreenshot: path.join(OUT, "profiler.png") });
  failures.push(...c.failures);
  finish();
}

// *** serve over HTTP ***

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); });
});
const get = (port, p, host = "127.0.0.1") => new Promise((resolve) => {  // raw path: no URL normalisation of ".."
  const req = http.get({ host, port, path: p, timeout: 5000 }, (res) => {
    let body = "";
    res.on("data", (d) => { body += d; });
    res.on("end", () => resolve({ status: res.statusCode, type: res.headers["content-type"] ?? "", body }));
  });
  req.on("error", (e) => resolve({ status: 0, error: e.code }));
  req.on("timeout", () => req.destroy(new Error("timeout")));
});

const port = await freePort();
console.log(`serve: PORT=${port} ${VIZ} ${trace}`);
const srv = spawn(VIZ, [trace], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "pipe", "inherit"] });
const exitedP = new Promise((resolve) => srv.on("exit", (code, signal) => resolve({ code, signal })));
const started = await new Promise((resolve) => {
  let out = "";
  const timer = setTimeout(() => resolve(false), 30000);
  srv.stdout.on("data", (d) => {
    process.stdout.write(d);
    out += d;
    if (out.includes(`*** started viz on http://127.0.0.1:${port}`)) { clearTimeout(timer); resolve(true); }
  });
  exitedP.then(() => { clearTimeout(timer); resolve(false); });
});
if (!check(started, `the server prints "*** started viz on http://127.0.0.1:${port}"`)) { srv.kill("SIGKILL"); finish(); }

try {
  // endpoints: types and 404s
  const types = { "/": "text/html", "/profiler": "text/html", "/js/index.js": "javascript", "/css/viz.css": "text/css",
    "/vendor/dagre.min.js": "javascript", "/vendor/elk.bundled.js": "javascript", "/ctxs": "application/json", "/ctxs?ctx=0&idx=0": "text/event-stream" };
  for (const [p, t] of Object.entries(types)) {
    const r = await get(port, p);
    check(r.status === 200 && r.type.includes(t), `GET ${p}: 200 ${t} (got ${r.status} ${r.type})`);
  }
  for (const p of ["/nonexistent", "/js/../x", "/js/../../etc/passwd", "/css/%2e%2e/x", "/js/nope.js"]) {
    const r = await get(port, p);
    check(r.status === 404, `GET ${p}: 404 (got ${r.status})`);
  }
  const sse = await get(port, "/ctxs?ctx=0&idx=0");
  check(sse.body.endsWith("data: END\n\n"), "the event stream ends with data: END");

  // bound to 127.0.0.1 only: the listening socket in /proc/net/tcp{,6}, and another local address refuses
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0"), listen = [];
  for (const f of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!fs.existsSync(f)) continue;
    for (const line of fs.readFileSync(f, "utf8").split("\n").slice(1)) {
      const [, local, , st] = line.trim().split(/\s+/);
      if (st === "0A" && local?.endsWith(`:${hexPort}`)) listen.push(local);  // 0A = LISTEN
    }
  }
  if (listen.length) check(listen.every((l) => l === `0100007F:${hexPort}`), `listens on 127.0.0.1 only (${listen.join(", ")})`);
  const other = Object.values(os.networkInterfaces()).flat().find((a) => a && a.family === "IPv4" && !a.internal);
  if (other) {
    const r = await get(port, "/", other.address);
    check(r.status === 0, `${other.address}:${port} is not served (${r.error ?? r.status})`);
  }
  const r2 = await get(port, "/", "127.0.0.2");  // the rest of 127/8 is loopback too, but not the bound address
  check(r2.status === 0, `127.0.0.2:${port} is not served (${r2.error ?? r2.status})`);

  // the pages
  const c = await checkPage({ url: `http://127.0.0.1:${port}`, big: MODE === "big",
    screenshot: path.join(OUT, MODE === "big" ? "big.png" : "explorer.png"), profileScreenshot: path.join(OUT, "profiler.png"),
    kernelText: MODE === "t347" ? "void E_4(" : undefined });
  failures.push(...c.failures);
} finally {
  // SIGTERM ends the server
  srv.kill("SIGTERM");
  const t = setTimeout(() => srv.kill("SIGKILL"), 5000);
  const e = await exitedP;
  clearTimeout(t);
  check(e.signal !== "SIGKILL" && (e.code === 0 || e.signal === "SIGTERM"), `the server exits on SIGTERM (code ${e.code}, signal ${e.signal})`);
}
finish();
