#!/usr/bin/env python3
"""Every include arrow points down: a file in src/tg/<layer>/ includes only headers of its own layer or a lower one.

The layer order is README.md's "## Layout" table: its `src/tg/<layer>/` rows, lowest first. Every folder under src/tg
must have a row. Every #include of a project header in src/tg must name it as "tg/<layer>/...", so the check can place
it. Exits 1 listing each offending file:line -> header.

  python3 tests/layering/check_layers.py [repo root]   (default: two folders up from this file)
"""
import os
import pathlib
import re
import sys

ROW = re.compile(r"^\|\s*`src/tg/([A-Za-z0-9_]+)/`\s*\|")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def layer_order(readme: pathlib.Path) -> list[str]:
  layers, in_layout = [], False
  for line in readme.read_text(encoding="utf-8").splitlines():
    if line.startswith("## "):
      in_layout = line.strip() == "## Layout"
    elif in_layout and (m := ROW.match(line)):
      layers.append(m.group(1))
  return layers


def main() -> int:
  root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
  src = root / "src" / "tg"
  layers = layer_order(root / "README.md")
  if not layers:
    print(f"{root / 'README.md'}: no `src/tg/<layer>/` rows in its '## Layout' table")
    return 1
  rank = {name: i for i, name in enumerate(layers)}
  problems = []
  for d in sorted(p.name for p in src.iterdir() if p.is_dir()):
    if d not in rank:
      problems.append(f"src/tg/{d}/: not a row of README.md's Layout table, so it has no place in the layer order")
  files = []
  for d, subdirs, names in os.walk(src):
    subdirs[:] = [s for s in subdirs if s != "node_modules"]  # viz/web's npm packages (tools/setup.sh)
    files += [pathlib.Path(d) / n for n in names if n.endswith((".h", ".cpp"))]
  files.sort()
  for f in files:
    rel = f.relative_to(root).as_posix()
    own = f.relative_to(src).parts[0]
    if own not in rank: continue  # reported above
    for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
      m = INCLUDE.match(line)
      if not m: continue
      bracket, header = m.groups()
      if header.startswith("tinygrad/"):
        problems.append(f"{rel}:{n} -> {header} (the umbrella header includes every layer)")
        continue
      parts = header.split("/")
      if parts[0] != "tg":
        if bracket == '"':
          problems.append(f"{rel}:{n} -> {header} (name a project header as \"tg/<layer>/...\")")
        continue  # a system or third-party header
      target = parts[1] if len(parts) > 2 else ""
      if target not in rank:
        problems.append(f"{rel}:{n} -> {header} (not in a layer of the Layout table)")
      elif rank[target] > rank[own]:
        problems.append(f"{rel}:{n} -> {header} ({own} includes {target}, a higher layer)")
  if problems:
    print(f"include arrows that don't point down (layers, lowest first: {', '.join(layers)}):")
    for p in problems:
      print("  " + p)
    return 1
  print(f"{len(files)} files in {len(layers)} layers ({', '.join(layers)}): every include points down")
  return 0


if __name__ == "__main__":
  sys.exit(main())
