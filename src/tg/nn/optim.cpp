// optimizers (tinygrad's nn/optim.py)
#include "tg/nn/optim.h"

#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"

namespace tg::nn::optim {

namespace {

std::vector<Tensor> dedup(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) {
    bool seen = false;
    for (const Tensor& o : out) seen = seen || o.is(t);  // tinygrad dedups params by identity
    if (!seen) out.push_back(t);
  }
  return out;
}

std::vector<Tensor> concat(std::vector<Tensor> a, const std::vector<Tensor>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// tinygrad's `x *= c`: an assign of x*c
void imul(Tensor& x, double c) {
  MetadataScope m("__imul__");
  x.assign(x.mul(x.scalar_like(c)));
}

}  // namespace

// *** Optimizer ***

Optimizer::Optimizer(const std::vector<Tensor>& ps, double lr_, std::optional<bool> fused_) : lr(0.0f) {
  std::vector<Tensor> all = ps;
  for (Tensor& x : all)
    if (!x.requires_grad()) x.requires_grad_(true);
  std::vector<Tensor> with_grad, without;
  for (const Tensor& x : all) (*x.requires_grad() ? with_grad : without).push_back(x);
  params = dedup(with_grad);
  TG_CHECK(!params.empty(), "optimizer must have at least one param");
  device = params[0].device();
  buffers = dedup(without);
  fused = fused_.value_or(FUSE_OPTIM != 0);
  // lr is stored in at least float32 precision
  TensorOptions o{device, least_upper_dtype({dtypes::default_float, dtypes::float32}), false};
  lr = CONST_LR ? Tensor(lr_, o) : Tensor(std::vector<double>{lr_}, {1}, o);
  if (fused) {
    pos_params = {0};
    for (const Tensor& t : params) pos_params.push_back(pos_params.back() + t.numel());
  }
}

std::vector<Tensor> Optimizer::new_optim_param() const {
  auto zeros = [&](const Shape& s, const std::string& dev) {
    return Tensor::zeros(s, TensorOptions{dev, dtypes::float32, false}).contiguous();
  };
  if (fused) return {zeros({pos_params.back()}, device)};
  std::vector<Tensor> out;
  for (const Tensor& t : params) out.push_back(zeros(t.shape(), t.device()));
  return out;
}

void Optimizer::zero_grad() {
  for (Tensor& p : params) p.set_grad(std::nullopt);
}

void Optimizer::step() { Tensor::realize(schedule_step()); }

std::vector<Tensor> Optimizer::schedule_step() {
  TG_CHECK(Tensor::training, "Tensor::training=false, Tensor::training must be enabled to use the optimizer: set ",
           "Tensor::training = true (or hold a Tensor::train scope) before calling step()");
  std::vector<Tensor> grads;
  for (size_t i = 0; i < params.size(); i++) {
    std::optional<Tensor> g = params[i].grad();
    TG_CHECK(g.has_value(), "param ", i, " of shape ", shape_str(params[i].shape()),
             " has no grad: call backward() first");
    grads.push_back(*g);
  }
  std::vector<Tensor> updated, extra;
  if (fused) {
    // all params (and grads) as one flat tensor: one _step, then split back up
    auto flat_cat = [](const std::vector<Tensor>& ts) {
      std::vector<Tensor> rest;
      for (size_t i = 1; i < ts.size(); i++) rest.push_back(ts[i].flatten());
      return ts[0].flatten().cat(rest, 0);
    };
    auto [out, ex] = _step({flat_cat(params)}, {flat_cat(grads)});
    for (size_t i = 0; i < params.size(); i++)
      updated.push_back(out[0].shrink({{pos_params[i], pos_params[i + 1]}}).reshape(params[i].shape()));
    extra = std::move(ex);
  } else {
    std::tie(updated, extra) = _step(params, grads);
  }
  for (size_t i = 0; i < params.size(); i++) params[i].assign(updated[i]);
  return concat(concat(extra, params), buffers);
}

// *** OptimizerGroup ***

OptimizerGroup::OptimizerGroup(std::vector<Optimizer*> opts) : optimizers(std::move(opts)) {
  for (Optimizer* o : optimizers) {
    TG_CHECK(o != nullptr, "OptimizerGroup: null optimizer");
    params = concat(params, o->params);
    buffers = concat(buffers, o->buffers);
  }
  if (!optimizers.empty()) lr = optimizers[0]->lr, device = optimizers[0]->device;
}
void OptimizerGroup::zero_grad() {
  for (Optimizer* o : optimizers) o->zero_grad();
}
std::vector<Tensor> OptimizerGroup::schedule_step() {
  std::vector<Tensor> out;
  for (Optimizer* o : optimizers) out = concat(std::move(out), o->schedule_step());
  return out;
}
std::pair<std::vector<Tensor>, std::vector<Tensor>> OptimizerGroup::_step(const std::vector<Tensor>&,
                                                                          const std::vector<Tensor>&) {
  throw Error("OptimizerGroup steps through its optimizers");
}

// *** LARS and SGD ***

LARS::LARS(const std::vector<Tensor>& ps, LARSOptions o)
    : Optimizer(ps, o.lr, o.fused),
      momentum(o.momentum),
      wd(o.weight_decay),
      nesterov(o.nesterov),
      classic(o.classic),
      tcoef(o.tcoef) {
  if (momentum != 0) b = new_optim_param();
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> LARS::_step(const std::vector<Tensor>& ps,
                                                                const std::vector<Tensor>& grads) {
  std::vector<Tensor> ret;
  for (size_t i = 0; i < ps.size(); i++) {
    Tensor t = ps[i].detach(), g = grads[i];
    std::optional<Tensor> r;  // the trust ratio; none is 1.0
    if (tcoef != 0) {
      Tensor r1 = t.square().sum().sqrt(), r2 = g.square().sum().sqrt();
      Tensor ratio = tcoef * r1 / (r2 + wd * r1);
      r = (r1 > 0).where((r2 > 0).where(ratio, ratio.scalar_like(1.0)), ratio.scalar_like(1.0));
    }
    auto scale = [&](const Tensor& x) { return r ? x * *r * lr : x * 1.0 * lr; };
    g = g + wd * t;
    if (classic) g = scale(g);  // classic momentum: the learning rate goes in before the momentum
    if (momentum != 0) {
      // contiguous: b[i] read as a view would alias the buffer it is assigned to
      b[i].assign(momentum * b[i].contiguous() + g);
      g = nesterov ? g + momentum * b[i] : b[i];
    }
    if (!classic) g = scale(g);
    ret.push_back((t - g).cast(ps[i].dtype()));
  }
  return {ret, b};
}

LARS SGD(const std::vector<Tensor>& params, SGDOptions o) {
  return LARS(params, {.lr = o.lr,
                       .momentum = o.momentum,
                       .weight_decay = o.weight_decay,
                       .nesterov = o.nesterov,
                       .classic = o.classic,
                       .tcoef = 0.0,
                       .fused = o.fused});
}

// *** LAMB, Adam and AdamW ***

LAMB::LAMB(const std::vector<Tensor>& ps, LAMBOptions o)
    : Optimizer(ps, o.lr, o.fused),
      b1(o.b1),
      b2(o.b2),
      eps(o.eps),
      wd(o.weight_decay),
      adam(o.adam),
      b1_t(Tensor::ones({1}, TensorOptions{device, dtypes::float32, false}).contiguous()),
      b2_t(Tensor::ones({1}, TensorOptions{device, dtypes::float32, false}).contiguous()),
      m(new_optim_param()),
      v(new_optim_param()) {}

std::pair<std::vector<Tensor>, std::vector<Tensor>> LAMB::_step(const std::vector<Tensor>& ps,
                                                                const std::vector<Tensor>& grads) {
  std::vector<Tensor> ret;
  imul(b1_t, b1);
  imul(b2_t, b2);
  for (size_t i = 0; i < ps.size(); i++) {
    Tensor t = ps[i].detach(), g = grads[i];
    m[i].assign(b1 * m[i] + (1.0 - b1) * g);
    v[i].assign(b2 * v[i] + (1.0 - b2) * (g * g));
    Tensor m_hat = m[i] / (1.0 - b1_t), v_hat = v[i] / (1.0 - b2_t);
    Tensor up = (m_hat / (v_hat.sqrt() + eps)) + wd * t;
    auto step = [&] {
      if (adam) return lr * 1.0 * up;
      Tensor r1 = t.square().sum().sqrt(), r2 = up.square().sum().sqrt();
      Tensor one = r1.scalar_like(1.0);
      return lr * (r1 > 0).where((r2 > 0).where(r1 / r2, one), one) * up;
    }();
    ret.push_back((t - step).cast(ps[i].dtype()));
  }
  return {ret, concat(concat({b1_t, b2_t}, m), v)};
}

LAMB Adam(const std::vector<Tensor>& params, AdamOptions o) {
  return LAMB(params,
              {.lr = o.lr, .b1 = o.b1, .b2 = o.b2, .eps = o.eps, .weight_decay = 0.0, .adam = true, .fused = o.fused});
}
LAMB AdamW(const std::vector<Tensor>& params, AdamWOptions o) {
  return LAMB(params, {.lr = o.lr,
                       .b1 = o.b1,
                       .b2 = o.b2,
                       .eps = o.eps,
                       .weight_decay = o.weight_decay,
                       .adam = true,
                       .fused = o.fused});
}

}  // namespace tg::nn::optim
