# tinygrad.uop.transcendental: exp2, log2, sin and pow as polynomials over UOps are the engine's
# (src/tg/uop/transcendental.h), used where a device has no such instruction (TRANSCENDENTAL=2 everywhere)
from tinygrad.dtype import dtypes
from tinygrad._unsupported import unsupported_function

TRANSCENDENTAL_SUPPORTED_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64)
_WHY = "the transcendental polynomials are C++ (src/tg/uop/transcendental.h) and not bound to Python"
xexp2, xlog2, xsin, xpow = (unsupported_function(f"tinygrad.uop.transcendental.{n}", _WHY) for n in ("xexp2", "xlog2", "xsin", "xpow"))
frexp, rintk, pow2if, trig_poly = (unsupported_function(f"tinygrad.uop.transcendental.{n}", _WHY) for n in ("frexp", "rintk", "pow2if", "trig_poly"))
payne_hanek_reduction = unsupported_function("tinygrad.uop.transcendental.payne_hanek_reduction", _WHY)
cody_waite_reduction = unsupported_function("tinygrad.uop.transcendental.cody_waite_reduction", _WHY)
