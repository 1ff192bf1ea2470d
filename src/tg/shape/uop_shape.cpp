#include "tg/shape/uop_shape.h"

#include <algorithm>

#include "tg/uop/kernel_info.h"
#include "tg/uop/trace.h"

namespace tg {

static const ShapeTracker* st_of(const UOpNode* n) {
  const ArgObject* c = n->st_cache.load(std::memory_order_acquire);
  return c == uop_cache_none() ? nullptr : &static_cast<const ShapeTrackerArg*>(c)->st;
}

static std::optional<ShapeTracker> compute_st(const UOpNode* n) {
  const Ops op = n->op;
  if (op == Ops::VIEW) {
    const ShapeTracker* st = get_st(n->arg);
    TG_ASSERT(st != nullptr, "VIEW without a ShapeTracker arg");
    return *st;
  }
  if (GroupOp::Movement.has(op)) {
    TG_CHECK(n->src.size() == 1, op, " needs one source, got ", n->src.size());
    const ShapeTracker* src = st_of(n->src[0].get());
    TG_CHECK(src != nullptr, op, " on a UOp without a shape");
    return src->mop(op, n->arg);
  }
  if (GroupOp::Buffer.has(op)) {
    for (const UOp& s : n->src)
      if (s.op() == Ops::VIEW) return *st_of(s.get());
    return std::nullopt;
  }
  if (op == Ops::ASSIGN) {
    TG_CHECK(n->src.size() == 2, "ASSIGN needs a target and a value, got ", n->src.size(), " sources");
    const ShapeTracker* s = st_of(n->src[0].get());
    return s ? std::optional<ShapeTracker>(*s) : std::nullopt;
  }
  if (op == Ops::BUFFER) {
    const ConstValue* size = std::get_if<ConstValue>(&n->arg);
    TG_CHECK(size != nullptr, "BUFFER needs its size as arg, got ", arg_repr(n->arg));
    return ShapeTracker::from_shape({as_int(*size)});
  }
  if (op == Ops::BUFFER_VIEW) {  // (size, offset) elements of its base BUFFER: a flat shape of its own size
    const auto* arg = std::get_if<Tuple>(&n->arg);
    TG_CHECK(arg != nullptr && arg->size() == 2, "BUFFER_VIEW needs (size, offset) as arg, got ", arg_repr(n->arg));
    return ShapeTracker::from_shape({as_int(arg->at(0))});
  }
  if (op == Ops::CUSTOM_GRAD) {  // the value; the other sources are the inputs it has a derivative for
    const ShapeTracker* st = st_of(n->src[0].get());
    return st ? std::optional<ShapeTracker>(ShapeTracker::from_shape(st->shape())) : std::nullopt;
  }
  if (op == Ops::KERNEL) return std::nullopt;  // TODO: from the kernel's ast size, with the grouper
  const ShapeTracker* first = nullptr;
  for (const UOp& s : n->src) {
    const ShapeTracker* st = st_of(s.get());
    if (st == nullptr) continue;
    if (first == nullptr)
      first = st;
    else
      TG_CHECK(st->shape() == first->shape(), "UOp sources must have the same shape: ", op, " got ",
               shape_str(first->shape()), " and ", shape_str(st->shape()));
  }
  if (first == nullptr) return std::nullopt;
  Shape shape = first->shape();
  if (op == Ops::MULTI) {  // the whole tensor: the shard's shape, its axis times the devices
    const int64_t axis = as_int(std::get<ConstValue>(n->arg));
    TG_CHECK(axis >= 0 && axis < int64_t(shape.size()), "MULTI axis ", axis, " out of range for ", shape_str(shape));
    shape[axis] = shape[axis] * int64_t(device_names(uop_device_str(n->src[0])).size());
  }
  if (op == Ops::REDUCE_AXIS) {
    const ReduceArg* r = std::get_if<ReduceArg>(&n->arg);
    TG_CHECK(r != nullptr, "REDUCE_AXIS needs (op, axes) as arg, got ", arg_repr(n->arg));
    shape = first->reduce(r->axes);
  }
  if (op == Ops::BITCAST) {
    int in_sz = n->src[0].dtype().itemsize(), out_sz = n->dtype.itemsize();
    if (in_sz != out_sz && !shape.empty()) shape.back() = shape.back() * in_sz / out_sz;
  }
  return ShapeTracker::from_shape(shape);
}

const ShapeTracker* uop_st(const UOp& u) {
  fill_caches(
      u, [](const UOpNode* n) { return n->st_cache.load(std::memory_order_acquire) != nullptr; },
      [](const UOpNode* n) {
        auto st = compute_st(n);
        const ArgObject* v = st ? new ShapeTrackerArg(std::move(*st)) : uop_cache_none();
        const ArgObject* expected = nullptr;
        if (!n->st_cache.compare_exchange_strong(expected, v, std::memory_order_acq_rel) && v != uop_cache_none())
          delete v;  // another thread computed it first
      });
  return st_of(u.get());
}

Shape uop_shape(const UOp& u) {
  const ShapeTracker* st = uop_st(u);
  TG_CHECK(st != nullptr, "UOp ", u.op(), " has no shape");
  return st->shape();
}
int64_t uop_size(const UOp& u) {
  if (u.op() == Ops::BUFFER) return as_int(u.arg<ConstValue>());
  if (u.op() == Ops::BUFFER_VIEW) return as_int(u.arg<Tuple>().at(0));
  if (const ShapeTracker* st = uop_st(u)) return st->size();  // a symbolic dim at its largest value
  return prod(uop_shape(u));
}

std::optional<std::string> uop_device(const UOp& u) {
  fill_caches(
      u, [](const UOpNode* n) { return n->device_cache.load(std::memory_order_acquire) != nullptr; },
      [](const UOpNode* n) {
        const std::string* d = uop_device_none();
        if (n->op == Ops::DEVICE)
          d = intern_device(device_of_arg(n->arg));
        else if (n->op == Ops::MSELECT || n->op == Ops::MSTACK) {  // one of a tuple; a tuple of ones
          std::vector<std::string> names;
          for (const UOp& s : n->src) names.push_back(*s.get()->device_cache.load(std::memory_order_acquire));
          if (n->op == Ops::MSTACK)
            d = intern_device(multi_device_name(names));
          else if (std::vector<std::string> all = device_names(names.at(0));
                   is_multi_device(names.at(0)) && as_int(std::get<ConstValue>(n->arg)) < int64_t(all.size()))
            d = intern_device(all[as_int(std::get<ConstValue>(n->arg))]);
        } else if ((n->op == Ops::COPY || n->op == Ops::BUFFER || n->op == Ops::ALLREDUCE) && n->src.size() > 1)
          d = n->src[1].get()->device_cache.load(std::memory_order_acquire);
        else
          for (const UOp& s : n->src)
            if (const std::string* sd = s.get()->device_cache.load(std::memory_order_acquire);
                sd != uop_device_none()) {
              d = sd;
              break;
            }
        n->device_cache.store(d, std::memory_order_release);
      });
  const std::string* d = u.get()->device_cache.load(std::memory_order_acquire);
  if (d == uop_device_none()) return std::nullopt;
  return *d;
}
std::string uop_device_str(const UOp& u) {
  auto d = uop_device(u);
  TG_CHECK(d.has_value(), "UOp ", u.op(), " has no device");
  return *d;
}

UOp uop_base(const UOp& u) {
  UOp b = u;
  while ((b.op() == Ops::VIEW && !b.src().empty()) || GroupOp::Movement.has(b.op()) || b.op() == Ops::MULTI)
    b = b.src(0);
  return b;
}

// *** movement ops ***

static UOp mop(const UOp& u, Ops op, Arg arg) {
  UOp ret = UOp::make(op, u.dtype(), {u}, std::move(arg));
  const ShapeTracker *a = uop_st(u), *b = uop_st(ret);
  if (a != nullptr && b != nullptr && *a == *b) return u;  // a no-op movement
  return ret;
}
UOp uop_reshape(const UOp& u, const Shape& s) { return mop(u, Ops::RESHAPE, shape_arg(s)); }
UOp uop_expand(const UOp& u, const Shape& s) { return mop(u, Ops::EXPAND, shape_arg(s)); }
UOp uop_permute(const UOp& u, const std::vector<int64_t>& order) {
  Tuple t;
  for (int64_t x : order) t.push_back(ConstValue(x));
  return mop(u, Ops::PERMUTE, std::move(t));
}
UOp uop_pad(const UOp& u, const Mask& arg) { return mop(u, Ops::PAD, mask_arg(arg)); }
UOp uop_shrink(const UOp& u, const Mask& arg) { return mop(u, Ops::SHRINK, mask_arg(arg)); }
UOp uop_flip(const UOp& u, const std::vector<bool>& axes) {
  Tuple t;
  for (bool b : axes) t.push_back(ConstValue(b));
  return mop(u, Ops::FLIP, std::move(t));
}
UOp uop_view(const UOp& u, const ShapeTracker& st) { return UOp::make(Ops::VIEW, u.dtype(), {u}, st_arg(st)); }

// *** consts, buffers, copies, reduces ***

UOp uop_const(DType dtype, const ConstValue& v, const std::optional<std::string>& device,
              const std::optional<Shape>& shape) {
  UOp ret = UOp::const_(dtype, v);
  std::optional<ShapeTracker> st;
  if (shape) st = ShapeTracker::from_shape({}).reshape(Shape(shape->size(), 1)).expand(*shape);
  if (device) {
    UOp dev = UOp::make(Ops::DEVICE, dtypes::void_, {}, device_arg(*device));
    return ret.replace(std::nullopt, std::nullopt,
                       std::vector<UOp>{uop_view(dev, st ? *st : ShapeTracker::from_shape({}))});
  }
  if (st) return ret.replace(std::nullopt, std::nullopt, std::vector<UOp>{st->to_uop()});
  return ret;
}

UOp uop_new_buffer(const std::string& device, sint size, DType dtype) {
  return UOp::make(Ops::BUFFER, dtype, {UOp::unique(), UOp::make(Ops::DEVICE, dtypes::void_, {}, device_arg(device))},
                   ConstValue(size));
}
UOp uop_copy_to_device(const UOp& u, const std::string& device) {
  return UOp::make(Ops::COPY, u.dtype(), {u, UOp::make(Ops::DEVICE, dtypes::void_, {}, device_arg(device))});
}
UOp uop_r(const UOp& u, Ops op, std::vector<int64_t> axes) {
  Shape s = uop_shape(u);
  std::vector<int64_t> keep;
  for (int64_t a : axes)
    if (s.at(static_cast<size_t>(a)) != 1) keep.push_back(a);
  std::sort(keep.begin(), keep.end());
  if (keep.empty()) return u;
  return UOp::make(Ops::REDUCE_AXIS, u.dtype(), {u}, ReduceArg{op, keep});
}

// tensor-level const_like: the const keeps the device and the shape of what it replaces
static UOp tensor_const_like(const UOp& self, const ConstValue& v) {
  const ShapeTracker* st = uop_st(self);
  std::optional<Shape> shape;
  if (st != nullptr) shape = st->shape();
  return uop_const(self.dtype(), v, uop_device(self), shape);
}
// a node's shape for its VIZ label: "(4,4)"; for a VIEW its views, "(4) / (1)" each, with offset and mask
static std::string viz_shape_str(const UOp& u) {
  auto sh = [](const Shape& s) {
    std::vector<std::string> parts;
    for (sint x : s) parts.push_back(std::to_string(x));
    return "(" + join(parts, ",") + ")";
  };
  const ShapeTracker* st = u.op() == Ops::VIEW ? get_st(u.arg()) : uop_st(u);
  if (st == nullptr) return "";
  if (u.op() != Ops::VIEW) return sh(st->shape());
  std::vector<std::string> views;
  for (const View& v : st->views) {
    std::string s = sh(v.shape) + " / " + sh(v.strides) + (v.offset == 0 ? "" : " / " + std::to_string(v.offset));
    if (v.mask) {
      std::vector<std::string> m;
      for (auto [b, e] : *v.mask) m.push_back(sh({b, e}));
      s += "\nMASK (" + join(m, ",") + ")";
    }
    views.push_back(s);
  }
  return join(views, "\n");
}
static const bool registered = (set_const_like_hook(tensor_const_like), trace::set_shape_str_hook(viz_shape_str), true);
bool uop_shape_registered() { return registered; }

}  // namespace tg
