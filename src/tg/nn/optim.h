#pragma once
// optimizers (tinygrad's nn/optim.py): SGD and LARS, Adam, AdamW and LAMB, OptimizerGroup.
//
//   auto opt = nn::optim::Adam(nn::state::get_parameters(model), {.lr = 1e-3});
//   Tensor::train t;                              // step() refuses unless Tensor::training
//   opt.zero_grad(); loss.backward(); opt.step(); // step realizes the params and the optimizer state in one schedule
//
// The learning rate is a Tensor of shape (1,) (a scalar under CONST_LR=1), so it can be changed with
// opt.lr.assign(...) between steps, also under a JIT. FUSE_OPTIM=1 (or .fused = true) concatenates all params into
// one buffer per state tensor. An optimizer keeps handles of its params: moving one is fine, and an
// OptimizerGroup holds plain pointers to its optimizers, which must outlive it.
#include <optional>
#include <utility>
#include <vector>

#include "tg/tensor/tensor.h"

namespace tg::nn::optim {

class Optimizer {
 public:
  // params whose requires_grad is unset get requires_grad=true; those with requires_grad=false are buffers, realized
  // with each step. Params are deduplicated (the same tensor twice is one param).
  Optimizer(const std::vector<Tensor>& params, double lr, std::optional<bool> fused = std::nullopt);
  Optimizer(const Optimizer&) = default;
  Optimizer(Optimizer&&) = default;
  Optimizer& operator=(const Optimizer&) = default;
  Optimizer& operator=(Optimizer&&) = default;
  virtual ~Optimizer() = default;

  virtual void zero_grad();  // drops the params' grads
  void step();               // realizes schedule_step() in one schedule
  // the updates as assigns to the params (and the optimizer's state): the tensors to realize
  virtual std::vector<Tensor> schedule_step();

  std::vector<Tensor> params, buffers;
  Tensor lr;
  std::string device;
  bool fused = false;

 protected:
  Optimizer() : lr(0.0f) {}  // OptimizerGroup
  // new values of `params` (the concatenation when fused) and the state tensors to realize
  virtual std::pair<std::vector<Tensor>, std::vector<Tensor>> _step(const std::vector<Tensor>& params,
                                                                    const std::vector<Tensor>& grads) = 0;
  std::vector<Tensor> new_optim_param() const;  // zeroed float32 state, one per param (one in all when fused)
  std::vector<int64_t> pos_params;              // fused: where each param starts in the concatenation
};

// steps several optimizers as one (their tensors are realized in one schedule)
class OptimizerGroup : public Optimizer {
 public:
  explicit OptimizerGroup(std::vector<Optimizer*> optimizers);
  Optimizer& operator[](size_t i) const { return *optimizers.at(i); }
  void zero_grad() override;
  std::vector<Tensor> schedule_step() override;

  std::vector<Optimizer*> optimizers;

 protected:
  std::pair<std::vector<Tensor>, std::vector<Tensor>> _step(const std::vector<Tensor>&,
                                                            const std::vector<Tensor>&) override;
};

struct LARSOptions {
  double lr = 0.001, momentum = 0.9, weight_decay = 1e-4;
  bool nesterov = false;
  bool classic = true;   // the learning rate scales the gradient before the momentum (after it when false)
  double tcoef = 0.001;  // trust coefficient; 0 is plain SGD
  std::optional<bool> fused = std::nullopt;  // default: FUSE_OPTIM
};
// Layer-wise Adaptive Rate Scaling: SGD whose step is scaled by a trust ratio per param
class LARS : public Optimizer {
 public:
  explicit LARS(const std::vector<Tensor>& params, LARSOptions opts = {});
  double momentum, wd;
  bool nesterov, classic;
  double tcoef;
  std::vector<Tensor> b;  // momentum buffers (empty without momentum)

 protected:
  std::pair<std::vector<Tensor>, std::vector<Tensor>> _step(const std::vector<Tensor>& params,
                                                            const std::vector<Tensor>& grads) override;
};

struct SGDOptions {
  double lr = 0.001, momentum = 0.0, weight_decay = 0.0;
  bool nesterov = false, classic = false;
  std::optional<bool> fused = std::nullopt;
};
// SGD is LARS with no trust ratio
LARS SGD(const std::vector<Tensor>& params, SGDOptions opts = {});

struct LAMBOptions {
  double lr = 0.001, b1 = 0.9, b2 = 0.999, eps = 1e-6, weight_decay = 0.0;
  bool adam = false;  // no trust ratio: Adam/AdamW
  std::optional<bool> fused = std::nullopt;
};
class LAMB : public Optimizer {
 public:
  explicit LAMB(const std::vector<Tensor>& params, LAMBOptions opts = {});
  double b1, b2, eps, wd;
  bool adam;
  Tensor b1_t, b2_t;         // b1**t and b2**t, shape (1,)
  std::vector<Tensor> m, v;  // first and second moments, float32

 protected:
  std::pair<std::vector<Tensor>, std::vector<Tensor>> _step(const std::vector<Tensor>& params,
                                                            const std::vector<Tensor>& grads) override;
};

struct AdamOptions {
  double lr = 0.001, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  std::optional<bool> fused = std::nullopt;
};
struct AdamWOptions {
  double lr = 0.001, b1 = 0.9, b2 = 0.999, eps = 1e-8, weight_decay = 0.01;
  std::optional<bool> fused = std::nullopt;
};
// Adam and AdamW are LAMB without the trust ratio
LAMB Adam(const std::vector<Tensor>& params, AdamOptions opts = {});
LAMB AdamW(const std::vector<Tensor>& params, AdamWOptions opts = {});

}  // namespace tg::nn::optim
