# tinygrad.uop.transcendental: exp2, log2, sin and pow as polynomials over UOps are the engine's
# (src/tg/uop/transcendental.h), used where a device has no such instruction (TRANSCENDENTAL=2 everywhere); their pieces
# (rintk, pow2if, frexp and the two range reductions of sin) are bound too; trig_poly is written here over polyN.
from tinygrad.dtype import dtypes
from tinygrad._C import xexp2, xlog2, xsin, xpow, rintk, pow2if, frexp, payne_hanek_reduction, cody_waite_reduction  # noqa: F401
from tinygrad.helpers import polyN

TRANSCENDENTAL_SUPPORTED_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64)

def trig_poly(d, coeff32:list[float], coeff64:list[float]):
  """d * P(d*d), P's coefficients (highest power first) by d's precision: coeff64 for float64, else coeff32."""
  return d * polyN(d * d, coeff64 if d.dtype.scalar() == dtypes.float64 else coeff32)
