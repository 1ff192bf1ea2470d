#pragma once
// VIZ: the rewrite trace (tinygrad's track_rewrites and TrackedGraphRewrite). With VIZ set, every named graph_rewrite
// inside a tracked context is written to a trace file as it runs: its input graph, and per match the node before, the
// node after and the rule that fired. The trace holds no UOps (so no buffers): a node is written once, as a record
// numbered in order of first appearance, so two runs of one program write the same bytes. Records are lines of JSON,
// flushed after every step, so a program killed mid-run leaves a readable trace.
//   VIZ=1   write the trace; at exit serve it with tinygrad-viz (on a terminal; elsewhere print how to)
//   VIZ=-1  write the trace and print its path (VIZ_TRACE names the file)
// The format, for readers (tinygrad-viz): a header line {"tinygrad_viz_trace":1}, then records:
//   {"ctx":C,"name":N}                             a context (repeated with "name", "kernel_code", "ref" to update it)
//   {"n":[id,op,head,label,shape,[src ids],arg,g,ref,is_float,tag]}  a node: its repr line "UOp(Ops.X, dtype,
//       arg=..., src=(", its label, shape, sources, str(arg), format(arg, "g"), a KERNEL's ast ref, str(tag)
//   {"rule":R,"file":F,"line":L,"pat":P}          a rule
//   {"step":S,"ctx":C,"name":N,"file":F,"line":L,"depth":D,"bottom_up":B,"sink":id}
//   {"m":[S,before,after,R]}                       a match
#include <atomic>
#include <cstdint>
#include <string>

namespace tg {
class UOp;
class UPat;
namespace trace {

bool enabled();  // VIZ != 0, read once

// set when VIZ is on and the first context opens; from then on every named rewrite is recorded, into the context
// opened last (tinygrad's tracked_ctxs[-1]). graph_rewrite's one test when VIZ is off.
inline std::atomic<bool> tracking_on{false};
inline bool tracking() { return tracking_on.load(std::memory_order_relaxed); }
// the step being recorded on this thread, or null: PatternMatcher::rewrite reports its matches to it
struct Step;
inline thread_local Step* current = nullptr;

// tinygrad's @track_rewrites: a context of steps, named as the reference names them ("Schedule 2 Kernels n1", a
// kernel's name); the steps after it go to it until the next context opens. Does nothing when VIZ is off.
class TrackedContext {
 public:
  explicit TrackedContext(const std::string& name);
  ~TrackedContext();
  TrackedContext(const TrackedContext&) = delete;
  TrackedContext& operator=(const TrackedContext&) = delete;
  void set_name(const std::string& name);
  void set_kernel(const std::string& code, const UOp& ast);  // a kernel's code, and the ast its KERNEL nodes ref

 private:
  int64_t id_ = -1;
};
// the counter of a tracked function's calls, for the " n1" suffix (tinygrad's _name_cnt)
int next_count(const std::string& fn);

// a step with no rewrites: a snapshot of a graph ("View Base AST", "View Kernel Graph")
void snapshot(const UOp& sink, const char* name, const char* file = __builtin_FILE(), int line = __builtin_LINE());

// graph_rewrite's side, used only while tracking: a named rewrite records a step for its lifetime; an unnamed one
// pauses recording (tinygrad's simplify and substitute track nothing)
class StepScope {
 public:
  StepScope(const UOp& sink, const char* name, bool bottom_up, const char* file, int line);
  ~StepScope();
  StepScope(const StepScope&) = delete;
  StepScope& operator=(const StepScope&) = delete;

 private:
  Step* saved_;
  Step* step_ = nullptr;
};
void record_match(Step* s, const UOp& before, const UOp& after, const char* file, int line, const UPat& pat);

// the shape layer prints a node's shape for its label ("(4)"; "" for none)
using ShapeStrHook = std::string (*)(const UOp& u);
void set_shape_str_hook(ShapeStrHook hook);

std::string trace_path();                        // the file being written; "" when VIZ is off
void set_profile_path(const std::string& path);  // PROFILE=1's file: VIZ=1 serves it beside the trace
void flush();                                    // write out what is buffered (at exit, and for tests)

}  // namespace trace
}  // namespace tg
