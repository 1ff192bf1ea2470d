#include "tg/shape/view.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <numeric>
#include <unordered_map>

namespace tg {

sint prod(const Shape& s) {
  if (std::find(s.begin(), s.end(), 0) != s.end()) return 0;
  sint p = 1;
  for (const sint& x : s) {  // (2^40, 2^40) has more elements than an int64 holds: an error, not a wrapped size
    int64_t q = 0;
    if (p.is_int() && x.is_int())
      TG_CHECK_AS(ValueError, !__builtin_mul_overflow(p.as_int(), x.as_int(), &q), "shape ", py_tuple(s),
                  " has too many elements");
    p = p.is_int() && x.is_int() ? sint(q) : p * x;
  }
  return p;
}
sint prod_range(const Shape& s, int start, int stop) {
  sint p = 1;
  for (int i = std::max(start, 0); i < std::min<int>(stop, static_cast<int>(s.size())); i++)
    p *= s[static_cast<size_t>(i)];
  return p;
}
std::string shape_str(const Shape& s) { return py_tuple(s); }
int64_t prod(const std::vector<int64_t>& s) { return prod(Shape(s.begin(), s.end())); }

static std::string mask_str(const Mask& m) {
  std::vector<std::string> parts;
  for (auto& [b, e] : m) parts.push_back(cat("(", b, ", ", e, ")"));
  return py_tuple(parts);
}

Shape canonicalize_strides(const Shape& shape, const Shape& strides) {
  Shape out(shape.size());
  for (size_t i = 0; i < shape.size(); i++) out[i] = shape[i] == 1 ? sint(0) : strides[i];
  return out;
}
Shape strides_for_shape(const Shape& shape) {
  if (shape.empty()) return {};
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size() - 1; i > 0; i--) strides[i - 1] = strides[i] * shape[i];
  return canonicalize_strides(shape, strides);
}

// merge contiguous sub-parts and zero-strided dims: (merged size, stride, merged size without zero stride)
static std::vector<std::array<sint, 3>> merge_dims(const Shape& shape, const Shape& strides,
                                                   const std::optional<Mask>& mask) {
  std::vector<std::array<sint, 3>> ret;
  if (shape.empty()) return ret;
  ret.push_back({shape[0], strides[0], strides[0] != 0 ? shape[0] : sint(0)});
  bool merging = mask ? ((*mask)[0].second - (*mask)[0].first == 1) : shape[0] == 1;  // size-1 dims merge into the next
  for (size_t i = 1; i < shape.size(); i++) {
    sint s = shape[i], st = strides[i];
    if (s == 1) continue;
    auto [last_s, last_st, last_pre] = ret.back();
    if (merging || last_st == s * st)
      ret.back() = {last_s * s, st, merging ? s : last_pre * s};
    else
      ret.push_back({s, st, s});
    merging = mask ? ((*mask)[i].second - (*mask)[i].first == 1) : s == 1;
  }
  return ret;
}

