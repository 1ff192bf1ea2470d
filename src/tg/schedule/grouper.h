#pragma once
// kernelize: which tensor UOps become buffers, and the KERNEL of each (tinygrad's engine/grouper.py).
// get_kernelize_map(big_sink) rewrites a tensor graph into ASSIGN(BUFFER, KERNEL(ast)) per realized tensor; the map
// sends every node of the input graph to its replacement, ready for apply_map_to_tensors.
#include <string>
#include <utility>
#include <vector>

#include "tg/uop/uop.h"

namespace tg {

// the KERNEL arg (tinygrad's grouper.Kernel): the kernel's AST and the Tensor methods that made it, in the
// reference's order. repr: <Kernel 12 SINK(<Ops.STORE: 48>,) (__add__,)>, <Kernel 5 <Ops.COPY: 7> ()>
struct KernelArg final : ArgObjectOf<KernelArg> {
  UOp ast;
  std::vector<const Metadata*> metadata;
  KernelArg(UOp ast_, std::vector<const Metadata*> metadata_) : ast(std::move(ast_)), metadata(std::move(metadata_)) {}
  std::string repr() const override;
  uint64_t hash() const override;
  bool operator==(const KernelArg&) const = default;
  const UOp* kernel_ast() const override { return &ast; }
};
ObjectArg kernel_arg(UOp ast, std::vector<const Metadata*> metadata = {});
const KernelArg& get_kernel(const UOp& k);  // the KernelArg of a KERNEL node; InternalError otherwise
std::string metadata_repr(const std::vector<const Metadata*>& m);  // (__add__,), (sum, relu, __matmul__), ()

// the becomes-map: every node of big_sink's graph (and the sink itself) -> its kernelized replacement
std::vector<std::pair<UOp, UOp>> get_kernelize_map(const UOp& big_sink);
// how many graphs get_kernelize_map has kernelized anew so far (its cache's misses): a workload that repeats its
// graphs stops adding to it
size_t kernelize_cache_misses();
// how many graphs get_kernelize_map was given (cached or not): what a TinyJit replay skips, for tests
size_t kernelize_calls();

}  // namespace tg
