// UOp lifetime: interning across threads, nodes leave the table with their last handle, and no graph walk
// recurses on depth (deep chains are built, walked, rewritten and freed on a small stack)
#include <gtest/gtest.h>
#include <pthread.h>
#include <tinygrad/tinygrad.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <latch>
#include <thread>

using namespace tg;

namespace {

// a graph of about 3*n nodes that every caller builds identically: consts, a variable, a chain of MUL/ADD/MOD
std::vector<UOp> build_graph(int n, int salt = 0) {
  std::vector<UOp> nodes;
  UOp v = UOp::variable("v", int64_t(0), int64_t(1000));
  UOp acc = v;
  for (int i = 0; i < n; i++) {
    UOp c = UOp::const_(dtypes::int32, (i + salt) % 97);
    acc = (acc * c + v) % 1009;
    nodes.push_back(acc);
  }
  return nodes;
}

// runs fn on a thread with a small stack: recursion on graph depth would overflow it
void run_with_stack(size_t stack_bytes, const std::function<void()>& fn) {
  struct Job {
    const std::function<void()>* fn;
    std::exception_ptr err;
  } job{&fn, nullptr};
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack_bytes), 0);
  pthread_t th;
  auto body = [](void* p) -> void* {
    auto* j = static_cast<Job*>(p);
    try {
      (*j->fn)();
    } catch (...) {
      j->err = std::current_exception();
    }
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&th, &attr, body, &job), 0);
  pthread_join(th, nullptr);
  pthread_attr_destroy(&attr);
  if (job.err) std::rethrow_exception(job.err);
}

constexpr size_t kSmallStack = 256 * 1024;  // 1/32 of the default 8 MB

UOp chain(int depth, int64_t step) {  // ((v+step)+step)+... depth ADDs deep
  UOp acc = UOp::variable("v", int64_t(0), int64_t(10));
  UOp c = UOp::const_(dtypes::int32, step);
  for (int i = 0; i < depth; i++) acc = UOp::make(Ops::ADD, dtypes::int32, {acc, c});
  return acc;
}

}  // namespace

// *** (a) threads ***

TEST(UOpLifetime, ThreadsInternToTheSameNodes) {
  const size_t before = uop_intern_count();
  {
    constexpr int kN = 3000;
    std::vector<UOp> a, b;
    std::latch start(2);
    std::thread t1([&] { start.arrive_and_wait(), a = build_graph(kN); });
    std::thread t2([&] { start.arrive_and_wait(), b = build_graph(kN); });
    t1.join(), t2.join();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); i++) ASSERT_EQ(a[i].get(), b[i].get()) << "node " << i;
    EXPECT_EQ(a, build_graph(kN));  // and the same as one built later on this thread
  }
  EXPECT_EQ(uop_intern_count(), before);
}

TEST(UOpLifetime, ThreadsBuildAndDropOverlappingGraphs) {
  // nodes die on one thread while another looks them up: every lookup gets a live node or builds a fresh one
  const size_t before = uop_intern_count();
  auto t0 = std::chrono::steady_clock::now();
  constexpr int kThreads = 4, kRounds = 30;
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < kThreads; t++)
    threads.emplace_back([t, &mismatches] {
      for (int r = 0; r < kRounds; r++) {
        std::vector<UOp> g = build_graph(200, (r + t) % 3);  // salts overlap between threads and rounds
        std::vector<UOp> again = build_graph(200, (r + t) % 3);
        if (g != again) mismatches++;
        if (r % 2) g.clear();  // drop in different orders
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(uop_intern_count(), before);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
}

// *** (b) a million nodes come and go ***

TEST(UOpLifetime, MillionNodesLeaveTheTable) {
  const size_t before = uop_intern_count();
  {
    UOp g = chain(1'000'000, 1);
    EXPECT_GE(uop_intern_count(), before + 1'000'000);
    UOp again = chain(10, 1);  // a prefix of the chain: already interned
    EXPECT_LT(uop_intern_count(), before + 1'000'003);
  }  // the last handle to the root frees the whole chain, iteratively
  EXPECT_EQ(uop_intern_count(), before);
}

TEST(UOpLifetime, SharedNodesLiveWhileAnyHandleDoes) {
  const size_t before = uop_intern_count();
  UOp keep;
  {
    UOp a = UOp::variable("a", int64_t(0), int64_t(3));
    UOp s = a * 7;
    keep = s + 1;
  }
  EXPECT_EQ(uop_intern_count(), before + 5);  // a, 7, a*7, 1, a*7+1: all alive through the root
  EXPECT_EQ(keep.src(0).src(0).arg<VarArg>().name, "a");
  keep = UOp();
  EXPECT_EQ(uop_intern_count(), before);
}

TEST(UOpLifetime, LiveParentsAreTheNodesAliveNow) {  // tinygrad's UOp.children
  UOp a = UOp::variable("live_parents_a", int64_t(0), int64_t(10));
  EXPECT_TRUE(uop_live_parents(a).empty());
  UOp b = a * a, c = a + 2;
  std::vector<UOp> parents = uop_live_parents(a);
  EXPECT_EQ(parents.size(), 2u);
  EXPECT_TRUE(std::find(parents.begin(), parents.end(), b) != parents.end());
  parents.clear();
  b = UOp();
  EXPECT_EQ(uop_live_parents(a), std::vector<UOp>{c});
}

// *** (c) a 200,000-deep chain on a 256 KB stack ***

TEST(UOpLifetime, DeepChainNoRecursion) {
  const size_t before = uop_intern_count();
  run_with_stack(kSmallStack, [] {
    constexpr int kDepth = 200'000;
    UOp g = chain(kDepth, 1);
    std::vector<UOp> order = g.toposort();
    ASSERT_EQ(order.size(), static_cast<size_t>(kDepth + 2));  // v, 1 and the ADDs
    EXPECT_EQ(order.back(), g);
    EXPECT_EQ(as_int(g.vmax()), 10 + kDepth);
    // every x+1 becomes x+2, top down and bottom up
    using namespace pat;
    PatternMatcher<UOp> pm{
        {x + c0, [](M m) -> UOp { return as_int(m[c0].const_arg()) == 1 ? m[x] + m[c0].const_like(2) : UOp{}; }}};
    UOp want = chain(kDepth, 2);
    EXPECT_EQ(graph_rewrite(g, pm), want);
    EXPECT_EQ(graph_rewrite(g, pm, {.bottom_up = true}), want);
    // printing: the text grows with depth squared (indentation), so the printed chain is shallower
    std::string text = chain(2000, 1).repr();
    EXPECT_EQ(text.rfind("UOp(Ops.ADD", 0), 0u);
    EXPECT_NE(text.find("UOp(Ops.DEFINE_VAR"), std::string::npos);
  });
  EXPECT_EQ(uop_intern_count(), before);
}

TEST(UOpLifetime, WideGraphReprAndVerify) {
  // a SINK of 50,000 sources: repr labels are global and the spec walks them all
  std::vector<UOp> srcs;
  for (int i = 0; i < 50'000; i++) srcs.push_back(UOp::const_(dtypes::int32, i) + 1);
  UOp s = UOp::sink(srcs);
  std::string text = s.repr();
  EXPECT_NE(text.find("x2:=UOp(Ops.CONST, dtypes.int, arg=1, src=())"), std::string::npos);
  EXPECT_NO_THROW(type_verify(s));
}
