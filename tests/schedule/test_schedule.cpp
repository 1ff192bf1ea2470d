#include <gtest/gtest.h>

#include "tg/schedule/schedule.h"
#include "tg/tensor/tensor.h"

namespace tg {
namespace {

UOp kernelized(const Tensor& t) {
  UOp sink = UOp::sink({t.uop()});
  for (auto& [k, v] : get_kernelize_map(sink))
    if (k == t.uop()) return v;
  return {};
}
std::vector<UOp> kernels(const Tensor& t) {
  std::vector<UOp> ks;
  for (const UOp& u : kernelized(t).toposort())
    if (u.op() == Ops::KERNEL) ks.push_back(u);
  return ks;
}
std::string summary(const Tensor& t) {
  auto ks = kernels(t);
  size_t n_sink = 0;
  std::string reprs;
  for (const UOp& k : ks) {
    n_sink += get_kernel(k).ast.op() == Ops::SINK;
    reprs += (reprs.empty() ? "'" : ", '") + get_kernel(k).repr() + "'";
  }
  return cat(ks.size(), " ", n_sink, " [", reprs, "]");
}
Tensor mat(int64_t n, int64_t m, int64_t off = 0) {
  std::vector<float> v;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) v.push_back(static_cast<float>((i * m + j + off) % 7 - 3));
  return Tensor(v, {n, m});
}
Tensor softmax(const Tensor& x, int64_t axis) {
  MetadataScope s("softmax");
  Tensor m = x - x.max(axis, true).detach();
  Tensor e = m.exp();
  return e.div(e.sum(axis, true));
}
Tensor mm(const Tensor& a, const Tensor& b) {
  MetadataScope s("__matmul__");
  return a.matmul(b);
}

TEST(Kernelize, T347) {
  Tensor u({1, 2, 3, 4});
  Tensor s = u + 3 + 4;
  UOp k = kernelized(s);
  std::cout << k.repr() << "\n";
}

TEST(Kernelize, Cases) {
  Tensor a = Tensor::empty({4, 4});
  std::cout << "ew6 " << summary(((((a + 1) * 2 - 3).exp() + 1).sqrt() * 5)) << "\n";
  std::cout << "reduce_epi " << summary((a * 2 + 1).sum(1) * 3 + 1) << "\n";
  Tensor x = Tensor::empty({4, 16});
  std::cout << "softmax " << summary(softmax(x, -1)) << "\n";
  Tensor A = mat(4, 4), B = mat(4, 4, 5);
  std::cout << "mm_relu_sum " << summary(mm(A, B).relu().sum()) << "\n";
  std::cout << "matmul " << summary(mm(A, B)) << "\n";
  std::cout << "sum0 " << summary(A.sum(0)) << "\n";
  std::cout << "sumall " << summary(A.sum()) << "\n";
  std::cout << "permute " << summary(A.permute({1, 0}).contiguous()) << "\n";
  std::cout << "reduce_expand " << summary(A.sum(1, true) + A) << "\n";
  std::cout << "max_expand " << summary(A.max(1, true).exp() * A) << "\n";
  std::cout << "var " << summary((A - A.mean(1, true)).square().mean(1)) << "\n";
  std::cout << "const_sum " << summary(Tensor::ones({4, 4}).sum(1)) << "\n";
  std::cout << "pad_sum " << summary(A.pad({{1, 1}, {1, 1}}).sum()) << "\n";
  std::cout << "exp_pad " << summary(A.exp().pad({{1, 1}, {1, 1}})) << "\n";
  std::cout << "shrink " << summary(A.reshape({16}).shrink({{2, 10}}) + 1) << "\n";
  Tensor big = Tensor::empty({256, 256});
  std::cout << "bigsum " << summary(big.sum()) << "\n";
  std::cout << "contig_T " << summary(A.contiguous().T().contiguous()) << "\n";
  std::cout << "mm_relu_sum_contig " << summary(mm(A, B).relu().sum().contiguous()) << "\n";
}

}  // namespace
}  // namespace tg
