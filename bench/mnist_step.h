#pragma once
// one MNIST train step's schedule (tinygrad's beautiful_mnist model, Adam) on a synthetic batch, shared by the
// benchmarks that compile or record it (bench_compile, bench_viz)
#include <cstdint>
#include <vector>

#include "../examples/beautiful_mnist.h"
#include "tg/engine/realize.h"
#include "tg/tensor/tensor.h"

// a fixed pseudo-random batch of bs 28x28 digits and labels, realized
inline std::pair<tg::Tensor, tg::Tensor> synthetic_mnist_batch(int64_t bs = 512) {
  std::vector<uint8_t> xs(static_cast<size_t>(bs) * 784), ys(static_cast<size_t>(bs));
  for (size_t i = 0; i < xs.size(); i++) xs[i] = static_cast<uint8_t>((i * 2654435761u) >> 24);
  for (size_t i = 0; i < ys.size(); i++) ys[i] = static_cast<uint8_t>(i % 10);
  return {tg::Tensor(xs, {bs, 1, 28, 28}).realize(), tg::Tensor(ys, {bs}).realize()};
}

// the schedule of one train step: forward, loss, backward and the optimizer's update
inline std::vector<tg::ScheduleItem> train_step_schedule(tg::Model& model, tg::nn::optim::Optimizer& opt,
                                                         const tg::Tensor& x, const tg::Tensor& y) {
  tg::Tensor::train t;
  opt.zero_grad();
  tg::Tensor loss = model(x).sparse_categorical_crossentropy(y);
  loss.backward();
  std::vector<tg::Tensor> outs = opt.schedule_step();
  outs.push_back(loss);
  return tg::Tensor::schedule_with_vars(outs).first;
}
