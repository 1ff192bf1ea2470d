// CapturedJit: capture the ExecItems a function runs, plan their intermediate memory, replay them with new input
// buffers (tinygrad's engine/jit.py)
#include "tg/engine/jit.h"

#include <algorithm>
#include <iostream>

#include "tg/helpers/knobs.h"
#include "tg/schedule/schedule.h"

namespace tg {

namespace {

// which bufs of an ExecItem it writes
std::vector<bool> written_bufs(const ExecItem& ei) {
  std::vector<bool> w(ei.bufs.size(), false);
  if (auto* cr = dynamic_cast<const CompiledRunner*>(ei.prg.get())) {
    for (size_t i = 0; i < ei.bufs.size() && i < cr->p.globals.size(); i++)
      w[i] = std::find(cr->p.outs.begin(), cr->p.outs.end(), cr->p.globals[i]) != cr->p.outs.end();
  } else if (!w.empty() && dynamic_cast<const ViewOp*>(ei.prg.get()) == nullptr) {
    w[0] = true;  // a copy writes its destination (a view op writes nothing)
  }
  return w;
}

class CaptureScope {
 public:
  explicit CaptureScope(JitCapture* c) { capturing = c; }
  ~CaptureScope() { capturing = nullptr; }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
};

}  // namespace

void JitRecorder::add(const ExecItem& ei, const VarVals& vars) {
  for (auto& [k, v] : vars) var_vals[k] = v;
  ExecItem c{ei.prg, {}, ei.metadata, ei.fixedvars};  // with its device number, on a tuple of devices
  for (const Buffer& b : ei.bufs) c.bufs.push_back(add_buffer(b));
  items.push_back(std::move(c));
}

Buffer JitRecorder::add_buffer(const Buffer& b) {
  if (auto it = replace_.find(b); it != replace_.end()) return it->second;
  if (b.is_allocated() || b.lb_refcount() > 0) return b;
  Buffer nb = b.is_view() ? add_buffer(b.base()).view(b.size(), b.dtype(), b.offset())
                          : Buffer(b.device(), b.size(), b.dtype());
  replace_.emplace(b, nb);
  return nb;
}

void JitRecorder::capture(const std::function<void()>& fn) {
  TG_ASSERT(capturing == nullptr, "a capture is already running on this thread");
  CaptureScope scope(this);
  fn();
}

CapturedJit::CapturedJit(std::vector<ExecItem> items, const std::vector<Buffer>& input_buffers,
                         std::vector<std::string> input_names)
    : expected_names_(std::move(input_names)) {
  // memory planning over the whole captured graph: intermediates with disjoint lifetimes share storage
  std::vector<std::vector<Buffer>> lists;
  for (const ExecItem& ei : items) lists.push_back(ei.bufs);
  std::unordered_map<Buffer, Buffer> assigned;
  for (auto& [from, to] : internal_memory_planner(lists)) assigned[from] = to;
  for (ExecItem& ei : items) {
    for (Buffer& b : ei.bufs) {
      if (auto it = assigned.find(b); it != assigned.end()) b = it->second;
      b.ensure_allocated();
    }
    jit_cache_.push_back(std::move(ei));
  }

  // where the inputs go
  input_written_.assign(input_buffers.size(), false);
  for (size_t j = 0; j < jit_cache_.size(); j++) {
    const ExecItem& ei = jit_cache_[j];
    std::vector<bool> w = written_bufs(ei);
    for (size_t i = 0; i < ei.bufs.size(); i++) {
      const Buffer& b = ei.bufs[i];
      auto k = std::find(input_buffers.begin(), input_buffers.end(), b);
      if (k != input_buffers.end()) {
        size_t input = static_cast<size_t>(k - input_buffers.begin());
        input_replace_.push_back({j, i, input});
        if (w[i]) input_written_[input] = true;
        continue;
      }
      TG_JIT_CHECK(std::find(input_buffers.begin(), input_buffers.end(), b.base()) == input_buffers.end(),
                   "TinyJit: a kernel uses a view into input buffer ", b.base().repr(), ", which can't be swapped");
      internal_.insert(b);
      internal_.insert(b.base());
    }
  }
  for (auto& s : input_replace_) jit_cache_[s.j].bufs[s.i] = Buffer();  // the inputs are per call
}

void CapturedJit::operator()(const std::vector<Buffer>& input_buffers, const VarVals& vars) {
  // an input that the replay also writes (an output of an earlier call, passed back in) is read from a copy
  std::vector<Buffer> bufs = input_buffers;
  for (size_t k = 0; k < bufs.size(); k++) {
    if (!internal_.count(bufs[k]) && !internal_.count(bufs[k].base())) continue;
    TG_JIT_CHECK(!input_written_[k], "TinyJit: input ", expected_names_[k],
                 " is a buffer this JIT writes (an output of an earlier call) and the function assigns to it");
    Buffer cp(bufs[k].device(), bufs[k].size(), bufs[k].dtype(), true);
    std::vector<uint8_t> host = bufs[k].as_bytes();
    cp.copyin(host.data(), host.size());
    bufs[k] = std::move(cp);
  }
  struct ClearInputs {  // don't keep this call's inputs alive after it
    CapturedJit& c;
    ~ClearInputs() {
      for (auto& s : c.input_replace_) c.jit_cache_[s.j].bufs[s.i] = Buffer();
    }
  } clear{*this};
  for (auto& s : input_replace_) jit_cache_[s.j].bufs[s.i] = bufs[s.input];
  if (DEBUG >= 1 && jit_cache_.size() >= 10) std::cout << "jit execs " << jit_cache_.size() << " kernels\n";
  for (size_t j = 0; j < jit_cache_.size();) j += run_together(std::span(jit_cache_).subspan(j), vars, true, true);
}

}  // namespace tg
