// The MPI world and the allreduce across ranks (distributed.h). The allreduce is a Runner of its own: an ExecItem
// over (output, input) Buffers, run as the schedule runs its items, so TinyJit captures and replays it.
#include "tg/distributed/distributed.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include "tg/engine/realize.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/buffers.h"
#include "tg/shape/uop_multi.h"
#include "tg/shape/uop_shape.h"

#ifdef TG_HAVE_MPI
#define OMPI_SKIP_MPICXX 1  // MPI's C API: not the C++ bindings MPI 3 removed
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace tg::distributed {

namespace {

// how many processes the launcher started, from its environment (0: not started by one)
int64_t launcher_size() { return OMPI_COMM_WORLD_SIZE > 0 ? OMPI_COMM_WORLD_SIZE : PMI_SIZE; }

const std::vector<std::pair<DType, const char*>>& supported_dtypes() {
  static const std::vector<std::pair<DType, const char*>> t{
      {dtypes::float32, "float32"}, {dtypes::float64, "float64"}, {dtypes::int32, "int32"}, {dtypes::int64, "int64"},
      {dtypes::uint32, "uint32"},   {dtypes::uint64, "uint64"},   {dtypes::int8, "int8"},   {dtypes::uint8, "uint8"},
      {dtypes::int16, "int16"},     {dtypes::uint16, "uint16"}};
  return t;
}
int dtype_code(DType d) {
  const auto& t = supported_dtypes();
  for (size_t i = 0; i < t.size(); i++)
    if (t[i].first == d) return static_cast<int>(i);
  return -1;
}
[[maybe_unused]] std::string dtype_str(int code) {
  return code >= 0 && static_cast<size_t>(code) < supported_dtypes().size() ? supported_dtypes()[code].second
                                                                            : cat("dtype #", code);
}

#ifdef TG_HAVE_MPI

// the communicators: data carries the allreduces, check the size checks and the who-is-here exchange of a timeout,
// so a message of one never matches a collective of the other
MPI_Comm data_comm = MPI_COMM_NULL, check_comm = MPI_COMM_NULL;
int64_t collectives = 0;  // the allreduces this rank began, in order: what a timeout reports

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw Error(cat("MPI: ", what, " failed: ", std::string(msg, static_cast<size_t>(len))));
}

// The watchdog: MPI's collectives block inside MPI, so a thread of ours watches the one in progress (as PyTorch's NCCL
// watchdog does). Past MPI_TIMEOUT seconds it tells the other ranks, on the check communicator, which collective it
// waits in and listens for theirs: a rank that says nothing within a grace period is dead or hung. It prints the
// error naming them and aborts the job: a collective left pending can't be taken back, so no rank could go on.
class Watchdog {
 public:
  void start(bool can_call_mpi) {
    can_call_mpi_ = can_call_mpi;
    thread_ = std::thread([this] { run(); });
  }
  void stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // the calling thread is about to wait in collective #seq, of count elements of dtype code
  void arm(int64_t seq, int64_t count, int dtype) {
    count_.store(count, std::memory_order_relaxed), dtype_.store(dtype, std::memory_order_relaxed);
    since_.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    seq_.store(seq, std::memory_order_release);
  }
  void disarm() { seq_.store(-1, std::memory_order_release); }

 private:
  void run() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      int64_t seq = seq_.load(std::memory_order_acquire);
      if (seq < 0) continue;
      auto since = std::chrono::steady_clock::time_point(
          std::chrono::steady_clock::duration(since_.load(std::memory_order_relaxed)));
      double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
      if (waited > static_cast<double>(MPI_TIMEOUT) && seq_.load(std::memory_order_acquire) == seq) fire(seq);
    }
  }
  [[noreturn]] void fire(int64_t seq) {
    const World& w = world();
    std::string why = "a rank is dead or hung (MPI without threads: the ranks could not be asked which)";
    if (can_call_mpi_) {
      std::vector<int64_t> theirs(static_cast<size_t>(w.size), -1);
      std::vector<MPI_Request> reqs;
      constexpr int kTag = 7;
      for (int r = 0; r < w.size; r++) {
        if (r == w.rank) continue;
        reqs.emplace_back();
        MPI_Isend(&seq, 1, MPI_INT64_T, r, kTag, check_comm, &reqs.back());
        reqs.emplace_back();
        MPI_Irecv(&theirs[static_cast<size_t>(r)], 1, MPI_INT64_T, r, kTag, check_comm, &reqs.back());
      }
      auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(std::clamp<int64_t>(MPI_TIMEOUT, 1, 5));
      for (int all = 0; !all && std::chrono::steady_clock::now() < grace;) {
        MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &all, MPI_STATUSES_IGNORE);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      std::string silent, elsewhere;
      for (int r = 0; r < w.size; r++) {
        int64_t s = theirs[static_cast<size_t>(r)];
        if (r == w.rank || s == seq) continue;
        if (s < 0)
          silent += cat(silent.empty() ? "" : ", ", r);
        else
          elsewhere += cat(elsewhere.empty() ? "" : "; ", "rank ", r, " waits in allreduce #", s);
      }
      why = !silent.empty()      ? cat("rank(s) ", silent, " never arrived (dead or hung)")
            : !elsewhere.empty() ? cat("the ranks are in different allreduces (", elsewhere, ")")
                                 : std::string("every rank is waiting in it (an MPI fault)");
    }
    std::fprintf(stderr, "rank %d of %d: allreduce of %lld %s (allreduce #%lld) waited %lld s (MPI_TIMEOUT): %s\n",
                 w.rank, w.size, static_cast<long long>(count_.load()), dtype_str(dtype_.load()).c_str(),
                 static_cast<long long>(seq), static_cast<long long>(MPI_TIMEOUT), why.c_str());
    std::fflush(stderr);
    if (can_call_mpi_) MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);  // mpirun stops the others when a rank exits non-zero
  }

  std::atomic<int64_t> seq_{-1}, count_{0}, since_{0};
  std::atomic<int> dtype_{0};
  bool can_call_mpi_ = false, stop_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};
