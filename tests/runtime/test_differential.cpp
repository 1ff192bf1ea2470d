// Differential test of the devices: random kernels (elementwise chains, reductions, movement chains, mixed dtypes,
// integer division and modulo; on PYTHON with the locals and grouped reduces its renderer asks for) built the same
// way on every available device and compared with the CPU. Integers must agree exactly; floats within
// |a - b| <= 1e-5 + 2e-5 * |b| (the interpreter computes each float op in double before rounding it to float, the C
// compiler in float, and exp2/log2/sin come from different libraries).
// Not compared: 8- and 16-bit integer arithmetic, where C promotes to int before the op and a uop wraps at the
// dtype (tests/tensor/test_math.cpp, Lerp, shows the difference; the reference's PYTHON device has it too).
// DIFF_CASES=n runs more cases (default 60), DIFF_SEED=s starts elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

namespace tg {
namespace {

// one random program, replayed from its seed on each device: the choices depend only on the seed, never on data
class RandomKernel {
 public:
  RandomKernel(uint64_t seed, std::string device) : rng_(seed), device_(std::move(device)) {}

  // the program's output (realized) and what it did, for the failure message
  Tensor build() {
    const int ndim = pick(1, 3);
    for (int i = 0; i < ndim; i++) shape_.push_back(pick(1, 9));
    if (pick(0, 5) == 0) shape_ = {pick(1, 3), pick(200, 1100)};  // a long reduce: grouped on PYTHON
    std::vector<Tensor> f{input(dtypes::float32), input(dtypes::float32)},
        n{input(dtypes::int32), input(dtypes::int32)};
    const int steps = pick(3, 8);
    for (int s = 0; s < steps; s++) {
      const int kind = pick(0, 9);
      std::vector<Tensor>& into = kind <= 3 || kind == 7 ? f : kind <= 6 || kind == 8 ? n : pick(0, 1) ? f : n;
      std::vector<Tensor>& other = &into == &f ? n : f;
      const size_t a = pick_index(into), b = pick_index(into), o = pick_index(other);  // in this order, always
      Tensor t = kind <= 3   ? float_op(into[a], into[b], other[o])
                 : kind <= 6 ? int_op(into[a], into[b], other[o])
                 : kind <= 8 ? movement(into[a])
                             : reduce(into[a]);
      into.push_back(t);
    }
    // one output: the last float and the last int combined, so every step that is kept reaches it
    Tensor out =
        pick(0, 1) ? f.back() + n.back().cast(dtypes::float32) : n.back() + (f.back() * 8).floor().cast(dtypes::int32);
    log("out");
    return out.contiguous().realize();
  }
  const std::string& trace() const { return trace_; }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  size_t pick_index(const std::vector<Tensor>& v) {
    return static_cast<size_t>(pick(0, static_cast<int>(v.size()) - 1));
  }
  void log(const std::string& s) { trace_ += s + " "; }

  Tensor input(DType dt) {
    const int64_t n = prod(shape_);
    if (dt == dtypes::int32) {
      std::vector<int32_t> v(static_cast<size_t>(n));
      for (auto& x : v) x = pick(-50, 50);
      return Tensor(v, shape_, {.device = device_});
    }
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<float>(pick(-2000, 2000)) / 1000.0f;
    return Tensor(v, shape_, {.device = device_});
  }

  // elementwise on floats (an int operand cast in now and then); values stay within a few units
  Tensor float_op(const Tensor& a, const Tensor& b, const Tensor& i) {
    switch (pick(0, 12)) {
      case 0: return log("fadd"), a + b;
      case 1: return log("fsub"), a - b;
      case 2: return log("fmul"), (a * b).clip(ConstValue(-8.0), ConstValue(8.0));
      case 3: return log("exp"), a.clip(ConstValue(-4.0), ConstValue(4.0)).exp();
      case 4: return log("log"), (a.abs() + 1).log();
      case 5: return log("sqrt"), a.abs().sqrt();
      case 6: return log("sin"), a.sin();
      case 7: return log("sigmoid"), a.sigmoid();
      case 8: return log("relu"), a.relu();
      case 9: return log("fmax"), a.maximum(b);
      case 10: return log("where"), a.lt(b).where(a, b * 2);
      case 11: return log("recip"), (a.abs() + 0.5).reciprocal();
      default: return log("i2f"), a + i.cast(dtypes::float32) / 16;
    }
  }

  // elementwise on int32, kept within +-1000 so nothing overflows; divisors are never 0
  Tensor int_op(const Tensor& a, const Tensor& b, const Tensor& f) {
    auto bounded = [](const Tensor& t) { return t.clip(ConstValue(int64_t(-1000)), ConstValue(int64_t(1000))); };
    Tensor d = b.abs() + 1;
    switch (pick(0, 10)) {
      case 0: return log("iadd"), bounded(a + b);
      case 1: return log("isub"), bounded(a - b);
      case 2: return log("imul"), bounded(a * b);
      case 3: return log("idiv"), a.idiv(d);
      case 4: return log("idiv-"), a.idiv(-d);
      case 5: return log("mod"), a % d;
      case 6: return log("imax"), a.maximum(b);
      case 7: return log("iwhere"), (a < b).where(a, -b);
      case 8: return log("and"), a & b;
      case 9: return log("shr"), a.abs().cast(dtypes::uint32).rshift(2).cast(dtypes::int32);
      default: return log("f2i"), bounded((f * 10).floor().cast(dtypes::int32) + a);
    }
  }

