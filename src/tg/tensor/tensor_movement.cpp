// High-level movement ops (tinygrad's tensor.py "movement high level ops"): padding modes, repeat, split, unfold,
// roll, rearrange, triangles. Everything here is reshape/expand/permute/pad/shrink/flip on the lazy graph, no kernels.
#include <algorithm>
#include <cctype>
#include <cstdint>

#include "tg/tensor/tensor_internal.h"

namespace tg {

namespace {

// the whole of every dim, except [begin, end) of dim d
Mask dim_range(const Shape& s, int64_t d, sint begin, sint end) {
  Mask m;
  for (sint x : s) m.push_back({0, x});
  m[static_cast<size_t>(d)] = {begin, end};
  return m;
}

// the (r, c) bool mask of j - i >= diagonal, from movement ops on a const (tinygrad's _tri): no arange, no kernel
Tensor tri(sint r, sint c, int64_t diagonal, const std::string& device) {
  TensorOptions o{device, dtypes::bool_, std::nullopt};
  if (r == 0 || c == 0 || diagonal >= c) return Tensor::zeros({r, c}, o);
  if (r + diagonal <= 0) return Tensor::ones({r, c}, o);
  // rows of ones followed by as many zeros, cut into rows one shorter: row i starts i places later, so an (s, s)
  // upper triangle
  sint s = r + c - 1;
  Tensor t = Tensor::ones({s, s}, o)
                 .pad({{0, 0}, {0, s}})
                 .flatten()
                 .shrink({{0, s * (2 * s - 1)}})
                 .reshape({s, 2 * s - 1})
                 .shrink({{0, s}, {0, s}});
  return diagonal <= 0 ? t.shrink({{0, r}, {-diagonal, c - diagonal}}) : t.shrink({{diagonal, r + diagonal}, {0, c}});
}

}  // namespace

// *** reshapes ***

Tensor Tensor::view(Shape new_shape) const {
  TG_META("view");
  return reshape(std::move(new_shape));
}

Tensor Tensor::unflatten(int64_t dim, Shape sizes) const {
  TG_META("unflatten");
  TG_CHECK(ndim() > 0, "can't unflatten a 0-d tensor");
  int64_t d = resolve_dim(dim);
  Shape s = shape();
  sint known = 1;
  int64_t inferred = 0;
  for (const sint& x : sizes) {
    if (x == -1)
      inferred++;
    else
      known *= x;
  }
  if (inferred == 1 && known != 0 && s[static_cast<size_t>(d)] % known == 0)  // -1 is inferred within the dim
    for (sint& x : sizes)
      if (x == -1) x = s[static_cast<size_t>(d)] / known;
  Shape ns(s.begin(), s.begin() + d);
  ns.insert(ns.end(), sizes.begin(), sizes.end());
  ns.insert(ns.end(), s.begin() + d + 1, s.end());
  return reshape(ns);
}

// *** padding ***

Tensor Tensor::pad(const Mask& padding, std::string_view mode, ConstValue value) const {
  TG_META("pad");
  TG_CHECK_AS(NotImplementedError, mode == "constant" || mode == "reflect" || mode == "replicate" || mode == "circular",
              "mode='", mode, "' is not supported, use constant, reflect, replicate or circular");
  if (mode == "constant") return pad(padding, value);
  Shape s = shape();
  TG_CHECK_AS(ValueError, padding.size() == s.size(), "padding length ", padding.size(), " must match ndim ", s.size(),
              " of shape ", shape_str(s));
  if (mode == "circular") {  // tiles once more on each padded side, then cuts the window out
    std::vector<int64_t> reps;
    for (size_t d = 0; d < s.size(); d++) {
      auto [b, a] = padding[d];
      TG_CHECK_AS(NotImplementedError, b >= 0 && a >= 0, "negative pads with circular pads are not supported, got (", b,
                  ", ", a, ") for dim ", d);
      TG_CHECK_AS(ValueError, b <= s[d] && a <= s[d], "padding (", b, ", ", a, ") wraps around more than once for dim ",
                  d, " of size ", s[d]);
      reps.push_back(1 + (b > 0) + (a > 0));
    }
    Tensor x = repeat(reps);
    Shape xs = x.shape();
    Mask cut;
    for (size_t d = 0; d < s.size(); d++) {
      auto [b, a] = padding[d];
      cut.push_back({b == 0 ? sint(0) : s[d] - b, a == 0 ? xs[d] : xs[d] - s[d] + a});
    }
    return x.shrink(cut);
  }
  Tensor x = *this;
  for (size_t i = 0; i < s.size(); i++) {  // the positive pads, one dim at a time: the pieces, concatenated
    int64_t d = static_cast<int64_t>(i);
    sint b = std::max<sint>(padding[i].first, 0), a = std::max<sint>(padding[i].second, 0), n = s[i];
    if (b == 0 && a == 0) continue;
    Shape xs = x.shape();
    std::vector<Tensor> pieces;
    if (mode == "reflect") {  // the mirror image without the edge element: b..1 before, n-2..n-1-a after
      TG_CHECK_AS(ValueError, b < n && a < n, "padding (", b, ", ", a, ") should be less than the input size=", n,
                  " for dim=", d, " in reflect mode");
      if (b > 0) pieces.push_back(x.shrink(dim_range(xs, d, 1, b + 1)).flip({d}));
      if (a > 0) pieces.push_back(x.shrink(dim_range(xs, d, n - 1 - a, n - 1)).flip({d}));
    } else {  // replicate: the edge element, expanded
      TG_CHECK(n > 0, "can't replicate-pad dim ", d, " of size 0");
      Shape eb = xs, ea = xs;
      eb[i] = b, ea[i] = a;
      if (b > 0) pieces.push_back(x.shrink(dim_range(xs, d, 0, 1)).expand(eb));
      if (a > 0) pieces.push_back(x.shrink(dim_range(xs, d, n - 1, n)).expand(ea));
    }
    if (b > 0) {
      Tensor first = pieces[0];
      pieces[0] = x;
      x = first.cat(pieces, d);
    } else {
      x = x.cat(pieces, d);
    }
  }
  Shape xs = x.shape();  // negative pads shrink
  Mask cut;
  for (size_t i = 0; i < s.size(); i++)
    cut.push_back({-std::min<sint>(padding[i].first, 0), std::min<sint>(padding[i].second + xs[i], xs[i])});
  return x.shrink(cut);
}

// *** repeats ***

Tensor Tensor::repeat(std::vector<int64_t> repeats) const {
  TG_META("repeat");
  Shape s = shape();
  TG_CHECK_AS(ValueError, repeats.size() >= s.size(), "repeat needs a count for each of the ", s.size(),
              " dims of shape ", shape_str(s), ", got ", py_tuple(repeats));
  for (int64_t r : repeats) TG_CHECK(r >= 0, "repeat counts can't be negative, got ", py_tuple(repeats));
  Shape base(repeats.size() - s.size(), 1);
  base.insert(base.end(), s.begin(), s.end());
  Shape unsqueezed, expanded, out;  // each dim gets a new dim of its count in front: (r0, s0, r1, s1, ...)
  for (size_t i = 0; i < base.size(); i++) {
    unsqueezed.insert(unsqueezed.end(), {1, base[i]});
    expanded.insert(expanded.end(), {repeats[i], base[i]});
    out.push_back(repeats[i] * base[i]);
  }
  return reshape(unsqueezed).expand(expanded).reshape(out);
}

Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const {
  TG_META("repeat_interleave");
  TG_CHECK(repeats >= 0, "repeats can't be negative, got ", repeats);
  Tensor x = dim ? *this : flatten();
  TG_CHECK(x.ndim() > 0, "can't repeat_interleave a 0-d tensor along dim ", *dim);
  size_t d = static_cast<size_t>(dim ? resolve_dim(*dim) : 0);
  Shape s = x.shape(), unsqueezed = s, out = s;  // each element gets a new dim of `repeats` after it
  unsqueezed.insert(unsqueezed.begin() + static_cast<std::ptrdiff_t>(d) + 1, 1);
  Shape expanded = unsqueezed;
  expanded[d + 1] = repeats;
  out[d] *= repeats;
  return x.reshape(unsqueezed).expand(expanded).reshape(out);
}

// *** splitting ***

std::vector<Tensor> Tensor::split(const std::vector<int64_t>& sizes, int64_t dim) const {
  TG_META("split");
  TG_CHECK(ndim() > 0, "can't split a 0-d tensor");
  int64_t d = resolve_dim(dim);
  sint n = shape()[static_cast<size_t>(d)], total = 0;
  for (int64_t x : sizes) {
    TG_CHECK(x >= 0, "split sizes can't be negative, got ", py_tuple(sizes));
    total += x;
  }
  TG_CHECK_AS(AssertionError, total == n, "expect sizes to sum exactly to ", n, ", but got ", total, " from ",
              py_tuple(sizes));
  std::vector<Tensor> out;
  sint at = 0;
  for (int64_t x : sizes) {
    out.push_back(shrink(dim_range(shape(), d, at, at + x)));
    at += x;
  }
  return out;
}
std::vector<Tensor> Tensor::split(int64_t size, int64_t dim) const {
  TG_META("split");
  TG_CHECK(ndim() > 0, "can't split a 0-d tensor");
  TG_CHECK(size > 0, "split size must be positive, got ", size);
  sint n = shape()[static_cast<size_t>(resolve_dim(dim))];
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < std::max<int64_t>(n, 1); at += size) sizes.push_back(std::min<int64_t>(size, n - at));
  return split(sizes, dim);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  TG_META("chunk");
  TG_CHECK_AS(AssertionError, chunks > 0, "expect chunks to be greater than 0, got: ", chunks);
  TG_CHECK(ndim() > 0, "can't chunk a 0-d tensor");
  sint n = shape()[static_cast<size_t>(resolve_dim(dim))];
  if (n == 0) return split(std::vector<int64_t>(static_cast<size_t>(chunks), 0), dim);
  return split(ceildiv(n, chunks), dim);
}