Watchdog watchdog;

// one collective under the watchdog
template <class F>
void guarded(int64_t seq, const Buffer& in, F&& collective) {
  watchdog.arm(seq, in.size(), dtype_code(in.dtype()));
  struct Disarm {
    ~Disarm() { watchdog.disarm(); }
  } disarm;
  collective();
}

void at_exit() {
  watchdog.stop();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

World init_world() {
  World w;
  int initialized = 0, provided = MPI_THREAD_SINGLE;
  MPI_Initialized(&initialized);
  if (initialized) {
    MPI_Query_thread(&provided);
  } else {
    // the watchdog's thread calls MPI while the caller's thread waits in a collective (tinygrad.cpp's other threads,
    // the CPU's pool and the compilers, never call MPI)
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    std::atexit(at_exit);
  }
  // errors come back as codes (MPI's default aborts the job before we could say which rank and what)
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check(MPI_Comm_dup(MPI_COMM_WORLD, &data_comm), "MPI_Comm_dup");
  check(MPI_Comm_dup(MPI_COMM_WORLD, &check_comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(data_comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(check_comm, MPI_ERRORS_RETURN);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &w.rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &w.size), "MPI_Comm_size");
  w.mpi = true;
  watchdog.start(provided == MPI_THREAD_MULTIPLE);
  return w;
}

MPI_Datatype mpi_dtype(DType d) {
  static const MPI_Datatype t[] = {MPI_FLOAT,    MPI_DOUBLE, MPI_INT32_T, MPI_INT64_T, MPI_UINT32_T,
                                   MPI_UINT64_T, MPI_INT8_T, MPI_UINT8_T, MPI_INT16_T, MPI_UINT16_T};
  return t[dtype_code(d)];
}
MPI_Op mpi_op(Ops op) { return op == Ops::ADD ? MPI_SUM : op == Ops::MUL ? MPI_PROD : MPI_MAX; }

// from this size on MPI's non-blocking allreduce (Open MPI's libnbc schedule), below it the blocking one (its tuned
// algorithms): each is the faster on its side here (bench/bench_allreduce.cpp: 1.2-1.7x at 4-64 MB, 2x below 1 MB)
constexpr int64_t kNonBlockingBytes = 4 << 20;

// MPI_Allreduce of one buffer into another, as a step of a schedule
class MPIAllreduce final : public Runner {
 public:
  MPIAllreduce(const Buffer& out, Ops op)
      : Runner(colored(cat("allreduce ", out.nbytes(), " bytes over ", world().size, " ranks"), "yellow"), out.device(),
               Estimates{out.size() * (world().size - 1), 2 * out.nbytes(), 2 * out.nbytes()}),
        op_(op),
        dev_(Device::get(out.device())) {}

  std::optional<double> operator()(const std::vector<Buffer>& bufs, const VarVals&, bool wait_done) override {
    TG_CHECK(bufs.size() == 2, "an allreduce runs on (output, input), got ", bufs.size(), " buffers");
    const Buffer &out = bufs[0], &in = bufs[1];
    TG_CHECK(out.size() == in.size() && out.dtype() == in.dtype() && in.size() <= INT32_MAX, "allreduce of ", in.size(),
             " ", in.dtype(), " into ", out.size(), " ", out.dtype(),
             ": sizes and dtypes must match, and MPI counts at most 2^31-1 elements");
    TG_CHECK(in.device() == device, "allreduce on ", device, " got a buffer on ", in.device());
    const auto st = wait_done ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    const int64_t seq = collectives++;
    if (first_run_) check_same_everywhere(in, seq);
    first_run_ = false;
    dev_.synchronize();  // the kernels that wrote the input are done
    void* src = in.host_ptr();
    void* dst = out.host_ptr();
    std::vector<uint8_t> staged;  // device memory goes through the host
    if (src == nullptr || dst == nullptr) staged = in.as_bytes();
    void* buf = staged.empty() ? dst : staged.data();
    const void* send = staged.empty() ? src : MPI_IN_PLACE;
    const int n = static_cast<int>(in.size());
    guarded(seq, in, [&] {
      if (in.nbytes() < kNonBlockingBytes) {
        check(MPI_Allreduce(send, buf, n, mpi_dtype(in.dtype()), mpi_op(op_), data_comm), "MPI_Allreduce");
      } else {
        MPI_Request req = MPI_REQUEST_NULL;
        check(MPI_Iallreduce(send, buf, n, mpi_dtype(in.dtype()), mpi_op(op_), data_comm, &req), "MPI_Iallreduce");
        check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
      }
    });
    if (!staged.empty()) Buffer(out).copyin(staged.data(), staged.size());
    if (!wait_done) return std::nullopt;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count();
  }

 private:
  // every rank reduces as many elements of one dtype: a difference would be undefined behaviour in MPI, so it is an
  // error naming both, checked the first time each allreduce runs
  static void check_same_everywhere(const Buffer& in, int64_t seq) {
    const World& w = world();
    int64_t mine[2] = {in.size(), dtype_code(in.dtype())};
    std::vector<int64_t> all(static_cast<size_t>(2 * w.size));
    guarded(seq, in, [&] {
      check(MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, check_comm), "MPI_Allgather");
    });
    for (int r = 0; r < w.size; r++) {
      int64_t n = all[static_cast<size_t>(2 * r)], d = all[static_cast<size_t>(2 * r + 1)];
      TG_CHECK(n == mine[0] && d == mine[1], "rank ", w.rank, " of ", w.size, ": allreduce #", seq,
               " mismatch: this rank has ", mine[0], " ", dtype_str(static_cast<int>(mine[1])), ", rank ", r, " has ",
               n, " ", dtype_str(static_cast<int>(d)));
    }
  }
  Ops op_;
  Compiled& dev_;  // the device of its buffers (looked up once: the registry is a map by name)
  bool first_run_ = true;
};

#endif

}  // namespace

