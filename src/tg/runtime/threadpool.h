#pragma once
// runtime: the CPU device's threads. A CPU kernel whose outermost loop is a global (non-reduce) axis is compiled with
// two extra parameters, (core, ncores), and runs only its share of that loop; parallel_for calls it once per core,
// one call on each of the pool's threads, the caller running core 0. Each output element is computed by exactly one
// call, in the same order of operations as the serial kernel, so results are bit-identical for any thread count.
#include <functional>

namespace tg {

// CPU_THREADS, else the number of CPUs this process may run on (sched_getaffinity), at least 1
int cpu_threads();

// fn(0) ... fn(n-1), concurrently: fn(0) on the calling thread, the rest on the pool's threads (started on first use,
// grown to n-1). Returns when all are done. n <= 1 runs fn(0) inline. fn must not throw. One parallel_for runs at a
// time (callers from several threads take turns); a call from inside fn runs serially.
void parallel_for(int n, const std::function<void(int)>& fn);
// fn(0) ... fn(n-1), each once, on up to `threads` threads (parallel_for's) taking the next index as they finish: for
// work items of uneven cost (compiling kernels). fn must not throw.
void parallel_each(size_t n, int threads, const std::function<void(size_t)>& fn);

}  // namespace tg
