#pragma once
// Transcendental functions as UOp graphs of +, *, comparisons, casts and bit operations (tinygrad's
// uop/transcendental.py): what a device without a math library runs, and what TRANSCENDENTAL=2 forces everywhere.
// Each is about 1 ulp (SLEEF's algorithms, https://arxiv.org/pdf/2001.09258) for float16, float32 and float64, scalar
// or vector, with IEEE's answers at nan, +-inf and +-0.
#include "tg/uop/uop.h"

namespace tg {

bool transcendental_supported(DType d);  // float16, float32, float64 (by scalar)

UOp xexp2(const UOp& d);  // 2**d
UOp xlog2(const UOp& d);  // log2(d)
// sin(d): Cody-Waite range reduction below switch_over, Payne-Hanek's 190 bits of 2/pi above it; fast: Cody-Waite
// only (for |d| <= switch_over)
UOp xsin(const UOp& d, bool fast = false, double switch_over = 30.0);
UOp xpow(const UOp& base, const UOp& exponent);  // base**exponent through exp2(e*log2|b|), signs as C's pow

}  // namespace tg
