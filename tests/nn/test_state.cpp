// the model declaration (TG_PARAMS), get_state_dict / get_parameters / load_state_dict
#include <gtest/gtest.h>

#include "tinygrad/tinygrad.h"

using namespace tg;
namespace state = tg::nn::state;

namespace {

struct Dense {  // a layer written by hand: its own visit
  Tensor w = Tensor::ones({2, 3});
  std::optional<Tensor> b;
  void visit(nn::StateVisitor& v) {
    v("weight", w);
    v("bias", b);
  }
};

struct Block {
  Dense first, second;
  Tensor scale = Tensor::full({1}, 2.0);
  TG_PARAMS(first, second, scale)
};

struct Net {
  std::vector<Block> layers;
  std::array<Tensor, 2> pair = {Tensor::zeros({1}), Tensor::ones({1})};
  std::map<std::string, Tensor> named = {{"beta", Tensor::zeros({2})}, {"alpha", Tensor::zeros({3})}};
  std::unique_ptr<Dense> head = std::make_unique<Dense>();
  std::shared_ptr<Dense> none;  // empty: skipped
  std::optional<Dense> maybe;   // empty: skipped
  int not_a_tensor = 3;         // not listed
  TG_PARAMS(layers,
            pair,  // names may be spread over lines
            named, head, none, maybe)
};

std::vector<float> vals(const Tensor& t) { return t.cast(dtypes::float32).tolist<float>(); }

}  // namespace

TEST(State, DottedNamesInDeclarationOrder) {
  Net net;
  net.layers.resize(2);
  net.layers[1].first.b = Tensor::zeros({2});
  auto sd = state::get_state_dict(net);
  std::vector<std::string> want = {"layers.0.first.weight",
                                   "layers.0.second.weight",
                                   "layers.0.scale",
                                   "layers.1.first.weight",
                                   "layers.1.first.bias",
                                   "layers.1.second.weight",
                                   "layers.1.scale",
                                   "pair.0",
                                   "pair.1",
                                   "named.alpha",
                                   "named.beta",
                                   "head.weight"};
  EXPECT_EQ(sd.keys(), want);
  // handles: the state dict's tensors are the model's
  EXPECT_EQ(sd.at("head.weight").uop(), net.head->w.uop());
  EXPECT_EQ(state::get_parameters(net).size(), want.size());
  EXPECT_EQ(state::get_state_dict(net.layers[0], "block.").keys(),
            (std::vector<std::string>{"block.first.weight", "block.second.weight", "block.scale"}));
  Tensor bare = Tensor::ones({1});
  EXPECT_EQ(state::get_state_dict(bare, "x.").keys(), std::vector<std::string>{"x"});  // as tinygrad: strip('.')
}

TEST(State, StateDictIsOrderedAndChecked) {
  nn::StateDict sd{{"b", Tensor::ones({1})}, {"a", Tensor::zeros({2})}};
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"b", "a"}));
  sd.insert_or_assign("b", Tensor::zeros({3}));
  EXPECT_EQ(sd.at("b").shape(), Shape{3});
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"b", "a"}));
  EXPECT_TRUE(sd.erase("b"));
  EXPECT_FALSE(sd.erase("b"));
  EXPECT_EQ(sd.keys(), std::vector<std::string>{"a"});
  EXPECT_EQ(sd.at("a").shape(), Shape{2});
  EXPECT_THROW(sd.at("nope"), Error);
}

TEST(State, LoadStateDict) {
  Block src, dst;
  src.first.w = Tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  src.second.w = Tensor::full({2, 3}, 7.0);
  src.scale = Tensor::full({1}, 0.5);
  auto sd = state::get_state_dict(src);
  std::vector<Tensor> loaded = state::load_state_dict(dst, sd);
  EXPECT_EQ(loaded.size(), 3u);
  EXPECT_EQ(vals(dst.first.w), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(vals(dst.second.w), std::vector<float>(6, 7));
  EXPECT_EQ(vals(dst.scale), std::vector<float>{0.5});
  // realized: the loaded tensors are buffers now
  EXPECT_EQ(uop_base(dst.first.w.uop()).op(), Ops::BUFFER);
  // consume empties the state dict of what was loaded
  Block other;
  state::load_state_dict(other, sd, {.consume = true});
  EXPECT_TRUE(sd.empty());
}

TEST(State, LoadStateDictErrorsNameTheKeys) {
  Block dst;
  auto message = [&](nn::StateDict sd, state::LoadOptions o = {}) {
    try {
      state::load_state_dict(dst, sd, o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto good = [] {
    Block b;
    return state::get_state_dict(b);
  };
  auto has = [](const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; };
  // missing key
  nn::StateDict sd = good();
  sd.erase("scale");
  std::string m = message(sd);
  EXPECT_TRUE(has(m, "missing") && has(m, "'scale'")) << m;
  // unexpected key
  sd = good();
  sd.insert_or_assign("extra.weight", Tensor::ones({1}));
  m = message(sd);
  EXPECT_TRUE(has(m, "unexpected") && has(m, "'extra.weight'")) << m;
  // both
  sd.erase("first.weight");
  m = message(sd);
  EXPECT_TRUE(has(m, "'first.weight'") && has(m, "'extra.weight'")) << m;
  // not strict: missing keys are kept as they are, unexpected ones ignored
  EXPECT_EQ(message(sd, {.strict = false}), "no error");
  // shape mismatch
  sd = good();
  sd.insert_or_assign("first.weight", Tensor::ones({3, 2}));
  m = message(sd);
  EXPECT_TRUE(has(m, "shape") && has(m, "'first.weight'") && has(m, "(2, 3)") && has(m, "(3, 2)")) << m;
  EXPECT_THROW(state::load_state_dict(dst, sd), ValueError);  // the reference's ValueError
  // dtype mismatch
  sd = good();
  sd.insert_or_assign("scale", Tensor(std::vector<int>{1}, {1}));
  m = message(sd);
  EXPECT_TRUE(has(m, "dtype") && has(m, "'scale'") && has(m, "dtypes.int")) << m;
  // same_dtype = false (the Python module's load_state_dict): the model's tensor takes the state dict's dtype
  Block retyped;
  state::load_state_dict(retyped, sd, {.same_dtype = false});
  EXPECT_EQ(retyped.scale.dtype(), dtypes::int32);
  EXPECT_EQ(vals(retyped.scale), std::vector<float>{1});
  // a failed load changes nothing
  Block fresh;
  sd = good();
  sd.insert_or_assign("first.weight", Tensor::full({2, 3}, 9.0));
  sd.insert_or_assign("scale", Tensor::ones({2}));
  EXPECT_THROW(state::load_state_dict(fresh, sd), Error);
  EXPECT_EQ(vals(fresh.first.w), std::vector<float>(6, 1));
}
