// BEAM search (engine/search.h): BEAM=n picks each kernel's opts by timing candidates; the kernels it picks compute
// what the loops compute, it never loses to the hand-coded opts it starts from, and it keeps its result in the disk
// cache (table "beam_search", key "<device>:<ast key>:<amt>:<hand-coded opts>")
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "kernel_asts.h"
#include "scoped_env.h"
#include "tg/codegen/heuristic.h"
#include "tg/engine/realize.h"
#include "tg/engine/search.h"
#include "tg/runtime/diskcache.h"
#include "tg/tensor/tensor.h"

using namespace tg;
using namespace tg::test;
namespace fs = std::filesystem;

namespace {

std::vector<float> pattern(int64_t n, float k) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); i++) v[i] = std::sin(static_cast<float>(i) * k);
  return v;
}

struct Beam : ::testing::Test {
  std::string dir = (fs::temp_directory_path() / cat("tg_beam_", getpid())).string();
  std::optional<ScopedEnv> xdg;
  void SetUp() override {
    Device::DEFAULT = "CPU";
    fs::remove_all(dir);
    xdg.emplace("XDG_CACHE_HOME", dir.c_str());  // a fresh disk cache: the search runs
  }
  void TearDown() override {
    xdg.reset();
    fs::remove_all(dir);
  }
};

}  // namespace

TEST_F(Beam, KernelsItPicksComputeTheSame) {
  ScopedEnv beam("BEAM", "2");
  const int64_t M = 48, K = 40, N = 56;
  std::vector<float> a = pattern(M * K, 0.37f), b = pattern(K * N, 0.11f);
  Tensor ta = Tensor(a, {M, K}), tb = Tensor(b, {K, N});
  std::vector<float> mm = ta.matmul(tb).tolist<float>(), rows = (ta * 2).sum(1).tolist<float>();
  for (int64_t i = 0; i < M; i++) {
    double rs = 0;
    for (int64_t k = 0; k < K; k++) rs += 2.0 * a[static_cast<size_t>(i * K + k)];
    EXPECT_NEAR(rows[static_cast<size_t>(i)], rs, 1e-4);
    for (int64_t j = 0; j < N; j++) {
      double ref = 0;
      for (int64_t k = 0; k < K; k++)
        ref += double(a[static_cast<size_t>(i * K + k)]) * b[static_cast<size_t>(k * N + j)];
      ASSERT_NEAR(mm[static_cast<size_t>(i * N + j)], ref, 1e-4) << i << "," << j;
    }
  }
}

TEST_F(Beam, ResultAppliesAndIsCached) {
  UOp ast = matmul(128);
  Renderer& r = *Device::get("CPU").renderer;
  Kernel best = beam_search(Kernel(ast, r), r, 2);
  std::vector<Opt> opts = best.applied_opts;
  Kernel k(ast, r);
  EXPECT_NO_THROW(k.apply_opts(opts));  // every opt of the result applies
  // the hand-coded kernel, if it won, comes back with its Lowering (a CPU tile's vector ALUs); any other without
  Kernel hand(ast, r);
  apply_hand_coded(hand);
  EXPECT_EQ(best.lowering, opts == hand.applied_opts ? hand.lowering : Lowering{});
  // the key names the hand-coded opts the search started from: when the heuristic changes, it searches again (a
  // cached CPU tile the heuristic no longer picks would render without its vector ALUs)
  const std::string key = cat("CPU:", ast.key(), ":2:", opts_repr(hand_coded_optimizations(Kernel(ast, r))));
  std::optional<std::string> cached = diskcache_get("beam_search", key);
  ASSERT_TRUE(cached.has_value());
  Kernel again_k = beam_search(Kernel(ast, r), r, 2);  // now from the cache
  EXPECT_EQ(again_k.applied_opts, opts);
  EXPECT_EQ(again_k.lowering, best.lowering);
  // a corrupt cache entry is searched again, not trusted
  diskcache_put("beam_search", key, "garbage");
  std::vector<Opt> again = beam_search(Kernel(ast, r), r, 2).applied_opts;
  EXPECT_NO_THROW(Kernel(ast, r).apply_opts(again));
}
