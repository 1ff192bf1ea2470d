// memory planning (tinygrad's engine/memory.py): buffers whose lifetimes don't overlap share memory
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "tg/helpers/knobs.h"
#include "tg/schedule/schedule.h"

namespace tg {

namespace {

int64_t round_up(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

// a first-fit suballocator over one arena (tinygrad uses a TLSFAllocator here: the offsets may differ, the
// non-overlap is the same). Blocks are multiples of block_size.
class ArenaPlanner {
 public:
  int64_t alloc(int64_t size) {
    int64_t off = 0;
    for (auto& [o, s] : used_) {  // ordered by offset: the first gap that fits
      if (o - off >= size) break;
      off = std::max(off, o + s);
    }
    used_.emplace(off, size);
    high_ = std::max(high_, off + size);
    return off;
  }
  void free(int64_t off) { used_.erase(off); }
  int64_t high() const { return high_; }

 private:
  std::map<int64_t, int64_t> used_;  // offset -> size
  int64_t high_ = 0;
};

}  // namespace

std::vector<std::pair<Buffer, Buffer>> internal_memory_planner(const std::vector<std::vector<Buffer>>& buffers,
                                                               const std::vector<Buffer>& noopt_buffers,
                                                               bool ignore_checks) {
  if (NO_MEMORY_PLANNER) return {};
  std::unordered_set<Buffer> noopt;
  for (const Buffer& b : noopt_buffers) noopt.insert(b.base());
  std::vector<Buffer> bases;                                     // first_appearance's order
  std::unordered_map<Buffer, std::pair<size_t, size_t>> appear;  // base -> (first, last)
  std::vector<Buffer> buf_to_opt;
  std::unordered_set<Buffer> in_opt;
  for (size_t i = 0; i < buffers.size(); i++) {
    for (const Buffer& buf : buffers[i]) {
      bool skip = buf.is_allocated() || buf.base().is_allocated() || buf.lb_refcount() > 0 || noopt.count(buf.base());
      if (!ignore_checks && skip) continue;
      Buffer base = buf.base();
      if (auto it = appear.find(base); it == appear.end()) {
        appear.emplace(base, std::make_pair(i, i));
        bases.push_back(base);
      } else {
        it->second.second = i;
      }
      if (in_opt.insert(buf).second) buf_to_opt.push_back(buf);
    }
  }

  // buffer events in timeline order; at the same time a free comes before an alloc
  struct Event {
    size_t t;
    bool open;
    Buffer buf;
  };
  std::vector<Event> events;
  for (const Buffer& b : bases) events.push_back({appear[b].first, true, b});
  for (const Buffer& b : bases) events.push_back({appear[b].second + 1, false, b});
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return std::tie(a.t, a.open) < std::tie(b.t, b.open); });

  // suballocate from one arena per device where the allocator supports offsets, else reuse same-sized buffers
  struct Replace {
    Buffer base;  // null: the device's arena
    int64_t offset = -1;
  };
  std::unordered_map<Buffer, Replace> buffer_replace;
  std::map<std::string, ArenaPlanner> arenas;
  std::map<std::tuple<std::string, std::string, int64_t>, std::vector<Buffer>> reuse_buffers;
  for (const Event& ev : events) {
    const Buffer& buf = ev.buf;
    if (Device::get(buf.device()).allocator->supports_offset()) {
      auto& arena = arenas[buf.device()];
      if (ev.open)
        buffer_replace[buf] = {Buffer(), arena.alloc(round_up(buf.nbytes(), 0x1000))};
      else
        arena.free(buffer_replace[buf].offset);
    } else {
      auto key = std::make_tuple(buf.device(), buf.dtype().repr(), buf.nbytes());
      auto& pool = reuse_buffers[key];
      if (ev.open) {
        if (!pool.empty())
          buffer_replace[buf] = {pool.back(), -1}, pool.pop_back();
        else
          buffer_replace[buf] = {buf, -1};
      } else {
        pool.push_back(buffer_replace[buf].base);
      }
    }
  }

  // allocate the arenas, then assign full buffers, then the views of them
  std::map<std::string, Buffer> arena_bufs;
  for (auto& [dev, a] : arenas) arena_bufs[dev] = Buffer(dev, round_up(a.high(), 0x1000), dtypes::int8);
  std::vector<std::pair<Buffer, Buffer>> assigned;
  std::unordered_map<Buffer, Buffer> assigned_idx;
  for (const Buffer& buf : bases) {
    const Replace& r = buffer_replace[buf];
    Buffer base = r.base ? r.base : arena_bufs[buf.device()];
    if (buf == base) continue;
    Buffer nb = r.offset < 0 ? base : base.view(buf.size(), buf.dtype(), r.offset);
    assigned.push_back({buf, nb});
    assigned_idx[buf] = nb;
  }
  for (const Buffer& buf : buf_to_opt) {
    if (!buf.is_view()) continue;
    auto it = assigned_idx.find(buf.base());
    Buffer pbuf = it == assigned_idx.end() ? buf.base() : it->second;
    assigned.push_back({buf, pbuf.base().view(buf.size(), buf.dtype(), pbuf.offset() + buf.offset())});
  }
  return assigned;
}

std::vector<ScheduleItem> memory_planner(std::vector<ScheduleItem> schedule, const std::vector<Buffer>& keep,
                                         std::unordered_map<Buffer, Buffer>* replaced) {
  // exclude buffers involved in copies, to keep transfers parallel in graphs
  std::vector<Buffer> noopt = keep;
  std::vector<std::vector<Buffer>> bufs;
  for (const ScheduleItem& si : schedule) {
    bufs.push_back(si.bufs);
    if (si.ast.op() != Ops::SINK) noopt.insert(noopt.end(), si.bufs.begin(), si.bufs.end());
  }
  std::unordered_map<Buffer, Buffer> assigned;
  for (auto& [k, v] : internal_memory_planner(bufs, noopt)) {
    if (replaced != nullptr) {  // an arena's view stands for one buffer alone; a reused buffer for several: not reused
      if (!v.is_view()) continue;
      (*replaced)[v] = k;
    }
    assigned[k] = v;
  }
  for (ScheduleItem& si : schedule)
    for (Buffer& b : si.bufs)
      if (auto it = assigned.find(b); it != assigned.end()) b = it->second;
  return schedule;
}

}  // namespace tg
