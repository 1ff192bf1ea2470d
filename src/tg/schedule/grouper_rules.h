#pragma once
// What the two halves of kernelize share (schedule/grouper.cpp: which UOps realize, the kernels and their ASTs;
// schedule/grouper_rules.cpp: the tensor graph's simplification, merge_views and the swizzler, FUSE,
// replace_contiguous): the matchers' context and the small tensor-level helpers. Internal to schedule/.
#include <optional>
#include <vector>

#include "tg/schedule/grouper.h"
#include "tg/schedule/grouper_util.h"
#include "tg/shape/uop_shape.h"

namespace tg::grouper {

// *** small tensor-level helpers (tinygrad's UOp properties) ***

inline const ShapeTracker& st_of(const UOp& u) {
  const ShapeTracker* st = uop_st(u);
  TG_ASSERT(st != nullptr, "UOp ", u.op(), " has no ShapeTracker");
  return *st;
}
// the element offset of a view that reads one contiguous range of its buffer, in order; nullopt for any other view
std::optional<sint> contiguous_range(const ShapeTracker& st);
inline bool has_st(const UOp& u) { return uop_st(u) != nullptr; }
inline int64_t size_of(const UOp& u) {
  if (u.op() == Ops::BUFFER_VIEW) return as_int(u.arg<Tuple>().at(0));
  return uop_size(u);
}
inline UOp make_contiguous(const UOp& u) { return UOp::make(Ops::CONTIGUOUS, u.dtype(), {u}); }
inline UOp make_fuse(const UOp& u) { return UOp::make(Ops::FUSE, u.dtype(), {u}); }
inline UOp make_gbarrier(const UOp& u) { return UOp::make(Ops::GBARRIER, u.dtype(), {u}); }
inline UOp make_assign(const UOp& t, const UOp& x) { return UOp::make(Ops::ASSIGN, t.dtype(), {t, x}); }
inline const std::vector<int64_t>& axis_arg(const UOp& r) { return r.arg<ReduceArg>().axes; }

// *** the context every grouper matcher shares ***

struct GrouperCtx {
  MetaTable* meta = nullptr;
  UOpMap contig;                         // replace_contiguous: base -> contiguous view of it
  UOpSet* realizes = nullptr;            // do_realize / add_gbarrier
  std::vector<UOp> bufs;                 // add_buffer_ops: the kernel's buffers, output first
  std::optional<ShapeTracker> store_st;  // check_load_st: how the kernel stores its first output
};
using GPM = PatternMatcher<UOp, GrouperCtx>;

constexpr OpSet ALWAYS_CONTIGUOUS{Ops::CONTIGUOUS, Ops::ASSIGN, Ops::COPY,    Ops::BUFFER, Ops::BUFFER_VIEW, Ops::CONST,
                                  Ops::BIND,       Ops::DEVICE, Ops::MSELECT, Ops::MSTACK, Ops::GBARRIER};

// *** grouper_rules.cpp ***

const GPM& grouper_sym();         // tinygrad's grouper `sym`
const GPM& device_rewrites();     // the device's own rewrites of its reduces (RenderOpts::kernelize_matcher)
const GPM& merge_views();         // VIEW(VIEW) -> VIEW, and views of constants
const GPM& view_left();           // views pushed up through elementwise ops
const GPM& view_right();          // views pushed down through reduces (the swizzler)
const GPM& do_fuse();             // FUSE: a reduce pulled into its consumer's kernel
const GPM& replace_contiguous();  // a contiguous permuted view instead of its parent view

}  // namespace tg::grouper
