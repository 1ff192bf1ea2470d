#include "tg/runtime/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "tg/helpers/helpers.h"

namespace tg {

int cpu_threads() {
  static const int online = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  int64_t n = getenv("CPU_THREADS", online);
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

class Pool {
 public:
  void run(int n, const std::function<void(int)>& fn) {
    std::lock_guard dispatch(dispatch_mu_);
    grow(n - 1);
    {
      std::lock_guard lock(mu_);
      job_ = &fn;
      job_n_ = n;
      pending_.store(n - 1);
      gen_.fetch_add(1);
    }
    cv_work_.notify_all();
    in_parallel_for = true;
    fn(0);
    in_parallel_for = false;
    if (!spin_until([&] { return pending_.load() == 0; })) {
      std::unique_lock lock(mu_);
      cv_done_.wait(lock, [&] { return pending_.load() == 0; });
    }
    std::lock_guard lock(mu_);
    job_ = nullptr;
  }

 private:
  void grow(int workers) {
    while (static_cast<int>(threads_.size()) < workers) {
      int id = static_cast<int>(threads_.size()) + 1;
      uint64_t seen = gen_.load();  // before this job's bump: the new worker must not skip it
      threads_.emplace_back([this, id, seen] { worker(id, seen); });
      threads_.back().detach();  // the pool lives as long as the process
    }
  }

  void worker(int id, uint64_t seen) {
    in_parallel_for = true;
    for (;;) {
      spin_until([&] { return gen_.load() != seen; });
      const std::function<void(int)>* job;
      int n;
      {
        std::unique_lock lock(mu_);
        cv_work_.wait(lock, [&] { return gen_.load() != seen; });
        seen = gen_.load();
        job = job_, n = job_n_;
      }
      if (job == nullptr || id >= n) continue;
      (*job)(id);
      if (pending_.fetch_sub(1) == 1) {
        std::lock_guard lock(mu_);
        cv_done_.notify_one();
      }
    }
  }

  std::mutex dispatch_mu_;  // one job at a time
  std::mutex mu_;           // guards job_, job_n_ and the waits
  std::condition_variable cv_work_, cv_done_;
  std::atomic<uint64_t> gen_{0};  // bumped for each job
  std::atomic<int> pending_{0};   // workers of the current job not done yet
  const std::function<void(int)>* job_ = nullptr;
  int job_n_ = 0;
  std::vector<std::thread> threads_;
};

// The pool of this process. A forked child has none of its parent's threads: it starts a pool of its own (the
// parent's object is kept, unused, since its mutexes may have been held at the fork).
Pool& pool() {
  static std::mutex mu;
  // never freed (and so never destroyed at exit): detached workers use them until the process ends
  static auto* pools = new std::vector<Pool*>();
  static pid_t owner = 0;
  std::lock_guard lock(mu);
  if (pools->empty() || owner != ::getpid()) {
    pools->push_back(new Pool());
    owner = ::getpid();
  }
  return *pools->back();
}

}  // namespace

void parallel_each(size_t n, int threads, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  parallel_for(static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), n)), [&](int) {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  });
}

void parallel_for(int n, const std::function<void(int)>& fn) {
  if (n <= 1 || in_parallel_for) {
    for (int i = 0; i < n; i++) fn(i);
    return;
  }
  pool().run(n, fn);
}

}  // namespace tg
