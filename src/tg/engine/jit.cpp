// CapturedJit: capture the ExecItems a function runs, plan their intermediate memory, replay them with new input
// buffers (tinygrad's engine/jit.py)
#include "tg/engine/jit.h"

#include <algorithm>
#include <iostream>
#include <tuple>

#include "tg/helpers/knobs.h"
#include "tg/schedule/schedule.h"

namespace tg {

namespace {

class CaptureScope {
 public:
  explicit CaptureScope(JitCapture* c) { capturing = c; }
  ~CaptureScope() { capturing = nullptr; }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
};

// Which items compute the same every call (JIT_HOIST): a kernel or copy without Variables whose outputs no Tensor
// holds and no other item touches (no other buffer of the captured graph overlaps their bytes), and whose inputs are
// buffers no item writes (the function's state: weights) or outputs of such items. A model's layout copies of its
// weights (a conv's weight stored output-channels-last, a matmul's panels) are such items: the replay runs them
// once, and again only when one of the buffers they read was written since (Buffer::version). Returns which items,
// and the bases of the state they read
std::pair<std::vector<bool>, std::vector<Buffer>> invariant_items(const std::vector<ExecItem>& items,
                                                                  const std::vector<Buffer>& inputs) {
  std::vector<bool> hoisted(items.size(), false);
  std::vector<Buffer> state;
  if (!JIT_HOIST) return {hoisted, state};
  std::unordered_set<Buffer> input_bases;
  for (const Buffer& b : inputs) input_bases.insert(b.base());
  struct Use {
    Buffer buf;
    size_t item;
    bool written;
  };
  std::unordered_map<Buffer, std::vector<Use>> uses;  // base -> every buffer of every item on it
  std::vector<std::vector<bool>> written;
  for (size_t j = 0; j < items.size(); j++) {
    written.push_back(items[j].written());
    for (size_t i = 0; i < items[j].bufs.size(); i++)
      uses[items[j].bufs[i].base()].push_back({items[j].bufs[i], j, written[j][i]});
  }
  auto overlap = [](const Buffer& a, const Buffer& b) {
    return a.offset() < b.offset() + b.nbytes() && b.offset() < a.offset() + a.nbytes();
  };
  std::unordered_set<Buffer> invariant, read;  // the hoisted items' outputs; the state's bases they read
  for (size_t j = 0; j < items.size(); j++) {
    const ExecItem& ei = items[j];
    const auto* cr = dynamic_cast<const CompiledRunner*>(ei.prg.get());
    if (cr == nullptr ? dynamic_cast<const BufferCopy*>(ei.prg.get()) == nullptr : !cr->p.vars.empty()) continue;
    bool ok = std::find(written[j].begin(), written[j].end(), true) != written[j].end();
    for (size_t i = 0; i < ei.bufs.size() && ok; i++) {
      const Buffer& b = ei.bufs[i];
      ok = !input_bases.count(b.base());
      if (written[j][i]) {  // only this item touches these bytes, and no Tensor holds them
        ok = ok && b.lb_refcount() == 0;
        for (const Use& u : uses[b.base()])
          ok = ok && (!overlap(u.buf, b) || (u.buf == b && (u.item == j || !u.written)));
      } else if (!invariant.count(b)) {  // state: no item writes these bytes
        for (const Use& u : uses[b.base()]) ok = ok && !(u.written && overlap(u.buf, b));
      }
    }
    if (!ok) continue;
    hoisted[j] = true;
    for (size_t i = 0; i < ei.bufs.size(); i++) {
      if (written[j][i])
        invariant.insert(ei.bufs[i]);
      else if (!invariant.count(ei.bufs[i]) && read.insert(ei.bufs[i].base()).second)
        state.push_back(ei.bufs[i].base());
    }
  }
  return {hoisted, state};
}

}  // namespace

void JitRecorder::add(const ExecItem& ei, const VarVals& vars) {
  for (auto& [k, v] : vars) var_vals[k] = v;
  ExecItem c{ei.prg, {}, ei.metadata, ei.fixedvars};  // with its device number, on a tuple of devices
  for (const Buffer& b : ei.bufs) c.bufs.push_back(add_buffer(b));
  items.push_back(std::move(c));
}

void JitRecorder::unplan(const std::unordered_map<Buffer, Buffer>& replaced) {
  for (const auto& [planned, original] : replaced) unplanned_[planned] = original;
}

Buffer JitRecorder::add_buffer(const Buffer& b) {
  // a view the schedule's planner put in an arena stands for the buffer the kernel made: the JIT plans its memory
  // over the whole graph, keeping apart what the hoisted items write (planned by the schedule, a weight's layout
  // copy could share its bytes with a later intermediate, and be rerun every replay)
  if (auto it = unplanned_.find(b); it != unplanned_.end()) return add_buffer(it->second);
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
  std::vector<Buffer> state;
  std::tie(hoisted_, state) = invariant_items(items, input_buffers);
  for (const Buffer& b : state) hoisted_reads_.push_back({b, 0});
  if (const auto n = std::count(hoisted_.begin(), hoisted_.end(), true); DEBUG >= 1 && n > 0)
    std::cout << "JIT hoisted " << n << " of " << items.size() << " kernels (their inputs are the function's state)\n";
  // memory planning over the whole captured graph: intermediates with disjoint lifetimes share storage, except what
  // the hoisted items write (kept from one call to the next)
  std::vector<std::vector<Buffer>> lists;
  std::vector<Buffer> kept;
  for (size_t j = 0; j < items.size(); j++) {
    lists.push_back(items[j].bufs);
    if (!hoisted_[j]) continue;
    std::vector<bool> w = items[j].written();
    for (size_t i = 0; i < w.size(); i++)
      if (w[i]) kept.push_back(items[j].bufs[i]);
  }
  std::unordered_map<Buffer, Buffer> assigned;
  for (auto& [from, to] : internal_memory_planner(lists, kept)) assigned[from] = to;
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
    std::vector<bool> w = ei.written();
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
  // the hoisted items run on the first replay, and again when a buffer they read was written since
  bool stale = !hoisted_ran_;
  for (const auto& [b, v] : hoisted_reads_) stale |= b.version() != v;
  const size_t n = jit_cache_.size();
  auto skipped = [&](size_t j) { return hoisted_[j] && !stale; };
  for (size_t j = 0; j < n;) {
    if (skipped(j)) {
      j++;
      continue;
    }
    size_t e = j + 1;
    while (e < n && !skipped(e)) e++;
    for (size_t i = j; i < e;) i += run_together(std::span(jit_cache_).subspan(i, e - i), vars, true, true);
    j = e;
  }
  if (stale) {
    hoisted_ran_ = true;
    for (auto& [b, v] : hoisted_reads_) v = b.version();
  }
}

}  // namespace tg
