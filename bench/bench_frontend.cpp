// The frontend's speed: building a large model's graph and its gradient, without running anything.
//
//   mlp_build     ms  L layers of h = (h.matmul(W_i) + b_i).relu() on a (16, 32) input, then loss = h.sum()
//   mlp_gradient  ms  loss.gradient({W_0, b_0, ..., W_L-1, b_L-1}): the backward graph by the derivative rules
//
// The graph size printed is the number of UOps in the forward graph (tensor-level nodes). bench/bench_frontend.py
// times the same workload in tinygrad (Python) and prints both side by side with the ratio.
//
//   ./bench_frontend [layers] [--json out.json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tg/tensor/tensor.h"

using namespace tg;

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

int main(int argc, char** argv) {
  int layers = 500;
  std::string json;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      json = argv[++i];
    else
      layers = std::atoi(argv[i]);
  }
  std::vector<Tensor> params;
  for (int i = 0; i < layers; i++) {
    params.push_back(Tensor::empty({32, 32}, {.requires_grad = true}));
    params.push_back(Tensor::empty({32}, {.requires_grad = true}));
  }
  Tensor x = Tensor::empty({16, 32});
  double best_build = 1e30, best_grad = 1e30;
  size_t nodes = 0, grad_nodes = 0;
  for (int rep = 0; rep < 5; rep++) {
    double st = now_s();
    Tensor h = x;
    for (int i = 0; i < layers; i++) h = (h.matmul(params[2 * i]) + params[2 * i + 1]).relu();
    Tensor loss = h.sum();
    double mid = now_s();
    std::vector<Tensor> g = loss.gradient(params);
    double end = now_s();
    best_build = std::min(best_build, mid - st), best_grad = std::min(best_grad, end - mid);
    nodes = loss.uop().toposort().size();
    std::vector<UOp> gs;
    for (const Tensor& t : g) gs.push_back(t.uop());
    grad_nodes = UOp::sink(gs).toposort().size();
  }
  std::printf("layers %d: forward graph %zu UOps, gradient graph %zu UOps\n", layers, nodes, grad_nodes);
  std::printf("mlp_build     %8.2f ms\nmlp_gradient  %8.2f ms\n", best_build * 1e3, best_grad * 1e3);
  if (!json.empty()) {
    std::ofstream f(json);
    f << "{\"layers\": " << layers << ", \"nodes\": " << nodes << ", \"mlp_build\": " << best_build * 1e3
      << ", \"mlp_gradient\": " << best_grad * 1e3 << "}\n";
  }
  return 0;
}
