#include "tg/runtime/buffers.h"

#include <mutex>
#include <unordered_map>

#include "tg/shape/uop_shape.h"

namespace tg {

namespace {
struct BufferMap {
  std::mutex mu;
  std::unordered_map<const UOpNode*, std::vector<Buffer>> map;  // one Buffer, or one per device of a tuple
};
BufferMap& buffer_map() {
  static auto* m = new BufferMap();  // never destroyed: BUFFER nodes in static storage may die after it
  return *m;
}
void on_buffer_free(const UOpNode* n) {
  std::vector<Buffer> dropped;  // released outside the lock
  {
    auto& m = buffer_map();
    std::lock_guard lock(m.mu);
    if (auto it = m.map.find(n); it != m.map.end()) {
      dropped = std::move(it->second);
      for (Buffer& b : dropped) b.ref(-1);  // the lazy-buffer count the memory planner checks (tinygrad's lb_refcount)
      m.map.erase(it);
    }
  }
}
const bool registered = (set_buffer_free_hook(on_buffer_free), true);
}  // namespace

namespace {
// the Buffers of a BUFFER node, made on first use
const std::vector<Buffer>& node_buffers(const UOp& b) {
  auto& m = buffer_map();
  {
    std::lock_guard lock(m.mu);
    if (auto it = m.map.find(b.get()); it != m.map.end()) return it->second;
  }
  std::vector<Buffer> bufs;
  for (const std::string& d : device_names(uop_device_str(b)))
    bufs.emplace_back(d, as_int(b.arg<ConstValue>()), b.dtype().base());
  std::lock_guard lock(m.mu);
  auto [it, fresh] = m.map.emplace(b.get(), std::move(bufs));
  if (fresh)
    for (Buffer& x : it->second) x.ref(1);  // held by a BUFFER node: the memory planner leaves it alone
  return it->second;                        // node-stable: entries are only erased when the node dies
}
UOp buffer_base(const UOp& u) {
  if (u.op() == Ops::BUFFER) return u;
  UOp base = uop_base(u);
  const ShapeTracker* st = uop_st(u);
  TG_ASSERT(st != nullptr && st->contiguous(), "buffer of a non-contiguous view ", u.op());
  TG_ASSERT(base.op() == Ops::BUFFER, "must be BUFFER, not ", base.op());
  return base;
}
}  // namespace

Buffer uop_buffer(const UOp& u) {
  (void)registered;
  if (u.op() == Ops::MSELECT) return uop_buffers(u).at(0);  // one device's Buffer of a tuple's
  UOp b = buffer_base(u);
  TG_CHECK(!is_multi_device(uop_device_str(b)), "a BUFFER on the devices ", uop_device_str(b),
           " has one Buffer per device");
  return node_buffers(b).at(0);
}

std::vector<Buffer> uop_buffers(const UOp& u) {
  (void)registered;
  if (u.op() == Ops::MSELECT) return {uop_buffers(u.src(0)).at(as_int(u.arg<ConstValue>()))};
  if (u.op() == Ops::MSTACK) {
    std::vector<Buffer> ret;
    for (const UOp& s : u.src()) ret.push_back(uop_buffers(s).at(0));
    return ret;
  }
  return node_buffers(buffer_base(u));
}

void uop_set_buffer(const UOp& buf, Buffer b) {
  (void)registered;
  TG_ASSERT(buf.op() == Ops::BUFFER, "must be BUFFER, not ", buf.op());
  auto& m = buffer_map();
  std::lock_guard lock(m.mu);
  auto [it, fresh] = m.map.emplace(buf.get(), std::vector<Buffer>{std::move(b)});
  TG_ASSERT(fresh, "BUFFER already has a Buffer: ", it->second.at(0).repr());
  it->second.at(0).ref(1);  // held by a BUFFER node, as uop_buffer's
}

std::optional<Buffer> uop_realized(const UOp& u) {
  if (u.op() != Ops::BUFFER) return std::nullopt;
  auto& m = buffer_map();
  std::lock_guard lock(m.mu);
  auto it = m.map.find(u.get());
  if (it == m.map.end()) return std::nullopt;
  for (const Buffer& b : it->second)
    if (!b.is_allocated()) return std::nullopt;
  return it->second.at(0);  // of a tuple: the first device's
}
bool uop_is_realized(const UOp& u) { return uop_realized(uop_base(u)).has_value(); }

size_t live_uop_buffers() {
  auto& m = buffer_map();
  std::lock_guard lock(m.mu);
  return m.map.size();
}

}  // namespace tg
