// Bad input raises the kind of tg::Error tinygrad raises for the same mistake (IndexError for a dim out of range,
// ValueError for a bad size, AssertionError where the reference asserts ...): the Python module raises that
// Python exception, and C++ callers can catch one kind or tg::Error for all.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "error_kind.h"
#include "tg/tensor/tensor.h"

using namespace tg;
using tg::test::kind_name;

namespace {

struct Case {
  const char* what;
  std::function<void()> f;
  ErrorKind kind;
};

}  // namespace

TEST(ErrorKinds, AsTinygradRaisesThem) {
  Tensor x = Tensor::ones({3, 4}), s = Tensor::full({}, 3.14);
  const std::vector<Case> cases{
      {"sum over an axis out of range", [&] { x.sum(5); }, ErrorKind::Index},
      {"cumsum of a 0-d tensor along axis 1", [&] { s.cumsum(1); }, ErrorKind::Index},
      {"cat of two 0-d tensors", [&] { s.cat({s}); }, ErrorKind::Index},
      {"cat of mismatched shapes",
       [&] {
         x.cat({Tensor::ones({2, 5})});
       },
       ErrorKind::Assertion},
      {"stack at a dim out of range",
       [&] {
         Tensor::stack({x, x}, 4);
       },
       ErrorKind::Index},
      {"squeeze of dim 50", [&] { x.squeeze(50); }, ErrorKind::Index},
      {"unfold along dim 2 of a 2-d tensor", [&] { x.unfold(2, 2, 1); }, ErrorKind::Index},
      {"unfold wider than the dim", [&] { x.unfold(0, 9, 1); }, ErrorKind::Runtime},
      {"reshape to another size",
       [&] {
         x.reshape({5, 2});
       },
       ErrorKind::Value},
      {"reshape with two -1s",
       [&] {
         x.reshape({-1, -1});
       },
       ErrorKind::Runtime},
      {"permute that isn't a permutation",
       [&] {
         x.permute({0, 0});
       },
       ErrorKind::Runtime},
      {"broadcast of (3, 4) with (2, 4)",
       [&] {
         x + Tensor::ones({2, 4});
       },
       ErrorKind::Value},
      {"full with a negative dim",
       [] {
         Tensor::full({2, -3}, 4);
       },
       ErrorKind::Value},
      {"eye with negative n", [] { Tensor::eye(-3, 3); }, ErrorKind::Value},
      {"rand with a negative dim",
       [] {
         Tensor::rand({-3, 3});
       },
       ErrorKind::Value},
      {"linspace with -1 steps", [] { Tensor::linspace(1, 2, -1); }, ErrorKind::Value},
      {"randint of a float dtype", [] { Tensor::randint({2}, 0, 10, {.dtype = dtypes::float32}); }, ErrorKind::Type},
      {"repeat with too few counts", [&] { x.repeat({2}); }, ErrorKind::Value},
      {"circular pad with a negative pad",
       [&] {
         x.pad({{1, -2}, {0, 0}}, "circular");
       },
       ErrorKind::NotImplemented},
      {"circular pad wrapping twice",
       [&] {
         x.pad({{4, 0}, {0, 0}}, "circular");
       },
       ErrorKind::Value},
      {"pad mode 'typo'",
       [&] {
         x.pad({{1, 0}, {0, 0}}, "typo");
       },
       ErrorKind::NotImplemented},
      {"lshift of a signed int", [] { Tensor::ones({2}, {.dtype = dtypes::int32}).lshift(1); }, ErrorKind::Assertion},
      {"item of 12 elements", [&] { x.item<float>(); }, ErrorKind::Assertion},
      {"topk of more than the dim", [&] { x.topk(5); }, ErrorKind::Value},
      {"loss reduction 'typo'", [&] { x.sigmoid().binary_crossentropy(x, "typo"); }, ErrorKind::Value},
      {"einsum with three operands for two",
       [&] {
         Tensor::einsum("ij,jk->ik", {x, x.T(), x});
       },
       ErrorKind::Assertion},
      {"einsum letter of two sizes",
       [&] {
         Tensor::einsum("ij,ij->i", {x, Tensor::ones({3, 5})});
       },
       ErrorKind::Assertion},
  };
  for (const Case& c : cases) {
    try {
      c.f();
      ADD_FAILURE() << c.what << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(kind_name(e.kind), std::string(kind_name(c.kind))) << c.what << ": " << e.what();
    }
  }
  // the subclasses carry the kind, so C++ callers can catch one of them
  EXPECT_THROW(x.sum(5), IndexError);
  EXPECT_THROW(x.reshape({5, 2}), ValueError);
  EXPECT_THROW(s.cat({s}), Error);
}