bool built_with_mpi() {
#ifdef TG_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::string mpi_library_version() {
#ifdef TG_HAVE_MPI
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v, static_cast<size_t>(len));
  return s.substr(0, s.find_first_of("\n,"));
#else
  return "built without MPI (install libopenmpi-dev and rebuild)";
#endif
}

const World& world() {
  static const World w = [] {
    int64_t n = launcher_size();
    if (n <= 1 || DP == 0) return World{};
#ifdef TG_HAVE_MPI
    return init_world();
#else
    throw Error(cat("started as one of ", n,
                    " MPI processes, but tinygrad.cpp was built without MPI: install libopenmpi-dev "
                    "(tools/setup.sh does) and rebuild, or run with DP=0"));
#endif
  }();
  return w;
}

std::vector<Tensor> allreduce(const std::vector<Tensor>& ts, Ops op) {
  TG_CHECK_AS(ValueError, op == Ops::ADD || op == Ops::MUL || op == Ops::MAX,
              "allreduce over ranks: op must be ADD, MUL or MAX, got ", op);
  for (const Tensor& t : ts) {
    TG_CHECK(!is_multi_device(t.device()), "allreduce over ranks of a tensor on the devices ", t.device(),
             ": reduce it to one device first");
    TG_CHECK_AS(TypeError, dtype_code(t.dtype()) >= 0, "allreduce over ranks: dtype ", t.dtype(),
                " is not supported (cast to float32)");
  }
  const World& w = world();
  if (w.size == 1) return ts;
#ifdef TG_HAVE_MPI
  std::vector<Tensor> ins;
  for (const Tensor& t : ts) ins.push_back(t.contiguous());
  Tensor::realize(ins);  // in one schedule: what the tensors share is computed once
  std::vector<Tensor> outs;
  for (const Tensor& in : ins) {
    UOp ib = uop_base(in.uop());
    TG_ASSERT(ib.op() == Ops::BUFFER, "allreduce input did not realize into a buffer: ", ib.op());
    Buffer src = uop_buffer(ib);
    TG_ASSERT(src.size() == in.numel(), "allreduce input is a view of ", src.size(), " elements, not ", in.numel());
    Tensor out = Tensor::empty(in.shape(), {.device = in.device(), .dtype = in.dtype()});
    Buffer dst = uop_buffer(uop_base(out.uop()));
    dst.ensure_allocated();
    ExecItem ei{std::make_shared<MPIAllreduce>(dst, op), {dst, src}, {}, {}};
    if (capturing != nullptr && CAPTURING) capturing->add(ei, {});
    ei.run();
    outs.push_back(std::move(out));
  }
  return outs;
#else
  return ts;
#endif
}

