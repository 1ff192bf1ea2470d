#include "tg/runtime/buffers.h"

#include <mutex>
#include <unordered_map>

#include "tg/shape/uop_shape.h"

namespace tg {

namespace {
struct BufferMap {
  std::mutex mu;
  std::unordered_map<const UOpNode*, Buffer> map;
};
BufferMap& buffer_map() {
  static auto* m = new BufferMap();  // never destroyed: BUFFER nodes in static storage may die after it
  return *m;
}
void on_buffer_free(const UOpNode* n) {
  Buffer dropped;  // released outside the lock
  {
    auto& m = buffer_map();
    std::lock_guard lock(m.mu);
    if (auto it = m.map.find(n); it != m.map.end()) {
      dropped = std::move(it->second);
      dropped.ref(-1);  // the lazy-buffer count the memory planner checks (tinygrad's lb_refcount)
      m.map.erase(it);
    }
  }
}
const bool registered = (set_buffer_free_hook(on_buffer_free), true);
}  // namespace

Buffer uop_buffer(const UOp& u) {
  (void)registered;
  UOp b = u;
  if (b.op() != Ops::BUFFER) {
    UOp base = uop_base(b);
    const ShapeTracker* st = uop_st(b);
    TG_ASSERT(st != nullptr && st->contiguous(), "buffer of a non-contiguous view ", b.op());
    b = base;
  }
  TG_ASSERT(b.op() == Ops::BUFFER, "must be BUFFER, not ", b.op());
  auto& m = buffer_map();
  {
    std::lock_guard lock(m.mu);
    if (auto it = m.map.find(b.get()); it != m.map.end()) return it->second;
  }
  Buffer buf(uop_device_str(b), as_int(b.arg<ConstValue>()), b.dtype().base());
  std::lock_guard lock(m.mu);
  auto [it, fresh] = m.map.emplace(b.get(), buf);
  if (fresh) it->second.ref(1);  // held by a BUFFER node: the memory planner leaves it alone
  return it->second;
}

void uop_set_buffer(const UOp& buf, Buffer b) {
  (void)registered;
  TG_ASSERT(buf.op() == Ops::BUFFER, "must be BUFFER, not ", buf.op());
  auto& m = buffer_map();
  std::lock_guard lock(m.mu);
  auto [it, fresh] = m.map.emplace(buf.get(), std::move(b));
  TG_ASSERT(fresh, "BUFFER already has a Buffer: ", it->second.repr());
  it->second.ref(1);  // held by a BUFFER node, as uop_buffer's
}

std::optional<Buffer> uop_realized(const UOp& u) {
  if (u.op() != Ops::BUFFER) return std::nullopt;
  auto& m = buffer_map();
  std::lock_guard lock(m.mu);
  auto it = m.map.find(u.get());
  if (it == m.map.end() || !it->second.is_allocated()) return std::nullopt;
  return it->second;
}
bool uop_is_realized(const UOp& u) { return uop_realized(uop_base(u)).has_value(); }

size_t live_uop_buffers() {
  auto& m = buffer_map();
  std::lock_guard lock(m.mu);
  return m.map.size();
}

}  // namespace tg
