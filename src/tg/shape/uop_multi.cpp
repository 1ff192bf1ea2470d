#include "tg/shape/uop_multi.h"

#include <algorithm>

namespace tg {

namespace {

// the axis of n once its sources' are known (-1: None)
int16_t compute_axis(const UOpNode* n) {
  auto axis_of = [](const UOp& s) { return s.get()->axis_cache.load(std::memory_order_acquire); };
  if (n->op == Ops::MULTI) return static_cast<int16_t>(as_int(std::get<ConstValue>(n->arg)));
  if (GroupOp::ALU.has(n->op)) {  // they all have to share an axis: the last one seen (tinygrad's axes[-1])
    int16_t ret = -1;
    for (const UOp& s : n->src)
      if (int16_t a = axis_of(s); a >= 0) ret = a;
    return ret;
  }
  if (n->src.empty()) return -1;
  const int16_t src_axis = axis_of(n->src[0]);
  if (src_axis < 0) return -1;
  if (n->op == Ops::REDUCE_AXIS) {
    const auto& axes = std::get<ReduceArg>(n->arg).axes;
    return std::find(axes.begin(), axes.end(), src_axis) != axes.end() ? int16_t(-1) : src_axis;
  }
  if (n->op == Ops::RESHAPE) {  // the last new axis whose prefix product equals the old axis's prefix product
    const Shape old_shape = uop_shape(n->src[0]), new_shape = arg_shape(n->arg);
    sint before = 1;
    for (int64_t i = 0; i < src_axis; i++) before = before * old_shape[i];
    std::vector<sint> acc{1};
    for (const sint& s : new_shape) acc.push_back(acc.back() * s);
    for (int64_t i = int64_t(acc.size()) - 1; i >= 0; i--)
      if (acc[i] == before) return static_cast<int16_t>(i);
    return -1;
  }
  if (n->op == Ops::PERMUTE) {
    const std::vector<int64_t> order = tuple_ints(n->arg);
    auto it = std::find(order.begin(), order.end(), src_axis);
    return it == order.end() ? int16_t(-1) : static_cast<int16_t>(it - order.begin());
  }
  return src_axis;
}

}  // namespace

std::optional<int64_t> uop_axis(const UOp& u) {
  fill_caches(
      u, [](const UOpNode* n) { return n->axis_cache.load(std::memory_order_acquire) != -2; },
      [](const UOpNode* n) { n->axis_cache.store(compute_axis(n), std::memory_order_release); });
  const int16_t a = u.get()->axis_cache.load(std::memory_order_acquire);
  return a < 0 ? std::nullopt : std::optional<int64_t>(a);
}

std::vector<std::pair<sint, sint>> uop_bounds(const UOp& multi) {
  std::optional<int64_t> axis = uop_axis(multi);
  TG_CHECK(axis.has_value() && multi.op() == Ops::MULTI, "bounds is not defined when axis is None");
  const sint each = uop_shape(multi.src(0)).at(*axis);
  std::vector<std::pair<sint, sint>> ret;
  sint at = 0;
  for (size_t i = 0; i < device_names(uop_device_str(multi)).size(); i++, at = at + each)
    ret.push_back({at, at + each});
  return ret;
}

UOp uop_multi(const UOp& u, int64_t axis) {
  TG_CHECK(is_multi_device(uop_device_str(u)), "multi device must be a tuple, ", uop_device_str(u), " isn't");
  return UOp::make(Ops::MULTI, u.dtype(), {u}, ConstValue(axis));
}
UOp uop_mselect(const UOp& u, int64_t i) { return UOp::make(Ops::MSELECT, u.dtype(), {u}, ConstValue(i)); }
UOp uop_allreduce(const UOp& u, Ops op, const UOp& device) {
  TG_CHECK(is_multi_device(uop_device_str(u)), "allreduce must be on a tuple of devices, ", uop_device_str(u),
           " isn't");
  return UOp::make(Ops::ALLREDUCE, u.dtype(), {u, device}, op);
}
UOp uop_allreduce(const UOp& u, Ops op, const std::string& device) {
  return uop_allreduce(u, op, UOp::make(Ops::DEVICE, dtypes::void_, {}, device_arg(device)));
}
UOp uop_device_num(size_t devices) {
  return UOp::variable("_device_num", ConstValue(int64_t(0)), ConstValue(int64_t(devices) - 1));
}

UOp uop_shard_slice(const UOp& u, int64_t axis) {
  const size_t dcount = device_names(uop_device_str(u)).size();
  const Shape shape = uop_shape(u);
  const sint& len = shape.at(axis);
  TG_CHECK(len.is_int() && len.as_int() % int64_t(dcount) == 0, "multi axis uneven: shape ", shape_str(shape), " axis ",
           axis, " over ", dcount, " devices");
  const int64_t sz = len.as_int() / int64_t(dcount);
  const sint start = sint(uop_device_num(dcount)) * sz;
  Mask arg;
  for (size_t i = 0; i < shape.size(); i++)
    arg.push_back(int64_t(i) == axis ? std::pair<sint, sint>{start, start + sz} : std::pair<sint, sint>{0, shape[i]});
  return uop_shrink(u, arg);
}
UOp uop_unshard(const UOp& u, int64_t axis) {
  const size_t dcount = device_names(uop_device_str(u)).size();
  const Shape shape = uop_shape(u);
  const sint bsz = shape.at(axis), dnum(uop_device_num(dcount));
  Mask arg;
  for (size_t i = 0; i < shape.size(); i++)
    arg.push_back(int64_t(i) == axis ? std::pair<sint, sint>{bsz * dnum, bsz * int64_t(dcount - 1) - bsz * dnum}
                                     : std::pair<sint, sint>{0, 0});
  return uop_pad(u, arg);
}
UOp uop_shard(const UOp& u, const std::string& devices, int64_t axis) {
  return uop_multi(uop_shard_slice(uop_copy_to_device(u, devices), axis), axis);
}
UOp uop_copy_to_device(const UOp& u, const std::string& device, int64_t from) {
  return uop_copy_to_device(uop_mselect(u, from), device);
}

}  // namespace tg
