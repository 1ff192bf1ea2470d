#pragma once
// Transcendental functions as UOp graphs of +, *, comparisons, casts and bit operations (tinygrad's
// uop/transcendental.py): what a device without a math library runs, and what TRANSCENDENTAL=2 forces everywhere.
// Each is about 1 ulp (SLEEF's algorithms, https://arxiv.org/pdf/2001.09258) for float16, float32 and float64, scalar
// or vector, with IEEE's answers at nan, +-inf and +-0.
#include <utility>

#include "tg/uop/uop.h"

namespace tg {

bool transcendental_supported(DType d);  // float16, float32, float64 (by scalar)

UOp xexp2(const UOp& d);  // 2**d
UOp xlog2(const UOp& d);  // log2(d)
// sin(d): Cody-Waite range reduction below switch_over, Payne-Hanek's 190 bits of 2/pi above it; fast: Cody-Waite
// only (for |d| <= switch_over)
UOp xsin(const UOp& d, bool fast = false, double switch_over = 30.0);
UOp xpow(const UOp& base, const UOp& exponent);  // base**exponent through exp2(e*log2|b|), signs as C's pow

// the pieces, as tinygrad's helpers of the same names
UOp rintk(const UOp& d);                      // round half away from zero, as the signed int of d's width
UOp pow2if(const UOp& q, DType float_dtype);  // 2**q as a float, q an int in the normal exponent range
std::pair<UOp, UOp> frexp(const UOp& v);      // (mantissa in [0.5, 1), exponent) of v != 0
// d = q*pi/2 + r with |r| <= pi/4: (r, q), q an int32. Payne-Hanek for large d, Cody-Waite for small
std::pair<UOp, UOp> payne_hanek_reduction(const UOp& d);
std::pair<UOp, UOp> cody_waite_reduction(const UOp& d);

}  // namespace tg
