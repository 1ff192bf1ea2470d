#pragma once
// shared by the Tensor's source files (tensor*.cpp, realize.cpp), not part of the public API
#include "tg/tensor/tensor.h"

namespace tg {

// a tracked Tensor around a tensor-level UOp, with tinygrad's three-state requires_grad
Tensor tensor_from_uop(const UOp& u, std::optional<bool> requires_grad);
// points every live tensor whose graph holds a key of `map` at the replacement (after kernelize/realize)
void apply_map_to_tensors(const std::vector<std::pair<UOp, UOp>>& map, const char* name);  // name: its VIZ step
// kernelizes, schedules and runs these graphs together (Tensor::realize of several tensors)
void realize_uops(std::vector<UOp> uops);
// how many live tensors have exactly this graph (a realized buffer that graph dedup made one for several)
size_t live_tensors_holding(const UOp& u);
// the graphs of live tensors that are an assign not yet realized (x.assign(y) without realize), for TinyJit
std::vector<UOp> pending_assign_uops();
// the canonical name of an available device (none: Device::DEFAULT); an unknown one is an Error that lists the
// available devices
std::string resolve_device(const std::optional<std::string>& device);
// a DISK device ("DISK:/path"): a file's bytes, which run no kernels (runtime/ops_disk.h)
inline bool is_disk(std::string_view device) { return device.starts_with("DISK"); }
// whether `from` broadcasts to `to` (numpy's rules: trailing dims equal or 1)
bool broadcastable(const Shape& from, const Shape& to);
// the unsigned int dtype of this many bytes (1, 2, 4 or 8)
DType uint_of_size(int bytes);
// t == arange(num_classes) along `dim` of t (tinygrad's _one_hot_along_dim): a bool mask, t broadcast to it
Tensor one_hot_along_dim(const Tensor& t, sint num_classes, int64_t dim = -1);

}  // namespace tg

// the outermost Tensor method of a call names the UOps it makes: TG_META("sum") as the first line of a method
#define TG_META(name) ::tg::MetadataScope tg_meta_scope_(name)
