#pragma once
// realize: ScheduleItems -> runners (compiled kernels, copies) -> run, with the DEBUG output of the reference
// (tinygrad's engine/realize.py)
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tg/renderer/renderer.h"
#include "tg/runtime/device.h"
#include "tg/schedule/schedule.h"
#include "tg/shape/sint.h"

namespace tg {

class Kernel;

class Runner {
 public:
  Runner(std::string display_name, std::string device, Estimates estimates = {})
      : display_name(std::move(display_name)), device(std::move(device)), estimates(estimates) {}
  virtual ~Runner() = default;
  // runs on the buffers; with wait, returns the seconds it took
  virtual std::optional<double> operator()(const std::vector<Buffer>& bufs, const VarVals& vars, bool wait) = 0;

  std::string display_name, device;
  Estimates estimates;
  bool first_run = true;
};

class CompiledRunner : public Runner {
 public:
  // display_name: the coloured kernel name; built by p.device's Compiled::build
  CompiledRunner(ProgramSpec p, std::string display_name);
  std::optional<double> operator()(const std::vector<Buffer>& bufs, const VarVals& vars, bool wait) override;
  // what a call hands the program: the buffers' handles, the variables' values in p.vars order, the launch size
  struct Args {
    std::vector<Opaque> handles;
    std::vector<int64_t> vals;
    Program::Dims global{1, 1, 1};
  };
  Args args(const std::vector<Buffer>& bufs, const VarVals& vars) const;
  // the call as pieces for a shared thread pool (Program::shares; a reads them, so it outlives the run)
  std::optional<Program::Shares> shares(const Args& a) { return prg_->shares(a.handles, a.vals, a.global); }
  ProgramSpec p;
  std::string lib;

 private:
  std::unique_ptr<Program> prg_;
};

// a BUFFER_VIEW: its output Buffer is already a view of its input's memory, so running it does nothing (it only
// checks that); it counts as a kernel run, as the reference's
class ViewOp : public Runner {
 public:
  explicit ViewOp(const Buffer& buf);
  std::optional<double> operator()(const std::vector<Buffer>& bufs, const VarVals& vars, bool wait) override;
};

class BufferCopy : public Runner {
 public:
  BufferCopy(int64_t total_sz, const std::string& dest_device, const std::string& src_device);
  std::optional<double> operator()(const std::vector<Buffer>& bufs, const VarVals& vars, bool wait) override;
};

struct ExecItem {
  std::shared_ptr<Runner> prg;
  std::vector<Buffer> bufs;
  std::vector<const Metadata*> metadata;
  VarVals fixedvars = {};  // variables this item always runs with (its device's number, on a tuple of devices)
  // jit: a TinyJit replay (buffers already allocated; DEBUG=2 prints the line in magenta)
  std::optional<double> run(const VarVals& vars = {}, bool wait = false, bool do_update_stats = true, bool jit = false);
  VarVals with_fixedvars(const VarVals& vars) const;  // vars, and this item's own
  // which of bufs it writes: a kernel's outputs, a copy's destination (a view op writes nothing)
  std::vector<bool> written() const;
};

// Runs items[0], or, where items begin with one kernel on each device of a tuple (compiled runners of one AST with
// _device_num 0, 1, 2 ..., as the schedule emits them, each on its own device), all of those at once: on host
// devices their shares go to the thread pool together (tinygrad runs each device's queue concurrently); elsewhere,
// and under DEBUG>=2 or the profiler (which time each kernel), one after another. Returns how many items it ran.
size_t run_together(std::span<ExecItem> items, const VarVals& vars, bool do_update_stats = true, bool jit = false);

// TinyJit's capture (tinygrad's `capturing`): while one is set on this thread, run_schedule hands it every ExecItem
// (and the variable values it runs with) before running it
class JitCapture {
 public:
  virtual ~JitCapture() = default;
  virtual void add(const ExecItem& ei, const VarVals& vars) = 0;
  // the schedule's memory planner put each key in place of its value (a view into one arena): the capture takes the
  // value for the key, so that it plans the memory of the whole captured graph itself
  virtual void unplan(const std::unordered_map<Buffer, Buffer>& replaced) = 0;
};
inline thread_local JitCapture* capturing = nullptr;

// compiles (or finds in the method cache) the kernel for an AST on a device
std::shared_ptr<CompiledRunner> get_runner(const std::string& device, const UOp& ast);
// how many kernels the method cache holds (tinygrad's len(method_cache)): what a workload compiled so far
size_t method_cache_size();
// the runner of a kernel with its opts applied: rendered with r by to_program (codegen/program.h), then built by its
// device; quiet: no DEBUG output (BEAM's candidates); device: where it runs (default: the renderer's device)
std::shared_ptr<CompiledRunner> compile_kernel(const Kernel& k, Renderer& r, bool quiet,
                                               const std::string& device = "");
// CROSS_COMPILE=<device>:<target> (CUDA:sm_90): every kernel compiled for its own device is also optimized for,
// rendered for and compiled by that target's toolchain (Device::toolchain), never run; a compile error raises.
// cross_compiled counts them. Nothing happens without the variable.
void cross_compile(const UOp& ast);
extern std::atomic<int64_t> cross_compiled;
// Compiles every kernel of a schedule that the method cache doesn't have yet, COMPILE_THREADS (default: the CPU
// count) at a time; run_schedule calls it first. Kernels get their opts and names one by one, in schedule order, so
// names and opts are what a serial compile gives. A kernel that fails here is left to the run, which raises.
void compile_schedule(const std::vector<ScheduleItem>& schedule);
int compile_threads();
ExecItem lower_schedule_item(const ScheduleItem& si);
void run_schedule(std::vector<ScheduleItem> schedule, const VarVals& vars = {}, bool do_update_stats = true);

std::string time_to_str(double t, int w = 8);  // 62.49us, 1.23ms, 2.00s  (tinygrad's helpers.time_to_str)

}  // namespace tg