Tensor Tensor::unfold(int64_t dim, int64_t size, int64_t step) const {
  TG_META("unfold");
  TG_CHECK(size >= 0, "size must be >= 0 but got size=", size);
  TG_CHECK(step > 0, "step must be > 0 but got step=", step);
  TG_CHECK_AS(IndexError, ndim() > 0, "can't unfold a 0-d tensor");
  int64_t d = resolve_dim(dim), nd = ndim();
  sint n = shape()[static_cast<size_t>(d)];
  TG_CHECK(size <= n, "maximum size for tensor at dimension ", d, " is ", n, " but size is ", size);
  std::vector<int64_t> to_last;  // dim d moves last
  for (int64_t i = 0; i < nd; i++)
    if (i != d) to_last.push_back(i);
  to_last.push_back(d);
  Tensor x = permute(to_last);
  Shape lead = x.shape();
  lead.pop_back();
  auto with = [&](std::initializer_list<sint> tail) {
    Shape r = lead;
    r.insert(r.end(), tail);
    return r;
  };
  auto last = [&](const Tensor& t, std::initializer_list<std::pair<sint, sint>> tail) {
    Mask m;
    for (sint v : t.shape()) m.push_back({0, v});
    m.resize(m.size() - tail.size());
    m.insert(m.end(), tail);
    return m;
  };
  sint windows = (n - size) / step + 1, len = windows * step;
  std::optional<Tensor> w;  // (..., windows, size)
  if (size <= step) {       // rows of `step` elements from the start of each window, the first `size` of them kept
    Mask widen(lead.size(), {0, 0});
    widen.push_back({0, len - n});
    x = len > n ? x.pad(widen) : x.shrink(last(x, {{0, len}}));
    Tensor rows = x.reshape(with({windows, step}));
    w = rows.shrink(last(rows, {{0, windows}, {0, size}}));
  } else {  // the copies of x back to back, cut into rows of n + 1: row k starts at x[k], so row k, column m is x[k +
            // m]
    std::vector<int64_t> reps(lead.size(), 1);
    reps.push_back(size + 1);
    Tensor rows = x.repeat(reps);
    rows = rows.shrink(last(rows, {{0, size * (n + 1)}})).reshape(with({size, n + 1}));
    rows = rows.shrink(last(rows, {{0, size}, {0, len}})).reshape(with({size, windows, step}));
    w = rows.shrink(last(rows, {{0, size}, {0, windows}, {0, 1}})).reshape(with({size, windows})).transpose(-1, -2);
  }
  std::vector<int64_t> back(static_cast<size_t>(nd) + 1);  // the windows where dim was, the window last
  for (int64_t j = 0; j < nd; j++) back[static_cast<size_t>(to_last[static_cast<size_t>(j)])] = j;
  back[static_cast<size_t>(nd)] = nd;
  return w->permute(back);
}

