# VIZ from Python: the tutorial's t+3+4 under VIZ=-1 writes the same trace as the C++ program does (its contexts and
# steps), a PROFILE=1 run writes its timeline, and VIZ=1 without a terminal never blocks and keeps the exit code
import json, os, subprocess, sys, pathlib

PROGRAM = "from tinygrad import Tensor\nt = Tensor([1, 2, 3, 4])\nprint((t + 3 + 4).tolist())\n"

def run(tmp_path, code=PROGRAM, **env):
  e = {k:v for k,v in os.environ.items() if k not in ("DEBUG", "VIZ", "PROFILE", "DEV")}
  e.update({"DEV": "CPU", **env})  # the kernel's C code is the CPU device's
  return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=300, cwd=tmp_path,
                        stdin=subprocess.DEVNULL)

def records(path):
  lines = pathlib.Path(path).read_text().splitlines()
  assert lines[0] == '{"tinygrad_viz_trace":1}'
  return [json.loads(l) for l in lines[1:]]

def test_viz_trace_from_python(tmp_path):
  trace = tmp_path / "t347.trace"
  p = run(tmp_path, VIZ="-1", VIZ_TRACE=str(trace))
  assert p.returncode == 0, p.stderr
  assert p.stdout == "[8, 9, 10, 11]\n"
  assert f"VIZ: trace written to {trace}" in p.stderr
  recs = records(trace)
  names = {}
  for r in recs:
    if "ctx" in r and "name" in r and "step" not in r: names[r["ctx"]] = r["name"]
  assert names[0] == "Schedule 2 Kernels n1"
  assert names[1] == "E_\x1b[33m4\x1b[0m\x1b[90m\x1b[0m"
  steps = [r["name"] for r in recs if "step" in r and r["ctx"] == 1]
  assert steps[:3] == ["View Base AST", "fixup optimized AST", "lowerer"]
  assert steps[-1] == "Linearizer: Finalize"
  assert any("kernel_code" in r and "void E_4(" in r["kernel_code"] for r in recs)

def test_viz_1_without_a_terminal_keeps_the_exit_code(tmp_path):
  p = run(tmp_path, code=PROGRAM + "raise SystemExit(3)\n", VIZ="1", VIZ_TRACE=str(tmp_path / "t.trace"))
  assert p.returncode == 3
  assert "VIZ: trace written to" in p.stderr

def test_profile_from_python(tmp_path):
  prof = tmp_path / "profile.json"
  p = run(tmp_path, PROFILE="1", PROFILE_TRACE=str(prof))
  assert p.returncode == 0, p.stderr
  assert f"PROFILE: trace written to {prof}" in p.stderr
  events = json.loads(prof.read_text())  # closed at exit: the whole array is JSON
  kernels = [e["name"] for e in events if e.get("ph") == "X"]
  assert "E_4" in kernels and len(kernels) == 2  # the copy from host data, E_4