// the mask after a reshape, or nullopt if the reshape would cut across it
static std::optional<Mask> reshape_mask(const std::optional<Mask>& mask_in, const Shape& old_shape,
                                        const Shape& new_shape) {
  if (!mask_in) {
    Mask m;
    for (sint s : new_shape) m.push_back({0, s});
    return m;
  }
  for (const auto& [b, e] : *mask_in)
    if (b.is_sym() || e.is_sym()) return std::nullopt;  // a symbolic mask is not reshaped (the reference's too)
  Mask new_mask;
  size_t mi = mask_in->size(), oi = old_shape.size(), ni = new_shape.size();  // reverse iterators, by count left
  auto next_mask = [&]() -> std::pair<sint, sint> { return mi ? (*mask_in)[--mi] : std::pair<sint, sint>{0, 1}; };
  auto next_old = [&]() -> sint { return oi ? old_shape[--oi] : sint(1); };
  auto next_new = [&]() -> sint { return ni ? new_shape[--ni] : sint(1); };
  sint curr_stride = 1, old_dim = next_old(), new_dim = next_new();
  auto mask = next_mask();
  while (new_mask.size() < new_shape.size()) {
    auto [l, r] = mask;
    sint next_stride = new_dim * curr_stride;
    if (old_dim == next_stride) {  // copy the mask and take the next batch
      new_mask.push_back({floordiv(l, curr_stride), floordiv(r - 1, curr_stride) + 1});
      curr_stride = 1, old_dim = next_old(), new_dim = next_new(), mask = next_mask();
    } else if (old_dim > next_stride) {  // split the mask, only if the reshape doesn't cut across it
      if (floormod(old_dim, next_stride) != 0) return std::nullopt;
      if ((floormod(l, next_stride) != 0 || floormod(r, next_stride) != 0) &&
          floordiv(l, next_stride) != floordiv(r - 1, next_stride))
        return std::nullopt;
      new_mask.push_back(
          {floordiv(floormod(l, next_stride), curr_stride), floordiv(floormod(r - 1, next_stride), curr_stride) + 1});
      curr_stride = next_stride, new_dim = next_new();
    } else {
      auto nm = next_mask();
      if (mask != std::pair<sint, sint>{0, old_dim} && l != r && nm.second - nm.first != 1) return std::nullopt;
      mask = {nm.first * old_dim + l, (nm.second - 1) * old_dim + r};
      old_dim = old_dim * next_old();
    }
  }
  std::reverse(new_mask.begin(), new_mask.end());
  return new_mask;
}

static Shape unravel(const Shape& shape, sint offset) {
  Shape idxs(shape.size());
  sint acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    idxs[i] = floormod(floordiv(offset, acc), shape[i]);
    acc *= shape[i];
  }
  return idxs;
}

std::optional<std::vector<std::vector<int64_t>>> get_contraction(const Shape& old_shape, const Shape& new_shape) {
  std::vector<sint> acc_old, acc_new;
  sint a = 1;
  for (sint s : old_shape) acc_old.push_back(a *= s);
  a = 1;
  for (sint s : new_shape) acc_new.push_back(a *= s);
  std::vector<int64_t> split;
  for (sint acc : acc_new) {
    if (acc == 1) {
      split.push_back(0);
      continue;
    }
    auto it = std::find(acc_old.begin(), acc_old.end(), acc);
    if (it == acc_old.end()) return std::nullopt;
    split.push_back(it - acc_old.begin() + 1);
  }
  std::vector<std::vector<int64_t>> ret;
  for (size_t i = 0; i < split.size(); i++) {
    int64_t st = i == 0 ? 0 : split[i - 1],
            ed = i + 1 < split.size() ? split[i] : static_cast<int64_t>(old_shape.size());
    std::vector<int64_t> r;
    for (int64_t j = st; j < ed; j++) r.push_back(j);
    ret.push_back(std::move(r));
  }
  return ret;
}

// *** View ***

View View::create(const Shape& shape, std::optional<Shape> strides_in, sint offset, std::optional<Mask> mask) {
  for (sint s : shape)
    TG_CHECK_AS(ValueError, !resolve_lt(s, 0, false),
                "Trying to create View with negative dimension: shape=", shape_str(shape));
  Shape strides =
      strides_in && !strides_in->empty() ? canonicalize_strides(shape, *strides_in) : strides_for_shape(shape);
  if (std::find(shape.begin(), shape.end(), sint(0)) != shape.end())  // canonicalize 0 in shape
    return View{shape, Shape(shape.size(), 0), 0, std::nullopt, true};
  if (mask) {  // canonicalize a no-op mask
    bool noop = true;
    for (size_t i = 0; i < shape.size(); i++) noop &= (*mask)[i] == std::pair<sint, sint>{0, shape[i]};
    if (noop) mask.reset();
  }
  if (mask) {
    // a dim masked down to one valid index can have stride 0, with the offset adjusted
    std::vector<bool> elim(shape.size());
    bool any_elim = false;
    for (size_t i = 0; i < shape.size(); i++)
      any_elim |= (elim[i] = !resolve_lt((*mask)[i].first + 1, (*mask)[i].second, true));
    if (any_elim) {
      bool empty = false;
      for (auto& [b, e] : *mask) empty |= !resolve_lt(b, e, true);
      if (empty) strides = Shape(shape.size(), 0), offset = 0, mask = Mask(shape.size(), {0, 0});
      for (size_t i = 0; i < shape.size(); i++)
        if (elim[i]) offset += strides[i] * (*mask)[i].first, strides[i] = 0;
    }
  }
  bool contiguous = offset == 0 && !mask && strides == strides_for_shape(shape);
  return View{shape, strides, offset, mask, contiguous};
}