std::vector<Tensor> Tensor::meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing) {
  TG_META("meshgrid");
  TG_CHECK(indexing == "ij" || indexing == "xy", "indexing must be in (\"ij\", \"xy\"), got ", indexing);
  TG_CHECK(!tensors.empty(), "meshgrid needs at least one tensor");
  if (tensors.size() == 1) return tensors;
  size_t n = tensors.size();
  std::vector<Tensor> grid;
  Shape out(n, 1);
  for (size_t i = 0; i < n; i++) {  // tensor i runs along output dim i ("xy": the first two swap)
    size_t axis = indexing == "xy" && i < 2 ? 1 - i : i;
    Shape s(n, 1);
    s[axis] = tensors[i].numel();
    grid.push_back(tensors[i].reshape(s));
    out[axis] = s[axis];
  }
  for (Tensor& t : grid) t = t.expand(out);
  return grid;
}

// *** rolling and rearranging ***

Tensor Tensor::roll(int64_t shift, int64_t dim) const {
  TG_META("roll");
  return roll(std::vector<int64_t>{shift}, std::vector<int64_t>{dim});
}
Tensor Tensor::roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) const {
  TG_META("roll");
  TG_CHECK(shifts.size() == dims.size(), "roll needs one shift per dim, got shifts=", py_tuple(shifts),
           " and dims=", py_tuple(dims));
  TG_CHECK(ndim() > 0 || dims.empty(), "can't roll a 0-d tensor");
  Tensor x = *this;
  for (size_t i = 0; i < dims.size(); i++) {  // the last `shift` elements move to the front
    int64_t d = resolve_dim(dims[i]);
    sint n = shape()[static_cast<size_t>(d)];
    if (n == 0) continue;
    sint k = ((shifts[i] % n) + n) % n;
    if (k == 0) continue;
    Shape xs = x.shape();
    x = x.shrink(dim_range(xs, d, n - k, n)).cat({x.shrink(dim_range(xs, d, 0, n - k))}, d);
  }
  return x;
}

