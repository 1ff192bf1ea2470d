#include "tg/runtime/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"

namespace tg {

int cpu_threads() {
  static const int online = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  int64_t n = CPU_THREADS.is_set() ? CPU_THREADS.value() : online;
  TG_CHECK(n >= 1 && n <= 1024, "CPU_THREADS=", n, " must be between 1 and 1024");
  return static_cast<int>(n);
}

namespace {

// A worker that finds no new job spins this long before it sleeps, and so does a caller waiting for its workers:
// kernels come back to back, and waking a sleeping thread costs more than a short kernel. Short, since the cores
// may be shared with other processes.
constexpr auto kSpin = std::chrono::microseconds(100);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// spins until done() or kSpin has passed; true if done()
template <class F>
bool spin_until(F&& done) {
  auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 32; i++) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() > deadline) return done();
  }
}

thread_local bool in_parallel_for = false;

// The shares of a job: thread t owns the indices [lo, hi) of its slot, runs them from the front, and one that has run
// out of its own takes indices from the back of the others'. (lo, hi) live in one 64-bit word, so taking an index is
// one compare-and-swap and an index is taken once. A slot to a cache line: the owners don't share lines.
struct alignas(64) Share {
  std::atomic<uint64_t> range{0};
  static uint64_t pack(uint32_t lo, uint32_t hi) { return uint64_t(lo) << 32 | hi; }
  // the front index (the owner's), or -1 when empty
  int take_front() {
    for (uint64_t v = range.load();;) {
      auto lo = uint32_t(v >> 32), hi = uint32_t(v);
      if (lo >= hi) return -1;
      if (range.compare_exchange_weak(v, pack(lo + 1, hi))) return static_cast<int>(lo);
    }
  }
  // the back index (a thief's), or -1 when empty
  int take_back() {
    for (uint64_t v = range.load();;) {
      auto lo = uint32_t(v >> 32), hi = uint32_t(v);
      if (lo >= hi) return -1;
      if (range.compare_exchange_weak(v, pack(lo, hi - 1))) return static_cast<int>(hi - 1);
    }
  }
};

// Dispatch takes no lock while the threads are awake: a lock the caller and a worker both took for each job (to
// publish it, to join it, to close it) had them meet on it now and then, and a thread that loses a race for a mutex
// sleeps in the kernel: in that lockstep every job cost two context switches (a parallel_for of two trivial shares
// 0.7 us, or 9-18 us for whole runs of them, on this 2-core VM). A job is published seqlock-style: gen_ odd while
// the caller writes it (after the workers still inside the last one have left), even once it is out. A worker that
// sees a new even gen_ joins (active_), checks gen_ is still that one, and only then reads the job, which stays put
// until it leaves. A job whose indices are all taken runs nothing, so a worker that joins late does no harm. The
// mutex and the condition variables are for sleeping: a worker that spun kSpin without a job, and a caller whose
// workers are still running after kSpin.
class Pool {
 public:
  void run(int n, int threads, const std::function<void(int)>& fn) {
    std::lock_guard dispatch(dispatch_mu_);
    gen_.fetch_add(1);                        // odd: the job is being written
    while (active_.load() != 0) cpu_relax();  // the workers still in the last one (on its empty shares)
    grow(threads - 1);
    for (int t = 0; t < threads; t++)
      shares_[static_cast<size_t>(t)].range.store(Share::pack(static_cast<uint32_t>(int64_t(n) * t / threads),
                                                              static_cast<uint32_t>(int64_t(n) * (t + 1) / threads)));
    job_ = &fn;
    job_threads_ = threads;
    job_n_ = n;
    done_.store(0);
    gen_.fetch_add(1);  // even: out
    if (sleepers_.load() != 0) {
      std::lock_guard lock(mu_);
      cv_work_.notify_all();
    }
    in_parallel_for = true;
    work(0, n, threads, &fn);
    in_parallel_for = false;
    // what is left is running on workers that are awake
    if (!spin_until([&] { return done_.load() == n; })) {
      std::unique_lock lock(mu_);
      caller_sleeps_.store(true);
      cv_done_.wait(lock, [&] { return done_.load() == n; });
      caller_sleeps_.store(false);
    }
    while (active_.load() != 0) cpu_relax();  // ones that joined and found nothing left are leaving
  }

 private:
  // (fn: a finished job's may be gone, and is called only for an index taken)
  void work(int t, int n, int threads, const std::function<void(int)>* fn) {
    for (;;) {
      int i = shares_[static_cast<size_t>(t)].take_front();
      for (int k = 1; i < 0 && k < threads; k++) i = shares_[static_cast<size_t>((t + k) % threads)].take_back();
      if (i < 0) return;
      (*fn)(i);
      if (done_.fetch_add(1) + 1 == n && caller_sleeps_.load()) {
        std::lock_guard lock(mu_);
        cv_done_.notify_one();
      }
    }
  }

