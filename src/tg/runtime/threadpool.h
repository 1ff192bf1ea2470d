#pragma once
// runtime: the CPU device's threads. A CPU kernel whose outermost loop is a global (non-reduce) axis is compiled with
// two extra parameters, (core, ncores), and runs only its share of that loop; parallel_for calls it for a few shares
// per core, each core starting on its own ones. Each output element is computed by exactly one
// call, in the same order of operations as the serial kernel, so results are bit-identical for any thread count.
#include <functional>

namespace tg {

// CPU_THREADS, else the number of CPUs this process may run on (sched_getaffinity), at least 1
int cpu_threads();

// fn(0) ... fn(n-1), each once, on `threads` threads (default and at most n): the calling thread and threads-1 of the
// pool's (started on first use, grown as needed). Thread t owns the indices [t*n/threads, (t+1)*n/threads) and runs
// them in order; a thread that runs out takes the last index left in another's share. So a worker that wakes late
// costs only what the others could not take over, and the call returns when every index is done, without waiting for
// a worker that came too late to find one. threads <= 1 runs them inline, in order. fn must not throw. One
// parallel_for runs at a time (callers from several threads take turns); a call from inside fn runs serially.
// fn runs without the caller's Context (it is for kernels, which read no knobs): parallel_each carries it.
void parallel_for(int n, const std::function<void(int)>& fn, int threads = 0);
// fn(0) ... fn(n-1), each once, on up to `threads` threads (parallel_for's) taking the next index as they finish: for
// work items of uneven cost (compiling kernels). fn must not throw. Every fn sees the caller's knobs (its Context).
void parallel_each(size_t n, int threads, const std::function<void(size_t)>& fn);

}  // namespace tg