namespace {
struct FormulaSide {
  std::vector<std::string> names;                 // the axis names in order, "..." for the ellipsis
  std::vector<std::pair<size_t, size_t>> groups;  // [begin, end) of names in brackets; "1" is an empty group
};
FormulaSide parse_side(std::string_view text, std::string_view formula) {
  FormulaSide side;
  constexpr size_t closed = SIZE_MAX;
  size_t open = closed;  // where the open bracket's group begins
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      i++;
    } else if (c == '(') {
      TG_CHECK_AS(AssertionError, open == closed, "nested brackets in ", formula);
      open = side.names.size(), i++;
    } else if (c == ')') {
      TG_CHECK_AS(AssertionError, open != closed, "bracket mismatch in ", formula);
      side.groups.push_back({open, side.names.size()}), open = closed, i++;
    } else {
      size_t j = i;
      while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])) && text[j] != '(' && text[j] != ')')
        j++;
      std::string name(text.substr(i, j - i));
      i = j;
      if (name == "\xE2\x80\xA6") name = "...";  // the unicode ellipsis
      if (name == "1") {
        TG_CHECK_AS(AssertionError, open == closed, "bracket mismatch in ", formula, ": 1 inside brackets");
        side.groups.push_back({side.names.size(), side.names.size()});
        continue;
      }
      bool ok = name == "...";
      if (!ok) {
        ok = (std::isalpha(static_cast<unsigned char>(name[0])) != 0) && name.back() != '_';
        for (char ch : name) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_');
      }
      TG_CHECK_AS(AssertionError, ok, "invalid axis name ", name, " in ", formula);
      side.names.push_back(name);
    }
  }
  TG_CHECK_AS(AssertionError, open == closed, "bracket mismatch in ", formula);
  return side;
}
// "..." becomes n names ...0, ...1, and the groups after it move along
void expand_ellipsis(FormulaSide& side, size_t n) {
  auto it = std::find(side.names.begin(), side.names.end(), "...");
  if (it == side.names.end()) return;
  size_t at = static_cast<size_t>(it - side.names.begin());
  std::vector<std::string> ell;
  for (size_t j = 0; j < n; j++) ell.push_back("..." + std::to_string(j));
  side.names.erase(it);
  side.names.insert(side.names.begin() + static_cast<std::ptrdiff_t>(at), ell.begin(), ell.end());
  for (auto& [b, e] : side.groups) {
    if (b > at) b += n - 1;
    if (e > at) e += n - 1;
  }
}
}  // namespace

