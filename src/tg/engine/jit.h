#pragma once
// CapturedJit: the ExecItems a jitted function ran, their intermediate memory planned, replayed with new input
// buffers swapped in (tinygrad's CapturedJit and the capture half of TinyJit in engine/jit.py). It knows Buffers and
// ExecItems only; the Tensor-facing TinyJit that drives it (inputs, outputs, the checks on them) is tensor/jit.h.
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tg/engine/realize.h"

namespace tg {

// a misuse the reference asserts on (changed inputs, duplicate inputs, nothing captured): Python sees AssertionError
struct JitError : Error {
  using Error::Error;
};
#define TG_JIT_CHECK(cond, ...)                    \
  do {                                             \
    if (!(cond)) throw JitError(cat(__VA_ARGS__)); \
  } while (0)

// Collects the ExecItems run while capturing (tinygrad's TinyJit.add/add_buffer under `capturing`), with their
// intermediate buffers replaced by fresh ones that the JIT plans and owns. Buffers that exist outside the function
// (allocated ones: the inputs, state, constants) and buffers of live tensors (the outputs) are kept. The buffers it
// replaced live as long as the recorder.
class JitRecorder final : public JitCapture {
 public:
  void add(const ExecItem& ei, const VarVals& vars) override;
  void unplan(const std::unordered_map<Buffer, Buffer>& replaced) override;
  // runs fn with this recorder `capturing` on this thread (one capture at a time)
  void capture(const std::function<void()>& fn);
  std::vector<ExecItem> items;
  VarVals var_vals;  // the variable values they ran with

 private:
  Buffer add_buffer(const Buffer& b);
  std::unordered_map<Buffer, Buffer> replace_;
  std::unordered_map<Buffer, Buffer> unplanned_;  // a planned view -> the buffer it replaced
};

class CapturedJit {
 public:
  // items: the captured ExecItems; input_buffers: the captured call's input buffers, named input_names. Plans the
  // intermediates' memory over the whole graph (disjoint lifetimes share storage), allocates them, and finds where
  // each input goes; a kernel that uses a view into an input buffer raises JitError.
  CapturedJit(std::vector<ExecItem> items, const std::vector<Buffer>& input_buffers,
              std::vector<std::string> input_names);
  // runs the captured kernels with these input buffers (same count and order as captured) swapped in; an input that
  // the replay also writes (an output of an earlier call, passed back in) is read from a copy. Keeps no input alive.
  // vars: the Variables' values for this call (a symbolic kernel runs at them)
  void operator()(const std::vector<Buffer>& input_buffers, const VarVals& vars = {});
  const std::vector<ExecItem>& jit_cache() const { return jit_cache_; }
  const std::vector<std::string>& expected_names() const { return expected_names_; }

 private:
  struct Slot {
    size_t j, i, input;
  };
  std::vector<ExecItem> jit_cache_;
  std::vector<Slot> input_replace_;      // jit_cache_[j].bufs[i] is input `input`: swapped in per call, cleared after
  std::vector<bool> input_written_;      // per input: a captured kernel writes it (an assign to an input)
  std::unordered_set<Buffer> internal_;  // every other buffer (and base) the replay touches
  // the items that compute the same every call (invariant_items in jit.cpp): run on the first replay and whenever a
  // buffer in hoisted_reads_ (from outside the function) has a new version
  std::vector<bool> hoisted_;
  bool hoisted_ran_ = false;
  std::vector<std::pair<Buffer, uint64_t>> hoisted_reads_;  // (base, its version when the hoisted items last ran)
  std::vector<std::string> expected_names_;
};

}  // namespace tg
