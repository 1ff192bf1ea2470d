import math
exec(open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'dump_uops.py')).read().split("exec(open")[0])
from tinygrad.uop.ops import UOp, Ops, KernelInfo
from tinygrad.dtype import dtypes
import os
def G(i, dt, n=16): return UOp(Ops.DEFINE_GLOBAL, dt.ptr(n), (), i)
def C(dt, v): return UOp(Ops.CONST, dt, (), v)
def lin(sink):  # sources first, in a simple deterministic order (dfs), sink last
  order, seen = [], set()
  def visit(u):
    if u in seen: return
    seen.add(u)
    for s in u.src: visit(s)
    order.append(u)
  visit(sink)
  return order
def emit(tag, uops):
  os.environ["TAG"] = tag
  ClangRenderer().render(uops)

# 1. consts of every dtype, stored to buffers of that dtype
cases = [(dtypes.float, math.inf), (dtypes.float, -math.inf), (dtypes.float, math.nan), (dtypes.float, 1e-05), (dtypes.float, -0.0),
         (dtypes.half, 1.5), (dtypes.half, -math.inf), (dtypes.bfloat16, 2.0), (dtypes.int64, -3), (dtypes.uint64, 7), (dtypes.uint32, 8),
         (dtypes.uint8, 9), (dtypes.uint16, 10), (dtypes.int8, -11), (dtypes.int16, 12), (dtypes.bool, True), (dtypes.bool, False),
         (dtypes.double, 2.5), (dtypes.double, math.nan), (dtypes.int, -5)]
stores = []
uops = []
for i,(dt,v) in enumerate(cases): uops.append(G(i, dt, 1))
for i,(dt,v) in enumerate(cases): uops.append(C(dt, v))
z = C(dtypes.int, 0); uops.append(z)
for i,(dt,v) in enumerate(cases):
  idx = UOp(Ops.INDEX, dt.ptr(1), (uops[i], z)); st = UOp(Ops.STORE, dtypes.void, (idx, uops[len(cases)+i]))
  uops += [idx, st]; stores.append(st)
uops.append(UOp(Ops.SINK, dtypes.void, tuple(stores), KernelInfo("E_consts")))
emit("edge", uops)

# 2. alu ops on a loaded float, int and double; a value used twice is named
d0, d1, d2, d3 = G(0, dtypes.float), G(1, dtypes.float), G(2, dtypes.int), G(3, dtypes.double)
n = UOp(Ops.DEFINE_VAR, dtypes.int, (), ("n", 1, 16))
r = UOp(Ops.RANGE, dtypes.int, (n,), 0)
f = UOp(Ops.LOAD, dtypes.float, (d1.index(r),))
i = UOp(Ops.LOAD, dtypes.int, (d2.index(r),))
d = UOp(Ops.LOAD, dtypes.double, (d3.index(r),))
c2, c3 = C(dtypes.int, 2), C(dtypes.int, 3)
sq = UOp(Ops.SQRT, dtypes.float, (f,))
rc = UOp(Ops.RECIP, dtypes.float, (sq,))
ng = UOp(Ops.NEG, dtypes.float, (rc,))
dsq = UOp(Ops.SQRT, dtypes.double, (d,))
dv = UOp(Ops.IDIV, dtypes.int, (i, c3)); md = UOp(Ops.MOD, dtypes.int, (i, c3))
sh = UOp(Ops.SHL, dtypes.int, (dv, c2)); shr = UOp(Ops.SHR, dtypes.int, (md, c2))
x1 = UOp(Ops.XOR, dtypes.int, (sh, shr)); o1 = UOp(Ops.OR, dtypes.int, (x1, i)); a1 = UOp(Ops.AND, dtypes.int, (o1, C(dtypes.int, 255)))
a2 = UOp(Ops.AND, dtypes.int, (a1, i))
cmp = UOp(Ops.CMPNE, dtypes.bool, (a2, c3))
lt = UOp(Ops.CMPLT, dtypes.bool, (f, C(dtypes.float, 0.5)))
cf = UOp(Ops.CAST, dtypes.float, (a2,))
cd = UOp(Ops.CAST, dtypes.float, (dsq,))
m1 = UOp(Ops.MUL, dtypes.float, (ng, cf)); m2 = UOp(Ops.MUL, dtypes.float, (m1, cd))
w = UOp(Ops.WHERE, dtypes.float, (cmp, m2, f))
w2 = UOp(Ops.WHERE, dtypes.float, (lt, w, C(dtypes.float, math.inf)))
ad = UOp(Ops.ADD, dtypes.float, (w2, w2))
su = UOp(Ops.SUB, dtypes.float, (ad, f))
nz = UOp(Ops.NOOP, dtypes.float, (su,))
bc = UOp(Ops.BITCAST, dtypes.uint, (nz,))
bcf = UOp(Ops.CAST, dtypes.float, (bc,))
st = UOp(Ops.STORE, dtypes.void, (d0.index(r), bcf))
er = UOp(Ops.ENDRANGE, dtypes.void, (r,))
uops = [d0, d1, d2, d3, n, c2, c3, C(dtypes.int, 255), C(dtypes.float, 0.5), C(dtypes.float, math.inf), r, d1.index(r), f, d2.index(r), i,
        d3.index(r), d, sq, rc, ng, dsq, dv, md, sh, shr, x1, o1, a1, a2, cmp, lt, cf, cd, m1, m2, w, w2, ad, su, nz, bc, bcf, d0.index(r), st, er,
        UOp(Ops.SINK, dtypes.void, (st,), KernelInfo("r_alu"))]