Tensor Tensor::rearrange(std::string_view formula, const std::vector<std::pair<std::string, sint>>& sizes) const {
  TG_META("rearrange");
  size_t arrow = formula.find("->");
  TG_CHECK_AS(AssertionError,
              arrow != std::string_view::npos && formula.find("->", arrow + 2) == std::string_view::npos,
              "need exactly one \"->\" in formula ", formula);
  FormulaSide lhs = parse_side(formula.substr(0, arrow), formula), rhs = parse_side(formula.substr(arrow + 2), formula);
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  std::vector<std::string> ls = sorted(lhs.names);
  TG_CHECK_AS(AssertionError, ls == sorted(rhs.names) && std::adjacent_find(ls.begin(), ls.end()) == ls.end(),
              "name mismatch in ", formula);
  for (auto& [name, _] : sizes)
    TG_CHECK_AS(AssertionError, std::count(lhs.names.begin(), lhs.names.end(), name), "axis ", name, " is not used in ",
                formula);
  int64_t described = 0;  // dims the left side names besides the ellipsis: a group is one dim
  for (size_t i = 0; i < lhs.names.size(); i++) {
    bool grouped = false;
    for (auto [b, e] : lhs.groups) grouped |= b <= i && i < e;
    TG_CHECK_AS(AssertionError, !grouped || lhs.names[i] != "...", "cannot have collapsed ellipsis (...) in lhs of ",
                formula);
    described += !grouped && lhs.names[i] != "...";
  }
  described += static_cast<int64_t>(lhs.groups.size());
  bool ellipsis = std::count(lhs.names.begin(), lhs.names.end(), "...") > 0;
  TG_CHECK_AS(AssertionError, ellipsis ? described <= ndim() : described == ndim(), "formula ", formula, " describes ",
              described, " dims but the shape is ", shape_str(shape()));
  expand_ellipsis(lhs, static_cast<size_t>(ndim() - described));
  expand_ellipsis(rhs, static_cast<size_t>(ndim() - described));
  auto size_of = [&](const std::string& name) -> std::optional<sint> {
    for (auto& [n, s] : sizes)
      if (n == name) return s;
    return std::nullopt;
  };
  Tensor t = *this;  // unflatten the left groups, permute to the right order, flatten the right groups
  for (auto [b, e] : lhs.groups) {
    Shape parts;
    for (size_t i = b; i < e; i++) parts.push_back(size_of(lhs.names[i]).value_or(-1));
    t = t.unflatten(static_cast<int64_t>(b), parts);
  }
  for (size_t i = 0; i < lhs.names.size(); i++)
    if (auto s = size_of(lhs.names[i]))
      TG_CHECK_AS(AssertionError, *s == t.shape()[i], "size ", *s, " provided for dimension ", lhs.names[i],
                  " is incorrect, it is ", t.shape()[i]);
  std::vector<int64_t> order;
  for (const std::string& name : rhs.names)
    order.push_back(std::find(lhs.names.begin(), lhs.names.end(), name) - lhs.names.begin());
  t = t.permute(order);
  for (auto it = rhs.groups.rbegin(); it != rhs.groups.rend(); ++it)
    t = it->first < it->second ? t.flatten(static_cast<int64_t>(it->first), static_cast<int64_t>(it->second) - 1)
                               : t.unsqueeze(static_cast<int64_t>(it->first));
  return t;
}

// *** triangles ***

Tensor Tensor::triu(int64_t diagonal) const {
  TG_META("triu");
  TG_CHECK(ndim() >= 2, "triu needs at least 2 dims, got shape ", shape_str(shape()));
  Shape s = shape();
  return tri(s[s.size() - 2], s.back(), diagonal, device()).where(*this, zeros_like()).cast(dtype());
}
Tensor Tensor::tril(int64_t diagonal) const {
  TG_META("tril");
  TG_CHECK(ndim() >= 2, "tril needs at least 2 dims, got shape ", shape_str(shape()));
  Shape s = shape();
  return tri(s[s.size() - 2], s.back(), diagonal + 1, device()).where(zeros_like(), *this).cast(dtype());
}

}  // namespace tg
