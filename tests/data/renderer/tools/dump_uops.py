# Dumps every kernel the reference's ClangRenderer renders: the uop list as rows for tests/renderer/uop_lists.h, then the
# rendered source, into $OUT/<TAG>.<kernel name>.txt. Used by runcase.py (a reference script) and ref_cases.py (hand-made lists):
#   cd /work/ref && PYTHONPATH=/work/ref CPU=1 [NOOPT=1] TAG=t347 OUT=/tmp/out python3 runcase.py golden/debug/t347.py
import sys, os, json
from tinygrad.renderer.cstyle import ClangRenderer
from tinygrad.uop.ops import Ops, KernelInfo
from tinygrad.dtype import dtypes, PtrDType
CPPN = {'int':'int32','float':'float32','bool':'bool_','half':'half','double':'float64','long':'int64','uint':'uint32','unsigned int':'uint32','unsigned char':'uint8','signed char':'int8','unsigned short':'uint16','unsigned long':'uint64','__bf16':'bfloat16',
        'uchar':'uint8','char':'int8','short':'int16','ushort':'uint16','ulong':'uint64','bfloat16':'bfloat16'}
def cdt(dt):
  if isinstance(dt, PtrDType):
    b = cdt(dt.base); return f"{b}.ptr({dt.size}{', true' if dt.local else ''})"
  if dt == dtypes.void: return "dtypes::void_"
  s = "dtypes::" + {dtypes.bfloat16:'bfloat16', dtypes.half:'half', dtypes.bool:'bool_'}.get(dt.scalar(), None) if dt.scalar() in (dtypes.bfloat16, dtypes.half, dtypes.bool) else "dtypes::" + CPPN[dt.scalar().name]
  return s + (f".vec({dt.count})" if dt.count > 1 else "")
def carg(u):
  a = u.arg
  if a is None: return ""
  if isinstance(a, KernelInfo): return f', KI("{a.name}", {a.local_dims}, {a.upcasted})'
  if isinstance(a, bool): return f", B({'true' if a else 'false'})"
  if isinstance(a, int): return f", I({a})"
  if isinstance(a, float): return f", F({repr(a) if a==a and abs(a)!=float('inf') else ('NAN' if a!=a else ('INF' if a>0 else '-INF'))})"
  if isinstance(a, tuple) and all(isinstance(x,int) for x in a): return ", T({" + ", ".join(map(str,a)) + "})"
  if isinstance(a, str): return ', S(' + json.dumps(a) + ')'
  if isinstance(a, tuple) and len(a) == 3 and isinstance(a[0], str): return f', V("{a[0]}", {a[1]}, {a[2]})'
  raise Exception(f"arg {a!r}")
orig = ClangRenderer.render
def render(self, uops):
  src = orig(self, uops)
  idx = {u:i for i,u in enumerate(uops)}
  rows = []
  for u in uops:
    name = u.op.name
    rows.append(f"      {{Ops::{name}, {cdt(u.dtype)}, {{{', '.join(str(idx[s]) for s in u.src)}}}{carg(u)}}},  // {idx[u]}")
  tag = os.environ.get("TAG", "k")
  with open(f"{os.environ.get('OUT', '/tmp')}/{tag}.{uops[-1].arg.name if uops[-1].arg else 'test'}.txt", "w") as f:
    f.write("\n".join(rows) + "\n=====\n" + src)
  return src
ClangRenderer.render = render
exec(open(sys.argv[1]).read(), {"__name__": "__main__"}) if len(sys.argv) > 1 else None
