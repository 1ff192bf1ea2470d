// multi-device rewrites (tinygrad's engine/multi.py): MULTI pushed up, ALLREDUCE lowered into copies
#include "tg/schedule/multi.h"

#include <iostream>

#include "tg/helpers/knobs.h"
#include "tg/shape/uop_multi.h"

namespace tg::grouper {

namespace {

constexpr const char* DNUM = "_device_num";
using Span = std::pair<sint, sint>;
UOp add(const UOp& a, const UOp& b, Ops op) { return a.alu(op, {b}); }

// *** allreduce ***

UOp handle_allreduce(M m) {
  UOp buf = m["buf"], red = m["red"];
  if (!is_multi_device(uop_device_str(buf))) return {};
  const Shape shape = uop_shape(buf);
  TG_CHECK_AS(AssertionError, all_int(shape), "allreduce does not support the symbolic shape ", shape_str(shape));
  const Ops op = red.arg<Ops>();
  const std::vector<std::string> devices = device_names(uop_device_str(buf));
  const int64_t n = int64_t(devices.size()), numel = prod(shape);
  // a ring gains nothing on 2 devices or under ~256K elements (the reference's measure): the naive one saves the
  // chunking, its dispatches and the reassembly
  // one destination device (a sharded tensor read on one device) gets every buffer copied to it and added: a ring
  // leaves its result on all the devices (the reference's takes the ring there too, and its result is then on the
  // tuple while the tensor says one device)
  const bool to_all = is_multi_device(uop_device_str(red.src(1)));
  const bool use_ring = to_all && (RING >= 2 || (n > 2 && numel > RING_ALLREDUCE_THRESHOLD && RING >= 1));
  if (DEBUG >= 2)
    std::cout << (use_ring ? "RING ALLREDUCE " : "NAIVE ALLREDUCE ") << n << "x" << numel << " | " << buf.dtype()
              << "\n";
  buf = make_contiguous(buf);
  if (!use_ring) {  // every device's buffer copied to the destination, added there
    UOp ret;
    for (int64_t i = 0; i < n; i++) {
      UOp c = UOp::make(Ops::COPY, buf.dtype(), {uop_mselect(buf, i), red.src(1)});
      ret = ret ? add(ret, c, op) : c;
    }
    return ret;
  }
  // chunks of a size a multiple of the largest of 32..2 dividing numel, spread over the devices
  int64_t factor = 1;
  for (int64_t f : {32, 16, 8, 4, 2})
    if (numel % f == 0) {
      factor = f;
      break;
    }
  const int64_t base = (numel / factor) / n, left = (numel / factor) % n;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  for (int64_t i = 0, at = 0; i < n; i++) {
    const int64_t sz = (i < left ? base + 1 : base) * factor;
    chunks.push_back({at, at + sz});
    at += sz;
  }
  // reduce-scatter: chunk i travels round the ring from device i, added to each device's own chunk
  std::vector<UOp> reduced;
  const UOp flat = uop_reshape(buf, {numel});
  for (int64_t i = 0; i < n; i++) {
    const UOp chunk = uop_shrink(flat, {{chunks[i].first, chunks[i].second}});
    UOp r = chunk;
    for (int64_t step = 0; step < n - 1; step++) {
      const int64_t src = (i + step) % n, dest = (i + step + 1) % n;
      const std::string& d = devices[dest];
      UOp moved = is_multi_device(uop_device_str(r)) ? uop_copy_to_device(r, d, src) : uop_copy_to_device(r, d);
      r = add(moved, uop_copy_to_device(chunk, d, dest), op);
    }
    reduced.push_back(r);
  }
  // all-gather: each reduced chunk copied round the ring to every device, stacked into one tuple
  UOp ret;
  for (int64_t i = 0; i < n; i++) {
    std::vector<UOp> this_chunk(n);
    UOp c = reduced[i];
    this_chunk[(i + n - 1) % n] = c;
    for (int64_t step = 0; step < n - 1; step++) {
      const int64_t dest = (i + step) % n;
      this_chunk[dest] = c = uop_copy_to_device(c, devices[dest]);
    }
    UOp stacked = UOp::make(Ops::MSTACK, buf.dtype(), this_chunk);
    UOp padded = uop_pad(stacked, {{chunks[i].first, numel - chunks[i].second}});
    ret = ret ? add(ret, padded, Ops::ADD) : padded;
  }
  return uop_reshape(ret, shape);
}

UOp mstack_reorder_view(M m) {
  const UOp& ms = m["ms"];
  const ShapeTracker* first = get_st(ms.src(0).arg());
  for (const UOp& x : ms.src())
    if (!(*get_st(x.arg()) == *first)) return {};
  if (first->has_var(DNUM)) return {};
  std::vector<UOp> src;
  for (const UOp& x : ms.src()) src.push_back(x.src(0));
  return uop_view(UOp::make(Ops::MSTACK, ms.dtype(), src), *first);
}

UOp mstack_early_shrink(M m) {
  const UOp &view = m["view"], &ms = m["ms"];
  const ShapeTracker& st = st_of(view);
  if (!resolve_lt(prod(st.shape()), prod(uop_shape(ms)), false) || !st.has_var(DNUM)) return {};
  std::vector<UOp> ret;
  for (size_t i = 0; i < ms.src().size(); i++) {
    const UOp& x = ms.src(i);
    const ShapeTracker nv = st.substitute_var(DNUM, int64_t(i));
    if (x.op() == Ops::COPY) {  // a device without a renderer (a file) can only be viewed after the copy
      const std::string from = uop_device_str(x.src(0));
      ret.push_back(from.starts_with("DISK") || from.starts_with("NPY")
                        ? uop_view(x, nv)
                        : uop_copy_to_device(uop_view(x.src(0), nv), uop_device_str(x)));
    } else {
      ret.push_back(make_contiguous(uop_view(x, nv)));
    }
  }
  return ms.replace(std::nullopt, std::nullopt, ret);
}

// *** MULTI pushed up ***

UOp alu_multi(M m) {
  const UOp& root = m["root"];
  if (!root.get()->src_ops.has(Ops::MULTI)) return {};  // tinygrad's custom_early_reject
  const std::string dev = uop_device_str(root.src(0));
  for (const UOp& s : root.src())
    TG_CHECK_AS(AssertionError, uop_device_str(s) == dev, "all buffers must have the same device: ", dev, " and ",
                uop_device_str(s));
  const std::optional<int64_t> axis = uop_axis(root);
  TG_ASSERT(axis.has_value(), "an op on MULTI sources has an axis");
  std::vector<UOp> srcs;
  for (const UOp& mlb : root.src()) {
    const std::optional<int64_t> a = uop_axis(mlb);
    if (a == axis) {  // the same axis: its slices as they are
      TG_ASSERT(mlb.op() == Ops::MULTI, "a source on the axis is MULTI");
      srcs.push_back(mlb.src(0));
    } else if (!a) {  // replicated: each device takes its slice
      srcs.push_back(uop_shard_slice(mlb, *axis));
    } else {  // another axis: gathered whole on every device, then sliced on this one
      srcs.push_back(uop_shard_slice(uop_allreduce(uop_unshard(mlb.src(0), *a), Ops::ADD, dev), *axis));
    }
  }
  UOp ret = srcs[0].alu(root.op(), std::vector<UOp>(srcs.begin() + 1, srcs.end()));
  if (ret.dtype() != root.dtype()) ret = ret.replace(std::nullopt, root.dtype());  // WHERE, comparisons keep theirs
  return uop_multi(ret, *axis);
}

UOp reduce_multi(M m) {
  const UOp &root = m["root"], &multi = m["multi"];
  const ReduceArg& r = root.arg<ReduceArg>();
  const std::optional<int64_t> axis = uop_axis(multi);
  UOp inner = UOp::make(Ops::REDUCE_AXIS, root.dtype(), {multi.src(0)}, r);
  if (axis && std::find(r.axes.begin(), r.axes.end(), *axis) != r.axes.end())  // over the sharded axis: all-reduce
    return uop_allreduce(inner, r.op, uop_device_str(multi));
  return uop_multi(inner, *axis);  // over other axes: each device its own
}

Shape single_shard_shape(int64_t axis, Shape shape, const UOp& lb) {
  shape.at(axis) = uop_shape(lb).at(axis);
  return shape;
}

UOp reshape_multi(M m) {
  const UOp &root = m["root"], &multi = m["multi"];
  const Shape arg = arg_shape(root.arg());
  const std::optional<int64_t> new_axis = uop_axis(root), axis = uop_axis(multi);
  TG_ASSERT(axis.has_value(), "MULTI has an axis");
  TG_CHECK_AS(AssertionError, new_axis.has_value(), "reshape loses the sharded axis: ", shape_str(uop_shape(multi)),
              " -> ", shape_str(arg));
  const Shape inner = uop_shape(multi.src(0));
  sint inner_tail = 1, arg_tail = 1;
  for (size_t i = *axis; i < inner.size(); i++) inner_tail = inner_tail * inner[i];
  for (size_t i = *new_axis + 1; i < arg.size(); i++) arg_tail = arg_tail * arg[i];
  TG_CHECK_AS(AssertionError, int64_t(inner_tail) % int64_t(arg_tail) == 0, "reshape cannot move items between shards ",
              shape_str(uop_shape(multi)), " -> ", shape_str(arg));
  Shape s = arg;
  s[*new_axis] = int64_t(inner_tail) / int64_t(arg_tail);
  return uop_multi(uop_reshape(multi.src(0), s), *new_axis);
}

UOp expand_multi(M m) {
  const UOp &root = m["root"], &multi = m["multi"];
  const Shape arg = arg_shape(root.arg());
  const int64_t axis = *uop_axis(multi);
  TG_CHECK_AS(AssertionError, arg.at(axis) == uop_shape(multi).at(axis), "expand not supported on sharded axis ",
              shape_str(arg));
  return uop_multi(uop_expand(multi.src(0), single_shard_shape(axis, arg, multi.src(0))), axis);
}

UOp pad_multi(M m) {
  const UOp &root = m["root"], &multi = m["multi"];
  const Mask arg = arg_mask(root.arg());
  const int64_t axis = *uop_axis(multi);
  TG_CHECK_AS(AssertionError, (arg.at(axis) == Span{0, 0}), "padding not supported on the sharded axis ", axis);
  return uop_multi(uop_pad(multi.src(0), arg), axis);
}

UOp permute_multi(M m) {
  const UOp &root = m["root"], &multi = m["multi"];
  return uop_multi(uop_permute(multi.src(0), tuple_ints(root.arg())), *uop_axis(root));
}

UOp shrink_multi(M m) {
  const UOp &root = m["root"], &multi = m["multi"];
  const Mask arg = arg_mask(root.arg());
  const int64_t axis = *uop_axis(multi);
  const Shape shape = uop_shape(multi);
  const auto bounds = uop_bounds(multi);
  const auto at = std::find(bounds.begin(), bounds.end(), arg.at(axis));
  const bool whole = arg.at(axis) == Span{0, shape.at(axis)};
  TG_CHECK_AS(AssertionError, whole || at != bounds.end(), "shrinking not supported on the sharded axis ", axis,
              " but to one device's part");
  if (!whole) {  // one device's part: copied to all the devices
    for (size_t i = 0; i < shape.size(); i++)
      TG_CHECK_AS(AssertionError, (int64_t(i) == axis || arg[i] == Span{0, shape[i]}),
                  "cannot shrink sharded and non-sharded axis at the same time");
    return uop_copy_to_device(multi.src(0), uop_device_str(multi), at - bounds.begin());
  }
  Mask inner = arg;
  inner[axis] = {0, uop_shape(multi.src(0)).at(axis)};
  return uop_multi(uop_shrink(multi.src(0), inner), axis);
}

UOp flip_multi(M m) {
  const UOp &root = m["root"], &multi = m["multi"];
  const int64_t axis = *uop_axis(multi);
  const Tuple& arg = root.arg<Tuple>();
  TG_CHECK_AS(AssertionError, !std::get<bool>(arg.at(axis)), "flipping not supported on the sharded axis ", axis);
  std::vector<bool> flips;
  for (const ConstValue& v : arg) flips.push_back(std::get<bool>(v));
  return uop_multi(uop_flip(multi.src(0), flips), axis);
}

}  // namespace

const GPM& multi_pm() {
  static const GPM pm{
      {op(GroupOp::ALU).named("root"), alu_multi},
      {op(Ops::REDUCE_AXIS, {op(Ops::MULTI).named("multi")}).named("root"), reduce_multi},
      {op(Ops::RESHAPE, {op(Ops::MULTI).named("multi")}).named("root"), reshape_multi},
      {op(Ops::EXPAND, {op(Ops::MULTI).named("multi")}).named("root"), expand_multi},
      {op(Ops::PAD, {op(Ops::MULTI).named("multi")}).named("root"), pad_multi},
      {op(Ops::PERMUTE, {op(Ops::MULTI).named("multi")}).named("root"), permute_multi},
      {op(Ops::SHRINK, {op(Ops::MULTI).named("multi")}).named("root"), shrink_multi},
      {op(Ops::FLIP, {op(Ops::MULTI).named("multi")}).named("root"), flip_multi},
      // ASSIGN(MULTI, MULTI): slice to slice, on the same axis
      {op(Ops::ASSIGN, {op(Ops::MULTI).named("dest"), op(Ops::MULTI).named("src")}),
       [](M m) {
         const UOp &dest = m["dest"], &src = m["src"];
         const auto da = uop_axis(dest), sa = uop_axis(src);
         if (da != sa)
           throw Error(cat("axis must match in assign ", da ? std::to_string(*da) : "None",
                           " != ", sa ? std::to_string(*sa) : "None"));
         return uop_multi(make_assign(dest.src(0), src.src(0)), *sa);
       }},
      // COPY(MULTI) off the devices: the slices padded to the whole axis, all-reduced onto the device
      {op(Ops::COPY, {op(Ops::MULTI).named("multi"), op(Ops::DEVICE).named("device")}),
       [](M m) {
         const UOp& multi = m["multi"];
         return uop_allreduce(uop_unshard(multi.src(0), *uop_axis(multi)), Ops::ADD, m["device"]);
       }},
      {op(Ops::ALLREDUCE, {op(Ops::MULTI).named("multi"), op(Ops::DEVICE).named("device")}).named("red"),
       [](M m) {
         const UOp& multi = m["multi"];
         return uop_multi(uop_allreduce(multi.src(0), m["red"].arg<Ops>(), m["device"]), *uop_axis(multi));
       }},
      {op({Ops::CAST, Ops::BITCAST, Ops::CONTIGUOUS, Ops::DETACH, Ops::CONTIGUOUS_BACKWARD, Ops::FUSE},
          {op(Ops::MULTI).named("multi")})
           .named("root"),
       [](M m) {
         const UOp& multi = m["multi"];
         return uop_multi(m["root"].replace(std::nullopt, std::nullopt, std::vector<UOp>{multi.src(0)}),
                          *uop_axis(multi));
       }},
  };
  return pm;
}

const GPM& replace_allreduce() {
  static const GPM pm{
      {op(Ops::ALLREDUCE, {var("buf"), op(Ops::DEVICE)}).named("red"), handle_allreduce},
      // BROADCAST: a COPY onto a tuple of devices is one copy per device, stacked
      {op(Ops::COPY, {op(GroupOp::All - Ops::CONST).named("x"), op(Ops::DEVICE)}).named("c"),
       [](M m) -> UOp {
         const UOp &c = m["c"], &x = m["x"];
         const std::string to = uop_device_str(c), from = uop_device_str(x);
         if (is_multi_device(to) && !is_multi_device(from)) {
           std::vector<UOp> copies;
           for (const std::string& d : device_names(to)) copies.push_back(uop_copy_to_device(x, d));
           return UOp::make(Ops::MSTACK, c.dtype(), copies);
         }
         // COPY_TO_ONE: from a tuple to one device, the first device's copy
         if (!is_multi_device(to) && is_multi_device(from)) return uop_copy_to_device(x, to, 0);
         return {};
       }},
      // MSELECT(MSTACK) -> the selected source
      {op(Ops::MSELECT, {op(Ops::MSTACK).named("mstack")}).named("ms"),
       [](M m) { return m["mstack"].src(as_int(m["ms"].arg<ConstValue>())); }},
      // MSELECT selects a base: views apply after, with the device number filled in
      {op(Ops::MSELECT, {op(Ops::VIEW, {var("base")}).named("view")}).named("ms"),
       [](M m) {
         const int64_t i = as_int(m["ms"].arg<ConstValue>());
         return uop_view(uop_mselect(m["base"], i), st_of(m["view"]).substitute_var(DNUM, i));
       }},
      // a view through MSTACK, and a shrink before it
      {op(Ops::MSTACK).each(op(Ops::VIEW)).named("ms"), mstack_reorder_view},
      {op(Ops::VIEW, {op(Ops::MSTACK).named("ms")}).named("view"), mstack_early_shrink},
  };
  return pm;
}

}  // namespace tg::grouper