std::pair<UOp, UOp> View::to_indexed_uops(const std::vector<UOp>* idxs_in, UOp valid) const {
  std::vector<UOp> idxs;
  if (idxs_in)
    idxs = *idxs_in;
  else
    for (size_t i = 0; i < shape.size(); i++)
      idxs.push_back(UOp::range(dtypes::int32, shape[i].to_uop(dtypes::int32), static_cast<int64_t>(i)));
  TG_ASSERT(idxs.size() == shape.size(), "to_indexed_uops: ", idxs.size(), " indices for ", shape_str(shape));
  UOp iexpr = offset.to_uop(dtypes::int32);
  UOp vexpr = valid ? valid : UOp::const_(dtypes::bool_, true);
  for (size_t i = 0; i < shape.size(); i++) {
    if (shape[i] != 1 && strides[i] != 0) iexpr = iexpr + idxs[i] * strides[i];
    if (mask) {
      auto [b, e] = (*mask)[i];
      if (b != 0) vexpr = vexpr * (idxs[i] < b).logical_not();
      if (e != shape[i]) vexpr = vexpr * (idxs[i] < e);
    }
  }
  return {iexpr, vexpr};
}

View View::unsafe_resize(const Mask& arg, std::optional<Mask> mask_in) const {
  sint off = 0;
  for (size_t i = 0; i < strides.size(); i++) off += strides[i] * arg[i].first;
  std::optional<Mask> nm = mask_in;
  if (mask) {  // move the old mask, and merge it with the new one if there are two
    Mask moved;
    for (size_t i = 0; i < arg.size(); i++) {
      auto [mx, my] = (*mask)[i];
      auto [ax, ay] = arg[i];
      moved.push_back({smax(0, smin(mx - ax, ay - ax)), smax(0, smin(my - ax, ay - ax))});
    }
    if (mask_in)
      for (size_t i = 0; i < moved.size(); i++)
        moved[i] = {smax(moved[i].first, (*mask_in)[i].first), smin(moved[i].second, (*mask_in)[i].second)};
    nm = moved;
  }
  Shape ns;
  for (auto& [x, y] : arg) ns.push_back(y - x);
  return create(ns, strides, offset + off, nm);
}

View View::pad(const Mask& arg) const {
  TG_CHECK(arg.size() == shape.size(), "invalid pad ", mask_str(arg), " for shape ", shape_str(shape));
  bool any = false;
  for (auto& [b, e] : arg) {
    // a symbolic one is not checked, as the reference's (a KV cache's pad is negative only past the cache)
    TG_CHECK(!all_int({b, e}) || (b >= 0 && e >= 0), "invalid pad ", mask_str(arg), " for shape ", shape_str(shape),
             ": negative padding");
    any |= b != 0 || e != 0;
  }
  if (!any) return *this;
  Mask zvarg, m;
  for (size_t i = 0; i < shape.size(); i++) {
    zvarg.push_back({-arg[i].first, shape[i] + arg[i].second});
    m.push_back({arg[i].first, shape[i] + arg[i].first});
  }
  return unsafe_resize(zvarg, m);
}

View View::shrink(const Mask& arg) const {
  TG_CHECK(arg.size() == shape.size(), "invalid shrink ", mask_str(arg), " for shape ", shape_str(shape));
  for (size_t i = 0; i < shape.size(); i++)  // a symbolic one is the caller's to check (Tensor::shrink)
    TG_CHECK(!all_int({shape[i], arg[i].first, arg[i].second}) ||
                 (0 <= arg[i].first && arg[i].first <= arg[i].second && arg[i].second <= shape[i]),
             "invalid shrink ", mask_str(arg), " for shape ", shape_str(shape));
  return unsafe_resize(arg);
}

