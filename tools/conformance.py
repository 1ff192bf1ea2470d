#!/usr/bin/env python3
"""Runs tinygrad's own test/test_ops.py (or another of its test modules, --module), unchanged, against the reference
tinygrad and against our package.

Each test runs in its own process (a crash or a hang takes down that one test only), once with the reference's
checkout on PYTHONPATH and once with ours; PyTorch is the judge inside the tests. Prints one row per test and a
summary, and exits 1 on any regression (a test the reference passes that ours does not) or any crash of ours.

  python3 tools/conformance.py REF_CHECKOUT [--ours build/python] [-j N] [-k SUBSTRING ...] [--ref-cache FILE]
                               [--module test_multitensor]

The reference's results are cached (--ref-cache, default build/conformance/ref-<commit>.json): they depend only on
its checkout and this machine, so later runs re-run only our side.
"""
import argparse, json, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor

# runs one test id inside a fresh interpreter and prints one line RESULT <outcome>; a crash prints nothing
RUNNER = r"""
import os, sys, unittest
sys.path.insert(0, sys.argv[1])
# `test.helpers`: the checkout's root right after PYTHONPATH's entries (the tinygrad imported stays PYTHONPATH's) and
# before the standard library (whose own `test` package would win)
_pp = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
_at = max((sys.path.index(p) for p in _pp if p in sys.path), default=0) + 1
sys.path.insert(_at, os.path.dirname(sys.argv[1]))
# torch 1.13 (Debian 12's) predates torch._C._get_privateuse1_backend_name, which test_ops.py calls at class
# definition to ask whether torch itself runs on tinygrad; the answer here is always "no"
import torch
if not hasattr(torch._C, "_get_privateuse1_backend_name"): torch._C._get_privateuse1_backend_name = lambda: "privateuseone"
suite = unittest.defaultTestLoader.loadTestsFromName(sys.argv[2])
res = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(suite)
if res.errors or res.failures: outcome = "fail"
elif res.unexpectedSuccesses: outcome = "fail"
elif res.skipped: outcome = "skip"
else: outcome = "pass"
print("\nRESULT", outcome, flush=True)
"""

LISTER = r"""
import os, sys, unittest
sys.path.insert(0, sys.argv[1])
sys.path.append(os.path.dirname(sys.argv[1]))
# torch 1.13 (Debian 12's) predates torch._C._get_privateuse1_backend_name, which test_ops.py calls at class
# definition to ask whether torch itself runs on tinygrad; the answer here is always "no"
import torch
if not hasattr(torch._C, "_get_privateuse1_backend_name"): torch._C._get_privateuse1_backend_name = lambda: "privateuseone"
def walk(s):
  for t in s:
    if isinstance(t, unittest.TestSuite): yield from walk(t)
    else: yield t.id()
print("\n".join(walk(unittest.defaultTestLoader.loadTestsFromName(sys.argv[2]))))
"""


# tests whose outcome differs from the reference's on purpose, with why; reported, not counted as regressions
KNOWN_DIFFERENCES = {
  "test_gather_failure": "an expectedFailure recording the reference's own bug (its gather multiplies by a one-hot mask, "
                         "so an -inf input gives nan); ours selects, gets -inf right, and the test 'unexpectedly' passes",
}

def run_one(python, pkg_path, test_dir, test_id, timeout, env_extra):
  env = dict(os.environ, PYTHONPATH=pkg_path, PYTHONDONTWRITEBYTECODE="1", **env_extra)
  t0 = time.monotonic()
  try:
    p = subprocess.run([python, "-c", RUNNER, test_dir, test_id], cwd=test_dir, env=env, capture_output=True,
                       text=True, timeout=timeout)
  except subprocess.TimeoutExpired:
    return {"outcome": "timeout", "secs": timeout, "detail": f"no result after {timeout} s"}
  secs = round(time.monotonic() - t0, 2)
  if p.returncode < 0:
    return {"outcome": "crash", "secs": secs, "detail": f"killed by signal {-p.returncode}"}
  lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
  if not lines:
    return {"outcome": "crash", "secs": secs, "detail": f"exit {p.returncode} without a result: {p.stderr[-400:]}"}
  outcome = lines[-1].split()[1]
  detail = ""
  if outcome == "fail":  # the last line of the traceback says what went wrong
    tb = [l for l in p.stderr.splitlines() if l.strip() and not l.startswith(("-", "=", "Ran ", "FAILED", "OK"))]
    detail = tb[-1][:300] if tb else ""
  return {"outcome": outcome, "secs": secs, "detail": detail}


def list_tests(python, pkg_path, test_dir, env_extra, module):
  env = dict(os.environ, PYTHONPATH=pkg_path, PYTHONDONTWRITEBYTECODE="1", **env_extra)
  p = subprocess.run([python, "-c", LISTER, test_dir, module], cwd=test_dir, env=env, capture_output=True, text=True)
  if p.returncode != 0: sys.exit(f"conformance: listing {module}.py failed:\n{p.stderr}")
  return p.stdout.split()


def run_all(label, python, pkg_path, test_dir, ids, jobs, timeout, env_extra):
  results, done = {}, 0
  with ThreadPoolExecutor(jobs) as ex:
    futs = {ex.submit(run_one, python, pkg_path, test_dir, t, timeout, env_extra): t for t in ids}
    for fut, t in futs.items():
      results[t] = fut.result()
      done += 1
      if done % 25 == 0 or done == len(ids): print(f"  {label}: {done}/{len(ids)}", file=sys.stderr, flush=True)
  return results


