#pragma once
// WmmaArg: the arg of a WMMA uop (tinygrad's 8-tuple): which tensor core instruction, its dims and dtypes, the
// device that runs it, the warp size, and the upcast axes that form each operand and the reduce axes it consumes.
#include <array>
#include <string>
#include <vector>

#include "tg/uop/arg.h"

namespace tg {

struct WmmaArg final : ArgObjectOf<WmmaArg> {
  std::string name;         // WMMA_8_16_16_half_float, the function a C-style renderer defines
  std::array<int, 3> dims;  // N, M, K
  DType dtype_in, dtype_out;
  std::string device;
  int threads;
  std::array<PairTuple, 3> upcast_axes;  // ((axis, 2), ...) per operand A, B, C
  std::vector<int64_t> reduce_axes;      // the K axes the instruction sums over

  WmmaArg(std::string name_, std::array<int, 3> dims_, DType in, DType out, std::string device_, int threads_,
          std::array<PairTuple, 3> upcast, std::vector<int64_t> reduce)
      : name(std::move(name_)),
        dims(dims_),
        dtype_in(in),
        dtype_out(out),
        device(std::move(device_)),
        threads(threads_),
        upcast_axes(std::move(upcast)),
        reduce_axes(std::move(reduce)) {}

  // ('WMMA_8_16_16_half_float', (8, 16, 16), dtypes.half, dtypes.float, 'CUDA', 32, (((6, 2),), ...), (4, 5))
  std::string repr() const override;
  uint64_t hash() const override;
  bool operator==(const WmmaArg&) const;
  int64_t upcast_size(int operand) const;  // the elements of operand (0 A, 1 B, 2 C) one thread holds
};

ObjectArg wmma_arg(WmmaArg a);
const WmmaArg& as_wmma_arg(const Arg& arg);   // throws an InternalError when arg holds none
const WmmaArg* get_wmma_arg(const Arg& arg);  // null when arg holds none

}  // namespace tg