  // a chain of movement ops that ends at the same shape (so the result combines with everything else)
  Tensor movement(const Tensor& t) {
    const int64_t nd = static_cast<int64_t>(shape_.size());
    switch (pick(0, 4)) {
      case 0: {
        std::vector<int64_t> axes;
        for (int64_t i = 0; i < nd; i++)
          if (pick(0, 1)) axes.push_back(i);
        return log("flip"), axes.empty() ? t : t.flip(axes);
      }
      case 1: return log("reshape"), t.reshape({-1}).reshape(shape_);
      case 2: {  // pad each dim by up to 2 on each side, then shrink back by another offset: a shifted window
        Mask pad, shrink;
        for (sint s : shape_) {
          sint lo = pick(0, 2), hi = pick(0, 2), start = pick(0, static_cast<int>(lo + hi));
          pad.push_back({lo, hi});
          shrink.push_back({start, start + s});
        }
        return log("pad+shrink"), t.pad(pad).shrink(shrink);
      }
      case 3: {  // permute and back through a contiguous copy
        std::vector<int64_t> order(static_cast<size_t>(nd)), inverse(static_cast<size_t>(nd));
        for (int64_t i = 0; i < nd; i++) order[static_cast<size_t>(i)] = i;
        std::shuffle(order.begin(), order.end(), rng_);
        for (int64_t i = 0; i < nd; i++) inverse[static_cast<size_t>(order[static_cast<size_t>(i)])] = i;
        return log("permute"), t.permute(order).contiguous().permute(inverse);
      }
      default: {  // a broadcast: expand a new axis, then reduce it away
        int k = pick(2, 4);
        Tensor e = t.unsqueeze(0).expand(cat_shape(k));
        return log("expand+sum"), dtypes::is_float(t.dtype()) ? e.sum(0) / k : e.max(0);
      }
    }
  }
  Shape cat_shape(int k) {
    Shape s{k};
    s.insert(s.end(), shape_.begin(), shape_.end());
    return s;
  }

  // a sum or max over a random axis, broadcast back to the shape
  Tensor reduce(const Tensor& t) {
    const auto axis = static_cast<int64_t>(pick(0, static_cast<int>(shape_.size()) - 1));
    const bool is_sum = pick(0, 1) == 1;
    log(cat(is_sum ? "sum" : "max", axis));
    Tensor r = is_sum ? t.sum(axis, true) : t.max(axis, true);
    if (is_sum && !dtypes::is_float(t.dtype())) r = r.clip(ConstValue(int64_t(-1000)), ConstValue(int64_t(1000)));
    if (is_sum && dtypes::is_float(t.dtype())) r = r / static_cast<double>(shape_[static_cast<size_t>(axis)]);
    return r.expand(shape_);
  }

  std::mt19937_64 rng_;
  std::string device_;
  Shape shape_;
  std::string trace_;
};

TEST(Differential, RandomKernelsAgreeOnEveryDevice) {
  std::vector<std::string> devices;
  for (const std::string& d : Device::get_available_devices())
    if (d != "CPU" && d != "NULL") devices.push_back(d);  // NULL runs nothing: there is nothing to compare
  ASSERT_FALSE(devices.empty());
  const int64_t cases = getenv("DIFF_CASES", 60), seed0 = getenv("DIFF_SEED", 1);
  int compared = 0;
  for (int64_t c = 0; c < cases; c++) {
    const auto seed = static_cast<uint64_t>(seed0 + c);
    RandomKernel cpu_prog(seed, "CPU");
    Tensor want = cpu_prog.build();
    for (const std::string& dev : devices) {
      RandomKernel prog(seed, dev);
      Tensor got = prog.build();
      ASSERT_EQ(prog.trace(), cpu_prog.trace());
      ASSERT_EQ(got.dtype(), want.dtype());
      const std::string what = cat("seed ", seed, " on ", dev, ": ", prog.trace());
      if (dtypes::is_float(want.dtype())) {
        std::vector<float> g = got.tolist<float>(), w = want.tolist<float>();
        for (size_t i = 0; i < w.size(); i++)
          ASSERT_NEAR(g[i], w[i], 1e-5 + 2e-5 * std::fabs(w[i])) << what << " at " << i;
      } else {
        EXPECT_EQ(got.tolist<int>(), want.tolist<int>()) << what;
      }
      compared++;
    }
  }
  EXPECT_EQ(compared, cases * static_cast<int64_t>(devices.size()));
}

}  // namespace
}  // namespace tg
