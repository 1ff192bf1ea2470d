// The one table of knobs (src/tg/helpers/knobs.h): every env var the engine reads, read once; Context overrides a
// knob for a scope, on this thread and in the work it hands to the compile threads, never writing the environment.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "tg/engine/realize.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/device.h"
#include "tg/runtime/threadpool.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {
// the table's default of an int knob (the value when the environment leaves it unset)
int64_t table_default(std::string_view name) { return std::stoll(std::string(find_knob(name)->default_text)); }
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Knobs, TheTableIsWellFormed) {
  std::set<std::string_view> names;
  for (const KnobInfo& k : knob_table()) {
    EXPECT_TRUE(names.insert(k.name).second) << "declared twice: " << k.name;
    EXPECT_FALSE(k.meaning.empty()) << k.name;
    EXPECT_EQ(k.meaning.find('\n'), std::string_view::npos) << k.name;
    if (k.kind == KnobKind::Int) {
      EXPECT_NO_THROW(knob_int(k.name)) << k.name;
    }
  }
  EXPECT_EQ(find_knob("NOT_A_KNOB"), nullptr);
  // a `<NAME>=1` can choose any device the registry knows
  for (const std::string& d : Device::known_devices())
    if (d != "DISK" && d != "NPY") {
      EXPECT_NE(find_knob(d), nullptr) << d;
    }
  EXPECT_TRUE(find_knob("BEAM")->flags & knob_flag::CODE);
  EXPECT_TRUE(find_knob("FUSE_ARANGE")->flags & knob_flag::KERNELIZE);
  EXPECT_TRUE(find_knob("VIZ")->flags & knob_flag::STARTUP);
  EXPECT_EQ(find_knob("DEBUG")->flags, 0);
}

TEST(Knobs, ContextOverridesNestsAndRestores) {
  if (CPU_KSPLIT.is_set()) GTEST_SKIP() << "CPU_KSPLIT is set in the environment";
  EXPECT_EQ(CPU_KSPLIT, table_default("CPU_KSPLIT"));
  {
    Context a{{"CPU_KSPLIT", 7}, {"CC", "gcc -O1"}};
    EXPECT_EQ(CPU_KSPLIT, 7);
    EXPECT_TRUE(CPU_KSPLIT.is_set());
    EXPECT_EQ(CC.value(), "gcc -O1");
    EXPECT_EQ(knob_text("CPU_KSPLIT"), "7");
    {
      Context b{{"CPU_KSPLIT", nullptr}};  // the default back, as if unset
      EXPECT_EQ(CPU_KSPLIT, table_default("CPU_KSPLIT"));
      EXPECT_FALSE(CPU_KSPLIT.is_set());
      EXPECT_EQ(CC.value(), "gcc -O1");  // what b doesn't name stays a's
    }
    EXPECT_EQ(CPU_KSPLIT, 7);
  }
  EXPECT_EQ(CPU_KSPLIT, table_default("CPU_KSPLIT"));
  EXPECT_FALSE(CPU_KSPLIT.is_set());
}

TEST(Knobs, ContextNeverWritesTheEnvironment) {
  const char* before = std::getenv("CPU_KSPLIT");
  {
    Context c{{"CPU_KSPLIT", 3}};
    EXPECT_EQ(std::getenv("CPU_KSPLIT"), before);
  }
  EXPECT_EQ(std::getenv("CPU_KSPLIT"), before);
}

TEST(Knobs, BadSettingsAreValueErrors) {
  const int64_t before = CPU_KSPLIT;
  EXPECT_NE(error_of([] { Context c{{"NOT_A_KNOB", 1}}; }).find("no knob named NOT_A_KNOB"), std::string::npos);
  EXPECT_NE(error_of([] { Context c{{"VIZ", 1}}; }).find("VIZ is read once"), std::string::npos);
  EXPECT_NE(error_of([] {
              Context c{{"CPU_KSPLIT", 5}, {"BEAM", "two"}};
            }).find("BEAM=two is not an integer"),
            std::string::npos);
  EXPECT_EQ(CPU_KSPLIT, before);  // a Context that raised changed nothing
  EXPECT_THROW(knob_int("CC"), TypeError);
  EXPECT_THROW(set_knob("PROFILE", 1), ValueError);
}

TEST(Knobs, WorkHandedToThePoolSeesTheContext) {
  std::vector<int64_t> seen(16, -1);
  {
    Context c{{"CPU_KSPLIT", 5}};
    parallel_each(seen.size(), 2, [&](size_t i) { seen[i] = CPU_KSPLIT; });
  }
  for (int64_t v : seen) EXPECT_EQ(v, 5);
  // a thread of its own starts from the process's knobs
  int64_t other = -1;
  {
    Context c{{"CPU_KSPLIT", 5}};
    std::thread t([&] { other = CPU_KSPLIT; });
    t.join();
  }
  EXPECT_EQ(other, CPU_KSPLIT.value());
}

TEST(Knobs, CacheKeysFollowTheFlags) {
  const std::string code = knobs_key(knob_flag::CODE), kern = knobs_key(knob_flag::KERNELIZE);
  {
    Context c{{"DEBUG", 3}, {"JIT", 0}};  // neither changes a kernel
    EXPECT_EQ(knobs_key(knob_flag::CODE), code);
    EXPECT_EQ(knobs_key(knob_flag::KERNELIZE), kern);
  }
  {
    Context c{{"NOOPT", NOOPT ? 0 : 1}};
    EXPECT_NE(knobs_key(knob_flag::CODE), code);
    EXPECT_EQ(knobs_key(knob_flag::KERNELIZE), kern);
  }
  {
    Context c{{"FUSE_ARANGE", FUSE_ARANGE ? 0 : 1}};
    EXPECT_EQ(knobs_key(knob_flag::CODE), code);
    EXPECT_NE(knobs_key(knob_flag::KERNELIZE), kern);
  }
}

// the compile threads of a realize render with the Context's knobs: EXPAND_SSA writes one SSA value per line, and a
// kernel compiled on the pool under it must not come out as the plain rendering
TEST(Knobs, CompileThreadsSeeTheContext) {
  if (Device::DEFAULT != "CPU") GTEST_SKIP() << "renders C";
  auto sources = [](int64_t expand_ssa) {
    Context c{{"EXPAND_SSA", expand_ssa}, {"COMPILE_THREADS", 2}, {"DEBUG", 0}};
    Tensor a = Tensor::arange(64).cast(dtypes::float32).contiguous().realize();
    Tensor b = ((a * 3 + 1) * (a - 2)).contiguous(), d = (b.exp2() + a).sum(0);
    auto [sched, vars] = Tensor::schedule_with_vars({b, d});
    compile_schedule(sched);  // on 2 threads
    std::vector<std::string> out;
    for (const ScheduleItem& si : sched)
      if (si.ast.op() == Ops::SINK) out.push_back(get_runner(si.bufs[0].device(), si.ast)->p.src);
    return out;
  };
  std::vector<std::string> plain = sources(0), ssa = sources(1);
  ASSERT_EQ(plain.size(), ssa.size());
  ASSERT_GE(plain.size(), 2u);
  for (size_t i = 0; i < plain.size(); i++) EXPECT_NE(plain[i], ssa[i]) << plain[i];
}
