#!/usr/bin/env python3
"""The one table of knobs holds: no code in src/ reads the environment except src/tg/helpers/knobs.cpp, and the
README's table of the engine's variables names exactly the knobs src/tg/helpers/knobs.h declares."""
import pathlib, re, sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
header = (root / "src/tg/helpers/knobs.h").read_text()
header = header[header.index("#define TG_KNOBS("):]  # the table itself, not the comments above it
declared = set(re.findall(r"\b[IS]\(([A-Z][A-Z0-9_]*),", header)) | set(re.findall(r'\bD\("([A-Z][A-Z0-9_]*)"\)', header))
errors = []

# 1. the environment is read in one place
allowed = {root / "src/tg/helpers/knobs.cpp", root / "src/tg/helpers/knobs.h"}
# (handing `environ` to a child process is not reading it)
env_read = re.compile(r"\b(getenv|getenv_str|secure_getenv|setenv|unsetenv|putenv)\b")
for f in sorted((root / "src").rglob("*")):
  if f.suffix not in (".h", ".cpp") or f in allowed: continue
  for n, line in enumerate(f.read_text().splitlines(), 1):
    if env_read.search(line.split("//")[0]):
      errors.append(f"{f.relative_to(root)}:{n}: reads the environment outside the knobs table: {line.strip()}")

# 2. the README's table of the engine's variables (the first table under "## Environment variables")
readme = (root / "README.md").read_text().splitlines()
start = next(i for i, l in enumerate(readme) if l.strip() == "## Environment variables")
rows, in_table = [], False
for l in readme[start + 1:]:
  if l.startswith("|"): in_table = True; rows.append(l)
  elif in_table or l.startswith("#"): break
documented = set()
for r in rows[2:]:  # after the header and its rule
  documented |= set(re.findall(r"`([A-Z][A-Z0-9_]*)`", r.split("|")[1]))
for name in sorted(declared - documented): errors.append(f"README.md: the knob {name} is not in the table of variables")
for name in sorted(documented - declared): errors.append(f"README.md: {name} is in the table of variables but not a knob")

if not declared: errors.append("src/tg/helpers/knobs.h: no knobs found")
print("\n".join(errors) if errors else f"{len(declared)} knobs, all documented; the environment is read in knobs.cpp alone")
sys.exit(1 if errors else 0)
