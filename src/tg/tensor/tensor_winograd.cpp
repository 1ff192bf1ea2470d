// conv2d as Winograd's minimal filtering, F(4x4, 3x3) (Lavin & Gray, arxiv.org/abs/1509.09308), under WINO=1: a
// 3x3 stride-1 conv computes each 4x4 block of its output from a 6x6 tile of its input with 36 multiplies per input
// channel where the direct form takes 144. Every transform is a sum of constant multiples of views, so the lazy
// graph folds the matrices' numbers into the kernels (no buffer of constants); the channel sum between them is the
// one reduce. Any number of spatial dims of size 3 (the transforms apply along each).
#include "tg/tensor/tensor_internal.h"

namespace tg {

namespace {

using Matrix = std::vector<std::vector<double>>;
constexpr int64_t kTileIn = 6, kTileOut = 4;

// the filter transform G (6x3), the input transform B^T (6x6) and the output transform A^T (4x6) of F(4, 3), with the
// interpolation points 0, 1, -1, 2, -2 and infinity
const Matrix& filter_transform() {
  static const Matrix g = {{1.0 / 4, 0, 0},
                           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                           {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                           {1.0 / 24, 1.0 / 12, 1.0 / 6},
                           {1.0 / 24, -1.0 / 12, 1.0 / 6},
                           {0, 0, 1}};
  return g;
}
const Matrix& input_transform() {
  static const Matrix bt = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                            {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  return bt;
}
const Matrix& output_transform() {
  static const Matrix at = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  return at;
}

// m (rows x cols) applied along each of t's first nd dims (each of size cols): (cols,)*nd + rest -> (rows,)*nd + rest.
// Written as the Kronecker product's terms: for every index tuple (c_1..c_nd), the view t[c_1..c_nd] broadcast over
// the output dims, times the product of column c_i of m laid along output dim i. Each term reads t through one view
// and the columns are constants, so the whole sum is one elementwise expression.
Tensor apply_transform(const Matrix& m, const Tensor& t, size_t nd) {
  const int64_t rows = static_cast<int64_t>(m.size()), cols = static_cast<int64_t>(m[0].size());
  const Shape ts = t.shape();
  Shape rest(ts.begin() + static_cast<std::ptrdiff_t>(nd), ts.end()), out(nd, rows);
  out.insert(out.end(), rest.begin(), rest.end());
  // t with the output dims inserted after its own: (cols,)*nd + (rows,)*nd + rest
  Shape r(ts.begin(), ts.begin() + static_cast<std::ptrdiff_t>(nd)), e = r;
  r.insert(r.end(), nd, 1);
  e.insert(e.end(), nd, rows);
  r.insert(r.end(), rest.begin(), rest.end());
  e.insert(e.end(), rest.begin(), rest.end());
  Tensor te = t.reshape(r).expand(e);
  // column c of m along output dim d: constants of out's shape, each row its own full() so they fold
  TensorOptions o{t.device(), t.dtype(), false};
  std::vector<std::vector<Tensor>> column(nd);  // [d][c]
  for (size_t d = 0; d < nd; d++) {
    Shape one = out;
    one[d] = 1;
    for (size_t c = 0; c < static_cast<size_t>(cols); c++) {
      std::vector<Tensor> parts;
      for (size_t k = 1; k < m.size(); k++) parts.push_back(Tensor::full(one, m[k][c], o));
      column[d].push_back(Tensor::full(one, m[0][c], o).cat(parts, static_cast<int64_t>(d)));
    }
  }
  std::optional<Tensor> ret;
  std::vector<int64_t> idx(nd, 0);
  Mask whole;
  for (const sint& s : e) whole.push_back({0, s});
  while (true) {
    Mask at = whole;  // te[c_1..c_nd]: a shrink to one index of each of the first nd dims, dropped
    for (size_t d = 0; d < nd; d++) at[d] = {idx[d], idx[d] + 1};
    Tensor term = te.shrink(at).reshape(out);
    for (size_t d = 0; d < nd; d++) term = term * column[d][static_cast<size_t>(idx[d])];
    ret = ret ? *ret + term : term;
    size_t d = nd;  // the next index tuple, the last dim fastest
    while (d > 0 && ++idx[d - 1] == cols) idx[--d] = 0;
    if (d == 0) break;
  }
  return *ret;
}

}  // namespace

Tensor Tensor::winograd_conv(const Tensor& weight, int64_t groups, const std::vector<std::pair<int64_t, int64_t>>& pads,
                             std::optional<DType> acc) const {
  const Shape xs = shape(), ws = weight.shape();
  const size_t nd = ws.size() - 2;
  const sint bs = xs[0], cin_ = xs[1], cout = ws[0], cin = ws[1], rcout = cout / groups;
  // pad after each dim up to whole 4-wide output blocks: out = in + pads - 2 positions, in tiles of 4 that read 6
  Mask pad_arg{{0, 0}, {0, 0}};
  Shape out_sizes, tiles;
  for (size_t i = 0; i < nd; i++) {
    const sint o = xs[2 + i] + pads[i].first + pads[i].second - 2;
    TG_CHECK(o >= 1, "conv2d: input shape ", shape_str(xs), " with padding gives no output for a 3-wide kernel");
    const sint t = ceildiv(o, sint(kTileOut));
    out_sizes.push_back(o), tiles.push_back(t);
    pad_arg.push_back({pads[i].first, pads[i].second + (t * kTileOut - o)});
  }
  // the input's 6-wide tiles, 4 apart, tile positions first: (6,)*nd + (bs, cin_, *tiles)
  Tensor d = pad(pad_arg).pool(Shape(nd, kTileIn), std::vector<int64_t>(nd, kTileOut));
  std::vector<int64_t> front;
  for (size_t i = 0; i < nd; i++) front.push_back(static_cast<int64_t>(2 + nd + i));
  for (size_t i = 0; i < 2 + nd; i++) front.push_back(static_cast<int64_t>(i));
  d = d.permute(front);
  // the kernel positions first: (3,)*nd + (cout, cin)
  std::vector<int64_t> wfront;
  for (size_t i = 0; i < nd; i++) wfront.push_back(static_cast<int64_t>(2 + i));
  wfront.push_back(0), wfront.push_back(1);
  Tensor g = weight.permute(wfront);

  // both transformed to 6x6: (6,)*nd + (1, groups, rcout, cin, 1...) and (6,)*nd + (bs, groups, 1, cin, *tiles)
  Shape gshape(nd, kTileIn), dshape(nd, kTileIn);
  gshape.insert(gshape.end(), {1, groups, rcout, cin});
  gshape.insert(gshape.end(), nd, 1);
  dshape.insert(dshape.end(), {bs, groups, 1, cin});
  dshape.insert(dshape.end(), tiles.begin(), tiles.end());
  Tensor gf = apply_transform(filter_transform(), g, nd).reshape(gshape);
  Tensor df = apply_transform(input_transform(), d, nd).reshape(dshape);
  // the elementwise products summed over the input channels, back to 4x4: (4,)*nd + (bs, groups, rcout, *tiles)
  Tensor y = apply_transform(output_transform(), (gf * df).sum(-1 - static_cast<int64_t>(nd), false, acc), nd);
  // each tile dim next to its block dim, merged, the padding's extra outputs dropped: (bs, cout, *out)
  std::vector<int64_t> order;
  for (size_t i = 0; i < 3; i++) order.push_back(static_cast<int64_t>(nd + i));
  for (size_t i = 0; i < nd; i++)
    order.push_back(static_cast<int64_t>(nd + 3 + i)), order.push_back(static_cast<int64_t>(i));
  Shape merged{bs, cout};
  Mask keep{{0, bs}, {0, cout}};
  for (size_t i = 0; i < nd; i++) merged.push_back(tiles[i] * kTileOut), keep.push_back({0, out_sizes[i]});
  return y.permute(order).reshape(merged).shrink(keep);
}

}  // namespace tg
