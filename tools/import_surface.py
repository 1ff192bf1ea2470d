#!/usr/bin/env python3
"""Imports every module of a tinygrad checkout's test/, examples/ and extra/models/ against our tinygrad package.

Each file is imported (never run as __main__) in its own interpreter, with our package first on sys.path and the
checkout reachable only for its own packages (test., extra., examples.), so the `tinygrad` imported is always ours.
Each module ends as one of:
  ok           imported
  ours         failed on one of our names: a missing tinygrad module or name, an attribute missing on one of our
               objects, or one of our NotImplementedError stand-ins called at import time
  third_party  a module outside tinygrad and the checkout is not installed
  other        any other exception (printed)
  timeout      took longer than --timeout seconds

  python3 tools/import_surface.py REF_CHECKOUT [--ours build/python] [--json FILE] [-j N] [-k SUBSTRING ...]
  python3 tools/import_surface.py REF_CHECKOUT --dump-names FILE

--ours REF_CHECKOUT gives the baseline: what fails in the reference itself (third-party packages, mostly).
--dump-names writes the (module, name) pairs that those files, and the checkout's modules they import, import from
tinygrad, found by parsing them (ast): one "module name" line each, "module" alone for `import tinygrad.x`.
"""
import argparse, ast, collections, json, os, re, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

DIRS = ("test", "examples", "extra/models")
REF_PACKAGES = ("test", "extra", "examples")

# *** the child: imports one module and writes what happened as JSON ***

def child(ref:str, ours:str, relpath:str, out:str):  # relpath: the file's path in the checkout
  import importlib, importlib.abc, importlib.machinery, importlib.util, traceback, types
  ref, ours = os.path.realpath(ref), os.path.realpath(ours)
  sys.path[:] = [ours] + [p for p in sys.path if p and os.path.realpath(p) not in (ref, os.path.realpath("."))]
  class RefPackages(importlib.abc.MetaPathFinder):  # only the checkout's own top-level packages come from it
    def find_spec(self, name, path, target=None):
      return importlib.machinery.PathFinder.find_spec(name, [ref]) if path is None and name in REF_PACKAGES else None
  sys.meta_path.insert(0, RefPackages())
  os.chdir(ref)
  import tinygrad
  assert os.path.realpath(tinygrad.__file__).startswith(ours + os.sep), f"imported {tinygrad.__file__}, not ours"
  # torch 1.13 (Debian 12's) predates torch._C._get_privateuse1_backend_name, which test_ops.py calls at class
  # definition to ask whether torch itself runs on tinygrad; the answer here is always "no" (as tools/conformance.py)
  import torch
  if not hasattr(torch._C, "_get_privateuse1_backend_name"): torch._C._get_privateuse1_backend_name = lambda: "privateuseone"
  path, sys.argv = os.path.join(ref, relpath), [relpath]
  res:dict = {"module": module_name(ref, path), "kind": "ok"}
  def ours_file(f): return os.path.realpath(f).startswith(os.path.join(ours, "tinygrad") + os.sep)
  sys.path.append(os.path.dirname(path))  # as when the file runs as a script (`from train_gpt2 import GPT`), not first
  def load():
    parts = relpath[:-3].split(os.sep)
    if all(x.isidentifier() for x in parts[:-1]): return importlib.import_module(".".join(parts))
    # a folder that is no Python name (examples/llm.c): the file is loaded under its path's name
    spec = importlib.util.spec_from_file_location(parts[-1], path)
    sys.modules[parts[-1]] = mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
  try: load()
  except BaseException as e:  # noqa: B036 -- SystemExit and KeyboardInterrupt at import time are results too
    tb = traceback.extract_tb(e.__traceback__)
    res.update(exc=f"{type(e).__name__}: {e}"[:500], where=f"{tb[-1].filename}:{tb[-1].lineno}" if tb else "", kind="other")
    if isinstance(e, ModuleNotFoundError) and e.name:
      if e.name.split(".")[0] == "tinygrad": res.update(kind="ours", missing=[e.name, ""])
      elif e.name.split(".")[0] not in REF_PACKAGES: res.update(kind="third_party", package=e.name)
    elif isinstance(e, ImportError) and (e.name or "").split(".")[0] == "tinygrad":
      m = re.search(r"cannot import name '([^']+)'", str(e))
      res.update(kind="ours", missing=[e.name, m.group(1) if m else ""])
    elif isinstance(e, AttributeError) and getattr(e, "obj", None) is not None:
      obj = e.obj
      if isinstance(obj, types.ModuleType): owner = obj.__name__
      else:
        cls = obj if isinstance(obj, type) else type(obj)
        owner = f"{cls.__module__}.{cls.__qualname__}"
      if owner.split(".")[0] == "tinygrad": res.update(kind="ours", missing=[owner, e.name or ""])
    elif isinstance(e, NotImplementedError) and tb and ours_file(tb[-1].filename):
      res.update(kind="ours", missing=["NotImplementedError at import", str(e)[:200]])
    elif type(e).__name__ == "SkipTest": res.update(kind="third_party", package=str(e))  # "onnx not installed, ..."
    elif isinstance(e, OSError) and (m := re.search(r"(\S+): cannot open shared object file", str(e))):
      res.update(kind="third_party", package=m.group(1))  # a system library (libcuda.so.1, ROCm) is not installed
  with open(out, "w") as f: json.dump(res, f)