View View::expand(const Shape& new_shape) const {
  TG_CHECK(new_shape.size() == shape.size(), "expand arg new_shape=", shape_str(new_shape),
           " must have same number of dimensions as shape=", shape_str(shape));
  for (size_t i = 0; i < shape.size(); i++)
    TG_CHECK(shape[i] == new_shape[i] || shape[i] == 1, "can't expand ", shape_str(shape), " into ",
             shape_str(new_shape));
  if (std::find(shape.begin(), shape.end(), sint(0)) != shape.end()) return create(new_shape);
  std::optional<Mask> nm;
  if (mask) {
    nm = Mask();
    for (size_t i = 0; i < shape.size(); i++) {
      auto m = (*mask)[i];
      if (shape[i] != new_shape[i] && shape[i] == 1)
        nm->push_back(m != std::pair<sint, sint>{0, 1} ? std::pair<sint, sint>{0, 0}
                                                       : std::pair<sint, sint>{0, new_shape[i]});
      else
        nm->push_back(m);
    }
  }
  return create(new_shape, strides, offset, nm);
}

View View::permute(const std::vector<int64_t>& axis) const {
  std::vector<int64_t> sorted = axis;
  std::sort(sorted.begin(), sorted.end());
  bool ok = sorted.size() == shape.size();
  for (size_t i = 0; ok && i < sorted.size(); i++) ok = sorted[i] == static_cast<int64_t>(i);
  TG_CHECK(ok, "invalid permutation ", py_tuple(axis), " of len ", shape.size());
  Shape ns, nst;
  std::optional<Mask> nm;
  if (mask) nm = Mask();
  for (int64_t a : axis) {
    ns.push_back(shape[static_cast<size_t>(a)]), nst.push_back(strides[static_cast<size_t>(a)]);
    if (mask) nm->push_back((*mask)[static_cast<size_t>(a)]);
  }
  return create(ns, nst, offset, nm);
}

View View::flip(const std::vector<bool>& arg) const {
  TG_CHECK(arg.size() == shape.size(), "invalid flip of ", arg.size(), " axes for shape ", shape_str(shape));
  sint off = 0;
  Shape nst = strides;
  std::optional<Mask> nm = mask;
  for (size_t i = 0; i < shape.size(); i++) {
    if (!arg[i]) continue;
    off += (shape[i] - 1) * strides[i];
    nst[i] = -strides[i];
    if (nm) (*nm)[i] = {shape[i] - (*mask)[i].second, shape[i] - (*mask)[i].first};
  }
  return create(shape, nst, offset + off, nm);
}

std::optional<View> View::reshape(const Shape& new_shape) const {
  if (shape == new_shape) return *this;
  for (const sint& s : new_shape)
    TG_CHECK_AS(ValueError, s.is_sym() || s >= 0, "shape can't contain negative numbers ", shape_str(new_shape));
  TG_CHECK_AS(ValueError, !sym_ne(prod(shape), prod(new_shape)),
              "size mismatched, can't reshape self.shape=", shape_str(shape), " -> new_shape=", shape_str(new_shape));
  if (std::find(shape.begin(), shape.end(), sint(0)) != shape.end()) return create(new_shape);
  if (new_shape.empty() && mask)
    for (auto& [mx, my] : *mask)
      if (mx == my) return std::nullopt;
  if (contiguous) return create(new_shape);

  // not contiguous, to a symbolic shape: only dim for dim, each Variable bound to the size it replaces
  if (all_int(shape) && !all_int(new_shape)) {
    TG_CHECK_AS(ValueError, shape.size() == new_shape.size(), "cannot symbolic reshape non-contiguous ", repr(), " -> ",
                shape_str(new_shape));
    for (size_t i = 0; i < shape.size(); i++)
      TG_CHECK_AS(ValueError, bound_value(new_shape[i]) == std::optional<int64_t>(shape[i].as_int()),
                  "cannot symbolic reshape non-contiguous ", repr(), " -> ", shape_str(new_shape));
    return View{new_shape, strides, offset, mask, contiguous};
  }

  Shape r_strides;
  size_t ri = new_shape.size();  // reverse iterator over new_shape
  auto md = merge_dims(shape, strides, mask);
  for (auto it = md.rbegin(); it != md.rend(); ++it) {
    auto [merged_size, new_stride, real_size] = *it;
    sint acc = 1, new_dim = 0;
    while (!resolve_lt(merged_size, acc, false) && acc != merged_size &&
           resolve_lt(0, (new_dim = ri ? new_shape[--ri] : sint(0)), true)) {
      r_strides.push_back(new_stride * acc);
      acc = acc * new_dim;
      if (!resolve_lt(acc, real_size, true)) new_stride = 0;
    }
    if (acc != merged_size) return std::nullopt;
  }
  Shape new_strides(new_shape.size() - r_strides.size(), 0);
  new_strides.insert(new_strides.end(), r_strides.rbegin(), r_strides.rend());
  if (auto new_mask = reshape_mask(mask, shape, new_shape)) {
    sint extra = 0;
    if (mask)
      for (size_t i = 0; i < shape.size(); i++) extra += (*mask)[i].first * strides[i];
    for (size_t i = 0; i < new_shape.size(); i++) extra -= (*new_mask)[i].first * new_strides[i];
    return create(new_shape, new_strides, offset + extra, new_mask);
  }
  return std::nullopt;
}