  void grow(int workers) {
    if (shares_.size() < static_cast<size_t>(workers) + 1)
      shares_ = std::vector<Share>(static_cast<size_t>(workers) + 1);
    while (static_cast<int>(threads_.size()) < workers) {
      int id = static_cast<int>(threads_.size()) + 1;
      uint64_t seen = gen_.load();  // odd, before this job is out: the new worker must not skip it
      threads_.emplace_back([this, id, seen] { worker(id, seen); });
    }
  }

 public:
  // at exit (stop_pool): the workers finish the job they are in, leave and are joined, so that the process ends with
  // its one thread (LeakSanitizer's exit check stops every thread, and crashed now and then on the workers' waits:
  // ~15% of the ASan runs of a two-device test)
  void stop() {
    {
      std::lock_guard lock(mu_);
      quit_.store(true);
      gen_.fetch_add(2);
    }
    cv_work_.notify_all();
    for (std::thread& t : threads_)
      if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
  }

 private:
  void worker(int id, uint64_t seen) {
    in_parallel_for = true;
    for (;;) {
      auto fresh = [&] {
        const uint64_t g = gen_.load();
        return g != seen && g % 2 == 0;
      };
      if (!spin_until(fresh)) {
        std::unique_lock lock(mu_);
        sleepers_.fetch_add(1);
        cv_work_.wait(lock, [&] { return fresh() || quit_.load(); });
        sleepers_.fetch_sub(1);
      }
      if (quit_.load()) return;
      const uint64_t g = gen_.load();
      if (g == seen || g % 2 != 0) continue;  // (woken for a job already being replaced: wait for that one)
      active_.fetch_add(1);
      if (gen_.load() != g) {  // a newer job is being written: leave, and join that one
        active_.fetch_sub(1);
        continue;
      }
      seen = g;
      if (id < job_threads_) work(id, job_n_, job_threads_, job_);
      active_.fetch_sub(1);
    }
  }

  std::mutex dispatch_mu_;  // one job at a time
  std::mutex mu_;           // for the sleeps
  std::condition_variable cv_work_, cv_done_;
  std::atomic<uint64_t> gen_{0};  // odd while a job is written, bumped again when it is out
  std::atomic<int> done_{0};      // indices of the current job done
  std::atomic<int> active_{0};    // workers inside a job
  std::atomic<int> sleepers_{0};  // workers asleep on cv_work_ (or about to be)
  std::atomic<bool> caller_sleeps_{false}, quit_{false};
  const std::function<void(int)>* job_ = nullptr;  // written while gen_ is odd and no worker is inside
  int job_threads_ = 0, job_n_ = 0;
  std::vector<Share> shares_;  // a slot per thread of the pool (0: the caller)
  std::vector<std::thread> threads_;
};

// The pool of this process. A forked child has none of its parent's threads: it starts a pool of its own (the
// parent's object is kept, unused, since its mutexes may have been held at the fork). Never freed (and so never
// destroyed at exit); its workers are stopped and joined at exit (stop_pool), this process's pool's alone.
std::mutex pools_mu;
std::vector<Pool*>* pools = nullptr;
pid_t pools_owner = 0;

void stop_pool() {
  Pool* p = nullptr;
  {
    std::lock_guard lock(pools_mu);
    if (pools != nullptr && !pools->empty() && pools_owner == ::getpid()) p = pools->back();
  }
  if (p != nullptr) p->stop();
}

Pool& pool() {
  std::lock_guard lock(pools_mu);
  if (pools == nullptr) {
    pools = new std::vector<Pool*>();
    std::atexit(stop_pool);  // registered after the sanitizers' exit checks, so it runs before them
  }
  if (pools->empty() || pools_owner != ::getpid()) {
    pools->push_back(new Pool());
    pools_owner = ::getpid();
  }
  return *pools->back();
}

}  // namespace

void parallel_each(size_t n, int threads, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  const Knobs knobs = current_knobs();  // the caller's Context, on every thread of the job
  parallel_for(static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), n)), [&](int) {
    KnobScope scope(knobs);
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  });
}

void parallel_for(int n, const std::function<void(int)>& fn, int threads) {
  threads = std::min(threads > 0 ? threads : n, n);
  if (threads <= 1 || in_parallel_for) {
    for (int i = 0; i < n; i++) fn(i);
    return;
  }
  pool().run(n, threads, fn);
}

}  // namespace tg
