// nn layers: initialization as the reference (values for a seed from tinygrad), forward against plain loops,
// BatchNorm's running statistics, state dict names, bad input.
#include <gtest/gtest.h>

#include <cmath>

#include "tg/nn/nn.h"
#include "tg/nn/state.h"

using namespace tg;

namespace {
void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}
std::vector<float> first(const Tensor& t, size_t n) {
  auto v = t.flatten().tolist<float>();
  v.resize(n);
  return v;
}
}  // namespace

// Tensor.manual_seed(0); Linear(3, 2); Conv2d(2, 2, 2); ConvTranspose2d(2, 3, 2); Embedding(4, 3) in the reference
TEST(Layers, InitializedAsTheReference) {
  Tensor::manual_seed(0);
  nn::Linear l(3, 2);
  expect_close(l.weight.flatten().tolist<float>(), {0.1064416840672493, -0.09684685617685318, 0.5690837502479553,
                                                    0.5473222136497498, 0.04693528264760971, -0.5307235717773438});
  expect_close(l.bias->tolist<float>(), {0.14437830448150635, -0.16045980155467987});
  nn::Conv2d c(2, 2, 2);
  expect_close(first(c.weight, 4),
               {-0.19648346304893494, 0.16173094511032104, -0.0005678866291418672, 0.25760263204574585});
  expect_close(c.bias->tolist<float>(), {-0.2747878432273865, 0.19347114861011505});
  nn::ConvTranspose2d ct(2, 3, 2);
  EXPECT_EQ(ct.weight.shape(), (Shape{2, 3, 2, 2}));
  expect_close(first(ct.weight, 3), {0.17503754794597626, -0.17893250286579132, 0.29708781838417053});
  expect_close(ct.bias->tolist<float>(), {-0.32290393114089966, -0.034987278282642365, 0.10848421603441238});
  nn::Embedding e(4, 3);
  expect_close(first(e.weight, 3), {0.34539085626602173, 0.2484227567911148, 0.0067720795050263405});
}