int64_t View::size() const {
  Shape m;
  for (const sint& s : shape) m.push_back(s.vmax());
  return prod(m);
}

View View::minify() const {
  Shape min_shape;
  for (auto& m : merge_dims(shape, strides, mask)) min_shape.push_back(m[0]);
  auto nv = reshape(min_shape);
  return nv ? *nv : *this;
}

uint64_t View::hash() const {
  uint64_t h = shape.size();
  auto mix = [&](const sint& v) { h = hash_combine(h, static_cast<uint64_t>(v.hash())); };
  for (const sint& x : shape) mix(x);
  for (const sint& x : strides) mix(x);
  mix(offset), mix(sint(contiguous)), mix(sint(mask.has_value()));
  if (mask)
    for (const auto& [lo, hi] : *mask) mix(lo), mix(hi);
  return h;
}

std::optional<View> View::merge(const View& vm1) const {
  struct Entry {
    View vm2, vm1;
    std::optional<View> merged;
  };
  static std::mutex mu;
  static std::unordered_map<uint64_t, std::vector<Entry>> memo;
  static size_t entries = 0;
  const uint64_t key = hash_combine(hash(), vm1.hash());
  {
    std::lock_guard lock(mu);
    if (auto it = memo.find(key); it != memo.end())
      for (const Entry& e : it->second)
        if (e.vm2 == *this && e.vm1 == vm1) return e.merged;
  }
  std::optional<View> merged = merge_uncached(vm1);
  std::lock_guard lock(mu);
  if (entries >= (1 << 16)) memo.clear(), entries = 0;  // bounded: views that never repeat don't pile up
  memo[key].push_back({*this, vm1, merged});
  entries++;
  return merged;
}