# *** the parent ***

def module_name(ref:str, path:str) -> str:
  return os.path.relpath(path, ref)[:-3].replace(os.sep, ".")

def ref_files(ref:str) -> list[str]:
  ret = []
  for d in DIRS:
    for root, dirs, files in os.walk(os.path.join(ref, d)):
      dirs[:] = sorted(x for x in dirs if x != "__pycache__")
      ret += [os.path.join(root, f) for f in sorted(files) if f.endswith(".py")]
  return ret

def run_one(python:str, ref:str, ours:str, path:str, timeout:float, env:dict) -> dict:
  with tempfile.NamedTemporaryFile(suffix=".json") as tf:
    t0 = time.monotonic()
    try:
      p = subprocess.run([python, "-P", os.path.abspath(__file__), "--child", ref, ours, os.path.relpath(path, ref), tf.name], cwd=ref, env=env,
                         capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired: return {"module": module_name(ref, path), "kind": "timeout", "secs": timeout}
    try: res = json.load(open(tf.name))
    except (json.JSONDecodeError, OSError):  # the interpreter died (a crash, os._exit) before writing a result
      res = {"module": module_name(ref, path), "kind": "other", "exc": f"exit {p.returncode}: {(p.stderr or p.stdout)[-400:]}"}
    res["secs"] = round(time.monotonic() - t0, 1)
  return res

def summarize(results:list[dict]):
  kinds = ("ok", "ours", "third_party", "other", "timeout")
  table = collections.defaultdict(collections.Counter)
  for r in results: table[next(d for d in DIRS[::-1] if r["module"].startswith(d.replace("/", ".")))][r["kind"]] += 1
  print(f"\n{'folder':14s}" + "".join(f"{k:>13s}" for k in kinds) + f"{'total':>8s}")
  for d in DIRS + ("all",):
    c = sum(table.values(), collections.Counter()) if d == "all" else table[d]
    print(f"{d:14s}" + "".join(f"{c[k]:13d}" for k in kinds) + f"{sum(c.values()):8d}")
  missing = collections.defaultdict(lambda: collections.defaultdict(list))
  for r in results:
    if r["kind"] == "ours": missing[r["missing"][0]][r["missing"][1]].append(r["module"])
  if missing: print("\nmissing tinygrad names (module: name [files]):")
  for m in sorted(missing):
    print(f"  {m}: " + ", ".join(f"{n or '<module>'} [{len(fs)}]" for n, fs in sorted(missing[m].items())))
  third = collections.Counter(r["package"].split(".")[0] for r in results if r["kind"] == "third_party")
  if third: print("\nthird-party packages missing: " + ", ".join(f"{p} [{n}]" for p, n in third.most_common()))
  for kind in ("other", "timeout"):
    rs = [r for r in results if r["kind"] == kind]
    if rs: print(f"\n{kind}:")
    for r in rs: print(f"  {r['module']}: " + (f"{r['exc']} ({r.get('where', '')})" if kind == "other" else f"over {r['secs']} s"))

# *** --dump-names: what the files import from tinygrad, by parsing them ***

def imported_names(ref:str) -> set[tuple[str, str]]:
  todo, seen, names = list(ref_files(ref)), set(), set()
  def ref_module_path(mod:str) -> str|None:
    base = os.path.join(ref, *mod.split("."))
    return next((p for p in (base + ".py", os.path.join(base, "__init__.py")) if os.path.isfile(p)), None)
  while todo:
    path = todo.pop()
    if path in seen: continue
    seen.add(path)
    try: tree = ast.parse(open(path, encoding="utf-8").read(), path)
    except SyntaxError: continue
    pkg = module_name(ref, path).rsplit(".", 1)[0] if not path.endswith("__init__.py") else module_name(ref, path)[:-9]
    for node in ast.walk(tree):
      mods:list[tuple[str, list[str]]] = []
      if isinstance(node, ast.Import): mods = [(a.name, []) for a in node.names]
      elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level: base = ".".join(pkg.split(".")[:len(pkg.split("."))-node.level+1] + ([base] if base else []))
        mods = [(base, [a.name for a in node.names if a.name != "*"])]
      for mod, froms in mods:
        if mod.split(".")[0] == "tinygrad":
          names.add((mod, ""))
          names.update((mod, n) for n in froms)
        elif mod.split(".")[0] in REF_PACKAGES:  # the checkout's own modules are followed: their imports count too
          todo += [p for p in [ref_module_path(mod)] + [ref_module_path(f"{mod}.{n}") for n in froms] if p]
  return names

# which pairs the reference itself lacks (stale imports in its own files); a module the reference can't import here
# (a missing library) is given the benefit of the doubt
CHECK_REF = r"""
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
absent = []
for mod, name in json.load(sys.stdin):
  try: m = importlib.import_module(mod)
  except ModuleNotFoundError as e:
    if (e.name or "").split(".")[0] == "tinygrad": absent.append((mod, name))
    continue
  except Exception: continue
  if name and not hasattr(m, name):
    try: importlib.import_module(f"{mod}.{name}")
    except ModuleNotFoundError: absent.append((mod, name))
    except Exception: pass
print(json.dumps(absent))
"""

def absent_in_ref(python:str, ref:str, names:list) -> set:
  env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
  p = subprocess.run([python, "-P", "-c", CHECK_REF, ref], input=json.dumps(names), capture_output=True, text=True,
                     cwd=ref, env=env, check=True)
  return {tuple(x) for x in json.loads(p.stdout.splitlines()[-1])}

def main():
  if len(sys.argv) > 1 and sys.argv[1] == "--child": return child(*sys.argv[2:6])
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("ref", help="a tinygrad checkout (0.10.3)")
  ap.add_argument("--ours", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "python"),
                  help="the folder holding our tinygrad package (default build/python)")
  ap.add_argument("--json", help="write every module's result here")
  ap.add_argument("--dump-names", help="write the (module, name) pairs imported from tinygrad here, and stop")
  ap.add_argument("-j", type=int, default=2, help="modules imported at once (default 2)")
  ap.add_argument("-k", action="append", help="only modules whose name contains this (repeatable)")
  ap.add_argument("--timeout", type=float, default=60)
  ap.add_argument("--python", default=sys.executable)
  args = ap.parse_args()
  ref, ours = os.path.realpath(args.ref), os.path.realpath(args.ours)
  if args.dump_names:
    names = sorted(imported_names(ref))
    absent = absent_in_ref(args.python, ref, names)
    with open(args.dump_names, "w") as f:
      f.write("# (module, name) pairs that tinygrad's test/, examples/ and extra/models/ (and the checkout's modules they\n"
              "# import) import from tinygrad; made by tools/import_surface.py --dump-names. A line without a name is\n"
              "# `import module`; the pairs at the end, commented out, are stale: the reference itself lacks them\n")
      f.write("".join(f"{m} {n}".rstrip() + "\n" for m, n in names if (m, n) not in absent))
      f.write("".join(f"# absent in the reference: {m} {n}".rstrip() + "\n" for m, n in names if (m, n) in absent))
    print(f"{len(names) - len(absent)} pairs written to {args.dump_names} ({len(absent)} absent in the reference)")
    return
  files = [p for p in ref_files(ref) if not args.k or any(k in module_name(ref, p) for k in args.k)]
  env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
  env.update(PYTHONDONTWRITEBYTECODE="1")
  print(f"importing {len(files)} modules of {ref} against {ours}", flush=True)
  with ThreadPoolExecutor(args.j) as pool:
    results = []
    for r in pool.map(lambda p: run_one(args.python, ref, ours, p, args.timeout, env), files):
      results.append(r)
      print(f"  {r['kind']:12s} {r['secs']:5.1f}s {r['module']}", flush=True)
  summarize(results)
  if args.json:
    with open(args.json, "w") as f: json.dump(results, f, indent=1)

if __name__ == "__main__": main()
