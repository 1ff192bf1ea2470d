#pragma once
// the model of tinygrad's examples/beautiful_mnist.py, shared by examples/beautiful_mnist.cpp and
// bench/bench_mnist_step.cpp
#include "tg/nn/nn.h"
#include "tg/nn/optim.h"

namespace tg {

struct Model {
  nn::Conv2d c1{1, 32, 5}, c2{32, 32, 5};
  nn::BatchNorm bn1{32};
  nn::Conv2d c3{32, 64, 3}, c4{64, 64, 3};
  nn::BatchNorm bn2{64};
  nn::Linear l1{576, 10};
  TG_PARAMS(c1, c2, bn1, c3, c4, bn2, l1)

  Tensor operator()(const Tensor& x) {
    Tensor h = c2(c1(x).relu()).relu();
    h = bn1(h).max_pool2d();
    h = c4(c3(h).relu()).relu();
    h = bn2(h).max_pool2d();
    return l1(h.flatten(1));
  }
};

// one training step (run under TinyJit by the callers): forward, the loss, backward, the optimizer's update
inline Tensor train_step_body(Model& model, nn::optim::Optimizer& opt, const Tensor& x, const Tensor& y) {
  Tensor::train t;
  opt.zero_grad();
  Tensor loss = model(x).sparse_categorical_crossentropy(y);
  loss.backward();
  opt.step();
  return loss;
}

}  // namespace tg