emit("edge", uops)

# 3. gated load, IF/ENDIF, two vars (out of name order), no KernelInfo
b0, b1 = G(0, dtypes.float, 32), G(1, dtypes.float, 32)
vb = UOp(Ops.DEFINE_VAR, dtypes.int, (), ("b", 0, 8)); va = UOp(Ops.DEFINE_VAR, dtypes.int, (), ("a", 0, 8))
c0, c16 = C(dtypes.int, 0), C(dtypes.int, 16)
r0 = UOp(Ops.RANGE, dtypes.int, (c16,), 0)
gidx = UOp(Ops.ADD, dtypes.int, (r0, va))
gate = UOp(Ops.CMPLT, dtypes.bool, (gidx, vb))
ix = UOp(Ops.INDEX, dtypes.float.ptr(32), (b1, gidx, gate))
ld = UOp(Ops.LOAD, dtypes.float, (ix, C(dtypes.float, 1.0)))
ifg = UOp(Ops.CMPLT, dtypes.bool, (r0, va))
iff = UOp(Ops.IF, dtypes.void, (ifg,))
sti = UOp(Ops.STORE, dtypes.void, (b0.index(r0), ld, iff))
eif = UOp(Ops.ENDIF, dtypes.void, (iff,))
er0 = UOp(Ops.ENDRANGE, dtypes.void, (r0,))
uops = [b0, b1, vb, va, c0, C(dtypes.float, 1.0), c16, r0, gidx, gate, ix, ld, ifg, iff, b0.index(r0), sti, eif, er0, UOp(Ops.SINK, dtypes.void, (sti,))]
emit("edge", uops)

# 4. vectors: int4 VECTORIZE, cast to float4 (convertvector), GEP of a float2, half4 / bool typedefs, CUSTOM/CUSTOMI
v0, v1 = G(0, dtypes.float.vec(4)), G(1, dtypes.int)
vi = [UOp(Ops.LOAD, dtypes.int, (v1.index(C(dtypes.int, k)),)) for k in range(4)]
vec = UOp(Ops.VECTORIZE, dtypes.int.vec(4), tuple(vi))
cvt = UOp(Ops.CAST, dtypes.float.vec(4), (vec,))
hv = UOp(Ops.CAST, dtypes.half.vec(4), (cvt,))
hb = UOp(Ops.CAST, dtypes.float.vec(4), (hv,))
f2 = UOp(Ops.VECTORIZE, dtypes.float.vec(2), (UOp(Ops.GEP, dtypes.float, (hb,), (0,)), UOp(Ops.GEP, dtypes.float, (hb,), (3,))))
g0 = UOp(Ops.GEP, dtypes.float, (f2,), (1,))
cu = UOp(Ops.CUSTOMI, dtypes.float, (g0,), "__builtin_fabsf({0})")
f4 = UOp(Ops.VECTORIZE, dtypes.float.vec(4), (cu, cu, g0, UOp(Ops.GEP, dtypes.float, (f2,), (0,))))
stv = UOp(Ops.STORE, dtypes.void, (v0.index(C(dtypes.int, 0)), f4))
cst = UOp(Ops.CUSTOM, dtypes.void, (g0,), "/* {} */")
uops = [v0, v1] + [C(dtypes.int, k) for k in range(4)] + sum([[v1.index(C(dtypes.int, k)), vi[k]] for k in range(4)], []) + \
  [vec, cvt, hv, hb, hb.src[0] if False else UOp(Ops.GEP, dtypes.float, (hb,), (0,)), UOp(Ops.GEP, dtypes.float, (hb,), (3,)), f2, g0, cu,
   UOp(Ops.GEP, dtypes.float, (f2,), (0,)), f4, v0.index(C(dtypes.int, 0)), stv, cst, UOp(Ops.SINK, dtypes.void, (stv, cst), KernelInfo("E_vec"))]
emit("edge", uops)