Tensor allreduce(const Tensor& t, Ops op) { return allreduce(std::vector<Tensor>{t}, op).at(0); }

Tensor rank_slice(const Tensor& global, int64_t axis) {
  const World& w = world();
  int64_t ax = axis < 0 ? axis + global.ndim() : axis;
  TG_CHECK_AS(IndexError, ax >= 0 && ax < global.ndim(), "rank_slice: axis ", axis, " is out of range for shape ",
              shape_str(global.shape()));
  if (w.size == 1) return global;
  int64_t n = as_int(global.shape()[static_cast<size_t>(ax)]);
  TG_CHECK(n % w.size == 0, "rank_slice: axis ", axis, " of shape ", shape_str(global.shape()),
           " doesn't split evenly over ", w.size, " ranks");
  std::vector<std::pair<sint, sint>> arg;
  for (const sint& d : global.shape()) arg.emplace_back(0, d);
  arg[static_cast<size_t>(ax)] = {n / w.size * w.rank, n / w.size * (w.rank + 1)};
  return global.shrink(arg);
}

void allreduce_grads(const std::vector<Tensor>& params) {
  const World& w = world();
  if (w.size == 1) return;
  std::vector<Tensor> with, grads;
  for (const Tensor& p : params)
    if (std::optional<Tensor> g = p.grad()) with.push_back(p), grads.push_back(*g);
  grads = allreduce(grads);
  for (size_t i = 0; i < with.size(); i++) with[i].set_grad(grads[i] / static_cast<double>(w.size));
}

}  // namespace tg::distributed