TEST(Layers, StateDictNamesAsTheReference) {
  nn::BatchNorm bn(3);
  EXPECT_EQ(nn::state::get_state_dict(bn).keys(),
            (std::vector<std::string>{"weight", "bias", "num_batches_tracked", "running_mean", "running_var"}));
  nn::LSTMCell cell(2, 3);
  EXPECT_EQ(nn::state::get_state_dict(cell).keys(),
            (std::vector<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"}));
  nn::Linear nobias(2, 2, false);
  EXPECT_EQ(nn::state::get_state_dict(nobias).keys(), (std::vector<std::string>{"weight"}));
}

TEST(Layers, LinearAndConvAgainstLoops) {
  nn::Linear l(3, 2);
  Tensor x = Tensor(std::vector<float>{1, -2, 0.5f, 3, 0, -1}, {2, 3});
  auto w = l.weight.tolist<float>(), b = l.bias->tolist<float>(), y = l(x).tolist<float>();
  auto xv = x.tolist<float>();
  for (int n = 0; n < 2; n++)
    for (int o = 0; o < 2; o++) {
      double acc = b[o];
      for (int i = 0; i < 3; i++) acc += double(xv[n * 3 + i]) * w[o * 3 + i];
      EXPECT_NEAR(y[n * 2 + o], acc, 1e-5);
    }
  nn::Conv2d c(2, 3, 3, {.padding = {1}});
  std::vector<float> img(2 * 4 * 4);
  for (size_t i = 0; i < img.size(); i++) img[i] = std::sin(static_cast<float>(i));
  Tensor out = c(Tensor(img, {1, 2, 4, 4}));
  ASSERT_EQ(out.shape(), (Shape{1, 3, 4, 4}));
  auto cw = c.weight.tolist<float>(), cb = c.bias->tolist<float>(), ov = out.tolist<float>();
  for (int o = 0; o < 3; o++)
    for (int yy = 0; yy < 4; yy++)
      for (int xx = 0; xx < 4; xx++) {
        double acc = cb[o];
        for (int ci = 0; ci < 2; ci++)
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
              int iy = yy + ky - 1, ix = xx + kx - 1;
              if (iy < 0 || iy >= 4 || ix < 0 || ix >= 4) continue;
              acc += double(img[(ci * 4 + iy) * 4 + ix]) * cw[((o * 2 + ci) * 3 + ky) * 3 + kx];
            }
        EXPECT_NEAR(ov[(o * 4 + yy) * 4 + xx], acc, 1e-5);
      }
  nn::Conv2d same(1, 1, 4, {.padding_same = true, .dilation = {1}});
  EXPECT_EQ(same(Tensor::ones({1, 1, 5, 5})).shape(), (Shape{1, 1, 5, 5}));
  EXPECT_EQ(nn::Conv1d(2, 4, 3)(Tensor::ones({1, 2, 7})).shape(), (Shape{1, 4, 5}));
  EXPECT_EQ(nn::ConvTranspose2d(2, 4, 3, {.stride = {2}})(Tensor::ones({1, 2, 3, 3})).shape(), (Shape{1, 4, 7, 7}));
}

// the reference: BatchNorm(2) on this (2, 2, 2, 2) batch, in training and then in eval mode
TEST(Layers, BatchNormTrainingUpdatesRunningStats) {
  nn::BatchNorm bn(2);
  std::vector<float> one = {1, 2, 3, 5, 0.5f, -1, 2, 0};
  std::vector<float> two = one;
  two.insert(two.end(), one.begin(), one.end());
  Tensor x = Tensor(two, {2, 2, 2, 2});
  {
    Tensor::train t;
    expect_close(first(bn(x), 4), {-1.183213233947754, -0.5070914030075073, 0.16903045773506165, 1.5212740898132324},
                 1e-5);
  }
  expect_close(bn.running_mean->tolist<float>(), {0.2750000059604645, 0.03750000149011612});
  expect_close(bn.running_var->tolist<float>(), {1.149999976158142, 1.0339285135269165}, 1e-6);
  EXPECT_EQ(bn.num_batches_tracked.tolist<int64_t>(), (std::vector<int64_t>{1}));
  expect_close(first(bn(x), 4), {0.676063060760498, 1.6085638999938965, 2.541064500808716, 4.406065940856934}, 1e-5);
}

TEST(Layers, NormsAgainstLoops) {
  std::vector<float> v = {1, 2, 4, -1, 0, 3, 2, 2, 5, -3, 1, 0};
  Tensor x = Tensor(v, {2, 2, 3});
  // LayerNorm over the last dim
  auto ln = nn::LayerNorm(3)(x).tolist<float>();
  for (int r = 0; r < 4; r++) {
    double m = (v[r * 3] + v[r * 3 + 1] + v[r * 3 + 2]) / 3.0, var = 0;
    for (int i = 0; i < 3; i++) var += (v[r * 3 + i] - m) * (v[r * 3 + i] - m) / 3;
    for (int i = 0; i < 3; i++) EXPECT_NEAR(ln[r * 3 + i], (v[r * 3 + i] - m) / std::sqrt(var + 1e-5), 1e-5);
  }
  // GroupNorm(1 group) normalizes each sample over all channels; InstanceNorm each (sample, channel)
  auto gn = nn::GroupNorm(1, 2)(x).tolist<float>();
  for (int n = 0; n < 2; n++) {
    double m = 0, var = 0;
    for (int i = 0; i < 6; i++) m += v[n * 6 + i] / 6.0;
    for (int i = 0; i < 6; i++) var += (v[n * 6 + i] - m) * (v[n * 6 + i] - m) / 6;
    for (int i = 0; i < 6; i++) EXPECT_NEAR(gn[n * 6 + i], (v[n * 6 + i] - m) / std::sqrt(var + 1e-5), 1e-5);
  }
  auto in = nn::InstanceNorm(2)(x).tolist<float>();
  EXPECT_NEAR(in[0] + in[1] + in[2], 0.0, 1e-5);
  auto rms = nn::RMSNorm(3)(x).tolist<float>();
  double ms = (1 + 4 + 16) / 3.0;
  EXPECT_NEAR(rms[2], 4 / std::sqrt(ms + 1e-6), 1e-5);
  EXPECT_EQ(nn::LayerNorm2d(2)(Tensor::ones({1, 2, 3, 3})).shape(), (Shape{1, 2, 3, 3}));
}

TEST(Layers, EmbeddingAndLSTMCell) {
  nn::Embedding e(5, 3);
  auto w = e.weight.tolist<float>();
  auto out = e(Tensor({4, 0, 9})).tolist<float>();  // 9 is out of range: zeros, as the reference
  for (int j = 0; j < 3; j++) {
    EXPECT_EQ(out[j], w[4 * 3 + j]);
    EXPECT_EQ(out[3 + j], w[j]);
    EXPECT_EQ(out[6 + j], 0.0f);
  }
  nn::LSTMCell cell(2, 3);
  Tensor x = Tensor(std::vector<float>{0.5f, -1.0f}, {1, 2});
  auto [h, c] = cell(x);
  // with zero state and zero biases: c = sigmoid(i) * tanh(g), h = sigmoid(o) * tanh(c)
  auto wih = cell.weight_ih.tolist<float>();
  auto gate = [&](int k, int j) { return 0.5 * wih[(k * 3 + j) * 2] - 1.0 * wih[(k * 3 + j) * 2 + 1]; };
  auto sig = [](double z) { return 1 / (1 + std::exp(-z)); };
  auto hv = h.tolist<float>(), cv = c.tolist<float>();
  for (int j = 0; j < 3; j++) {
    double cc = sig(gate(0, j)) * std::tanh(gate(2, j));
    EXPECT_NEAR(cv[j], cc, 1e-5);
    EXPECT_NEAR(hv[j], sig(gate(3, j)) * std::tanh(cc), 1e-5);
  }
  auto [h2, c2] = cell(x, std::pair{h, c});
  EXPECT_EQ(h2.shape(), (Shape{1, 3}));
}

TEST(Layers, BadInput) {
  EXPECT_THROW(nn::Conv2d(3, 4, 3, {.groups = 2}), Error);
  EXPECT_THROW(nn::Conv2d(2, 2, 3, {.stride = {2}, .padding_same = true}), ValueError);  // as the reference
  EXPECT_THROW(nn::LayerNorm(4)(Tensor::ones({2, 3})), Error);
  EXPECT_THROW(nn::GroupNorm(2, 4)(Tensor::ones({1, 3, 2})), Error);
  nn::Conv2d c(3, 4, 3);
  EXPECT_THROW(c(Tensor::ones({1, 2, 5, 5})), Error);  // channels don't match the weight
}