def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("ref", help="a tinygrad checkout (the reference is commit 24e7aed74b)")
  ap.add_argument("--ours", default=os.path.join(os.path.dirname(__file__), "..", "build", "python"),
                  help="the directory holding our tinygrad package (default build/python)")
  ap.add_argument("--python", default="/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable,
                  help="the interpreter with torch and numpy (default Debian's /usr/bin/python3)")
  ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
  ap.add_argument("-k", action="append", default=[], help="run only tests whose id contains this (repeatable)")
  ap.add_argument("--timeout", type=int, default=600, help="seconds per test before it counts as a hang")
  ap.add_argument("--ref-cache", help="the reference's results as JSON (read when present, written otherwise)")
  ap.add_argument("--json", help="write both sides' results here")
  ap.add_argument("--ref-only", action="store_true", help="only run (and cache) the reference's side")
  ap.add_argument("--ours-only", action="store_true", help="don't run the reference (its results count as unknown)")
  ap.add_argument("--device", default="CPU", help="the device ours runs on (<DEVICE>=1); the reference always runs "
                  "on CPU, its judge (its PYTHON emulator takes hours over this suite)")
  ap.add_argument("--module", default="test_ops", help="the reference's test module (test_multitensor: its "
                  "multi-device suite)")
  a = ap.parse_args()

  ref, ours = os.path.abspath(a.ref), os.path.abspath(a.ours)
  test_dir = os.path.join(ref, "test")
  if not os.path.isfile(os.path.join(test_dir, f"{a.module}.py")): sys.exit(f"conformance: no test/{a.module}.py in {ref}")
  if not a.ref_only and not os.path.isfile(os.path.join(ours, "tinygrad", "__init__.py")):
    sys.exit(f"conformance: no tinygrad package in {ours} (build it: cmake --build build)")
  env_extra, our_env = {"CPU": "1"}, {a.device.upper(): "1"}

  ids = list_tests(a.python, ref, test_dir, env_extra, a.module)
  if a.k: ids = [t for t in ids if any(k in t for k in a.k)]
  if not ids: sys.exit("conformance: no test matches")

  commit = subprocess.run(["git", "-C", ref, "rev-parse", "--short=10", "HEAD"], capture_output=True, text=True)
  tag = commit.stdout.strip() if commit.returncode == 0 else "checkout"
  cache = a.ref_cache or os.path.join(os.path.dirname(ours), "conformance", f"ref-{tag}.json" if a.module == "test_ops" else f"ref-{a.module}-{tag}.json")
  ref_res = json.load(open(cache)) if os.path.exists(cache) else {}
  todo = [] if a.ours_only else [t for t in ids if t not in ref_res]
  if todo:
    print(f"conformance: running {len(todo)} tests on the reference ({ref})", file=sys.stderr)
    ref_res.update(run_all("reference", a.python, ref, test_dir, todo, a.jobs, a.timeout, env_extra))
    os.makedirs(os.path.dirname(cache) or ".", exist_ok=True)
    json.dump(ref_res, open(cache, "w"), indent=1, sort_keys=True)
  if a.ref_only:
    print(f"conformance: the reference's results are in {cache}", file=sys.stderr)
    return 0
  print(f"conformance: running {len(ids)} tests on ours ({ours}) on {a.device.upper()}", file=sys.stderr)
  our_res = run_all("ours", a.python, ours, test_dir, ids, a.jobs, a.timeout, our_env)
  if a.json: json.dump({"reference": ref_res, "ours": our_res}, open(a.json, "w"), indent=1, sort_keys=True)

  ok = ("pass", "skip")
  regressions, crashes = [], []
  print(f"{'test':<58} {'reference':<10} {'ours':<10} detail (ours)")
  unknown = {"outcome": "?", "secs": 0, "detail": ""}
  for t in ids:
    r, o = ref_res.get(t, unknown), our_res[t]
    mark = ""
    if o["outcome"] in ("crash", "timeout"): crashes.append(t); mark = "  <-- CRASH"
    elif r["outcome"] == "pass" and o["outcome"] != "pass":
      if (why := KNOWN_DIFFERENCES.get(t.rsplit(".", 1)[-1])): mark = f"  (known difference: {why})"
      else: regressions.append(t); mark = "  <-- REGRESSION"
    detail = o["detail"] if o["outcome"] not in ok else ""
    print(f"{t.split('.', 1)[1]:<58} {r['outcome']:<10} {o['outcome']:<10} {detail}{mark}")
  count = lambda res, k: sum(res.get(t, unknown)["outcome"] == k for t in ids)
  print(f"\n{len(ids)} tests. reference: {count(ref_res, 'pass')} pass, {count(ref_res, 'skip')} skip, "
        f"{count(ref_res, 'fail')} fail, {count(ref_res, 'crash') + count(ref_res, 'timeout')} crash/hang. "
        f"ours: {count(our_res, 'pass')} pass, {count(our_res, 'skip')} skip, {count(our_res, 'fail')} fail, "
        f"{count(our_res, 'crash') + count(our_res, 'timeout')} crash/hang.")
  print(f"regressions (reference passes, ours does not): {len(regressions)}; crashes or hangs of ours: {len(crashes)}")
  return 1 if regressions or crashes else 0


if __name__ == "__main__":
  sys.exit(main())