// this (vm2) followed by vm1 as a single view, if there is one
std::optional<View> View::merge_uncached(const View& vm1) const {
  const View& vm2 = *this;
  if (vm2.contiguous) return vm1;
  if (vm1.contiguous && vm1.shape == vm2.shape) return vm2;
  if (vm1.contiguous && vm1.size() == vm2.size())
    if (auto r = vm2.reshape(vm1.shape)) return r;
  if (vm1.mask) {
    View nv1 = vm1.shrink(*vm1.mask);
    if (nv1 == vm1) return std::nullopt;
    auto merged = vm2.merge(nv1);
    if (!merged) return std::nullopt;
    Mask pads;
    for (size_t i = 0; i < vm1.shape.size(); i++)
      pads.push_back({(*vm1.mask)[i].first, vm1.shape[i] - (*vm1.mask)[i].second});
    return merged->pad(pads);
  }
  if (!all_int(vm1.shape)) return std::nullopt;
  // project vm1's offset and strides on to vm2
  Shape origin = unravel(vm2.shape, vm1.offset);
  std::vector<std::vector<std::pair<size_t, sint>>> terms(vm2.shape.size());
  Shape strides_out(vm1.shape.size(), 0);
  for (size_t d1 = 0; d1 < vm1.strides.size(); d1++) {
    sint st = vm1.strides[d1];
    if (st == 0) continue;
    Shape moved = unravel(vm2.shape, vm1.offset + st);
    for (size_t d2 = 0; d2 < vm2.shape.size(); d2++) {
      sint s1 = moved[d2] - origin[d2];
      if (s1 == 0) continue;
      terms[d2].push_back({d1, s1});
      strides_out[d1] += s1 * vm2.strides[d2];
    }
  }
  // merge dims of vm2 where needed (merging too many makes vm2's mask hard to project)
  std::vector<UOp> idxs;
  for (size_t i = 0; i < vm1.shape.size(); i++)
    idxs.push_back(UOp::variable(cat("idx", i), int64_t(0), vm1.shape[i] - 1));
  sint merged_size = 1;
  UOp merged_term = UOp::const_(dtypes::int32, 0);
  std::vector<std::pair<sint, UOp>> extents;
  for (size_t k = vm2.shape.size(); k-- > 0;) {
    UOp sum = UOp::const_(dtypes::int32, 0);
    bool first = true;
    for (auto& [d1, s1] : terms[k]) sum = first ? idxs[d1] * s1 : sum + idxs[d1] * s1, first = false;
    merged_term = merged_term + (sum + origin[k]) * merged_size;
    merged_size *= vm2.shape[k];
    UOp lt = merged_term < merged_size, ge = (merged_term < 0).logical_not();
    auto resolve_false = [](const UOp& c) {
      UOp s = c.simplify();
      return const_eq_numeric(s.vmin(), s.vmax()) && as_bool(s.vmin());
    };
    if (resolve_false(lt) && resolve_false(ge)) {
      extents.push_back({merged_size, merged_term});
      merged_size = 1, merged_term = UOp::const_(dtypes::int32, 0);
    }
  }
  {
    UOp s = merged_term.simplify();  // resolve(merged_term != 0), default True
    if (!(s.vmin() == s.vmax() && as_int(s.vmin()) == 0)) return std::nullopt;
  }
  Shape vm2_shape;
  for (auto it = extents.rbegin(); it != extents.rend(); ++it) vm2_shape.push_back(it->first);
  if (vm2_shape != vm2.shape) {
    auto reshaped = vm2.reshape(vm2_shape);
    if (!reshaped) return std::nullopt;
    if (reshaped->shape != vm2.shape) return reshaped->merge(vm1);
  }
  if (vm2.mask) {  // try to project vm2's mask on to vm1
    Shape newb(vm1.shape.size(), 0), newe = vm1.shape;
    bool bad = false;
    for (size_t i = 0; i < vm2.mask->size(); i++) {
      auto [b, e] = (*vm2.mask)[i];
      sint o = origin[i];
      const UOp& t = extents[extents.size() - 1 - i].second;
      if (!resolve_lt(as_int(t.vmin()), b, true) && resolve_lt(as_int(t.vmax()), e, false)) continue;
      if (terms[i].size() != 1) {
        if (terms[i].empty() && !newe.empty())
          newe[0] = 0;
        else
          bad = true;
        continue;
      }
      auto [d1, s1] = terms[i][0];
      newb[d1] = smax(newb[d1], ceildiv(s1 > 0 ? b - o : e - o - 1, s1));
      newe[d1] = smin(newe[d1], floordiv(s1 < 0 ? b - o : e - o - 1, s1) + 1);
    }
    bool masked = false;
    for (size_t i = 0; i < vm1.shape.size(); i++) masked |= newb[i] != 0 || newe[i] != vm1.shape[i];
    if (masked) {
      Mask nm;
      for (size_t i = 0; i < vm1.shape.size(); i++) nm.push_back({newb[i], newe[i]});
      return vm2.merge(create(vm1.shape, vm1.strides, vm1.offset, nm));
    }
    if (bad) return std::nullopt;
  }
  sint off = vm2.offset;
  for (size_t i = 0; i < origin.size(); i++) off += origin[i] * vm2.strides[i];
  return create(vm1.shape, strides_out, off);
}

std::string View::repr() const {
  return cat("View(shape=", shape_str(shape), ", strides=", shape_str(strides), ", offset=", offset,
             ", mask=", mask ? mask_str(*mask) : "None", ", contiguous=", contiguous ? "True" : "False", ")");
}

}  // namespace tg
