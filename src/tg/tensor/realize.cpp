// Tensor::kernelize / realize and reading data back (tinygrad's tensor.py kernelize, schedule_with_vars, realize,
// data, tolist, item)
#include "tg/engine/realize.h"

#include <algorithm>
#include <cstring>

#include "tg/runtime/buffers.h"
#include "tg/schedule/schedule.h"
#include "tg/tensor/tensor_internal.h"

namespace tg {

Tensor& Tensor::kernelize() {
  kernelize({*this});
  return *this;
}
void Tensor::kernelize(const std::vector<Tensor>& tensors) {
  std::vector<UOp> uops;
  for (const Tensor& t : tensors) uops.push_back(t.uop());
  apply_map_to_tensors(get_kernelize_map(UOp::sink(uops)), "Apply Kernelize Map");
}

namespace {
std::pair<std::vector<ScheduleItem>, VarVals> schedule_uops(std::vector<UOp> uops) {
  std::vector<UOp> todo;
  for (UOp& u : uops)
    if (std::find(todo.begin(), todo.end(), u) == todo.end()) todo.push_back(std::move(u));
  if (todo.empty()) return {};
  std::vector<std::pair<UOp, UOp>> kernelized = get_kernelize_map(UOp::sink(todo));
  apply_map_to_tensors(kernelized, "Apply Kernelize Map");
  // one substitute of them all: each substitute builds its table of the whole map (per tensor, a schedule of a
  // model's weights took seconds)
  UOp sink = UOp::sink(todo).substitute(kernelized);
  kernelized.clear();
  todo.clear();
  std::vector<std::pair<UOp, UOp>> remove_assign;  // after scheduling, the tensors are just their buffers
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::ASSIGN) remove_assign.push_back({u, uop_base(u.src(0))});
  apply_map_to_tensors(remove_assign, "Remove Assigns");
  remove_assign.clear();
  auto [schedule, var_vals] = create_schedule_with_vars(sink);
  sink = UOp();  // the kernel graph is gone before the planner runs: buffers no tensor holds can share memory
  if (capturing == nullptr) return {memory_planner(std::move(schedule)), std::move(var_vals)};
  std::unordered_map<Buffer, Buffer> replaced;
  schedule = memory_planner(std::move(schedule), {}, &replaced);
  capturing->unplan(replaced);
  return {std::move(schedule), std::move(var_vals)};
}
}  // namespace

void realize_uops(std::vector<UOp> uops) {
  auto [schedule, var_vals] = schedule_uops(std::move(uops));
  if (!schedule.empty()) run_schedule(std::move(schedule), var_vals);
}

std::pair<std::vector<ScheduleItem>, VarVals> Tensor::schedule_with_vars(const std::vector<Tensor>& tensors) {
  std::vector<UOp> uops;
  for (const Tensor& t : tensors) uops.push_back(t.uop());
  return schedule_uops(std::move(uops));
}

Tensor& Tensor::realize() {
  realize_uops({uop()});
  return *this;
}

void Tensor::realize(const std::vector<Tensor>& tensors) {
  std::vector<UOp> uops;
  for (const Tensor& t : tensors) uops.push_back(t.uop());
  realize_uops(std::move(uops));
}

std::vector<uint8_t> Tensor::data_bytes() const {
  if (numel() == 0) return {};
  if (is_multi_device(device())) return to(device_names(device()).at(0)).data_bytes();  // gathered on the first
  // contiguous on its own device, realized: its base is a BUFFER holding exactly the elements, row-major, which the
  // device's allocator copies out (the reference copies to the CPU first, for a zero-copy memoryview; a host copy
  // is made here either way). A lazy tensor stays lazy: only its contiguous copy is realized.
  MetadataScope m("data");
  // a copy seen whole and in order (a lazily loaded weight, reshaped) is read from the copy's own buffer: no kernel
  // to make it contiguous (a device without half could not even run that kernel for a half tensor)
  auto whole_view_of = [n = numel()](const UOp& u, Ops op) {  // all of u's base in order, and the base is an `op`
    const ShapeTracker* st = uop_st(u);
    UOp b = uop_base(u);
    return b.op() == op && st != nullptr && st->contiguous() && uop_size(b) == n;
  };
  const bool whole_copy = whole_view_of(uop(), Ops::COPY);
  // a buffer seen whole and in order (a TinyJit's output, read each call) is read as it is: its contiguous() would
  // be a kernelize of no kernel that still walks every live tensor's graph
  const bool whole_buffer = whole_view_of(uop(), Ops::BUFFER);
  Tensor t = whole_copy || whole_buffer ? tensor_from_uop(uop(), std::nullopt) : contiguous();
  if (!whole_buffer) t.realize();
  // the scheduler may have moved the copy under a view (a permute of a whole file): then it is made contiguous
  if (whole_copy && !whole_view_of(t.uop(), Ops::BUFFER)) t = t.contiguous(), t.realize();
  UOp base = uop_base(t.uop());
  // a BUFFER, or one device's of a tuple's (a copy to the device it already is on is no copy)
  TG_ASSERT(base.op() == Ops::BUFFER || base.op() == Ops::MSELECT, "realized tensor is not a buffer: ", base.op());
  return uop_buffer(base).ensure_allocated().as_bytes();  // Tensor.empty's contents: what its memory (or file) holds
}

template <class T>
std::vector<T> Tensor::tolist() const {
  MetadataScope m("tolist");
  DType want = host_dtype<T>();
  TG_CHECK(want == dtype(), "tolist<T>: T is ", want, " but the tensor is ", dtype());
  std::vector<uint8_t> bytes = data_bytes();
  std::vector<T> out(bytes.size() / sizeof(T));
  for (size_t i = 0; i < out.size(); i++) {  // element by element: std::vector<bool> has no data()
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out[i] = v;
  }
  return out;
}

template <class T>
T Tensor::item() const {
  MetadataScope m("item");
  TG_CHECK_AS(AssertionError, numel() == 1, "must have one element for item, shape is ", shape_str(shape()));
  return tolist<T>()[0];
}

#define TG_INSTANTIATE(T)                            \
  template std::vector<T> Tensor::tolist<T>() const; \
  template T Tensor::item<T>() const;
TG_INSTANTIATE(bool)
TG_INSTANTIATE(float)
TG_INSTANTIATE(double)
TG_INSTANTIATE(int8_t)
TG_INSTANTIATE(uint8_t)
TG_INSTANTIATE(int16_t)
TG_INSTANTIATE(uint16_t)
TG_INSTANTIATE(int32_t)
TG_INSTANTIATE(uint32_t)
TG_INSTANTIATE(int64_t)
TG_INSTANTIATE(uint64_t)
#undef TG_INSTANTIATE

}  // namespace tg
