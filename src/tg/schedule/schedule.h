#pragma once
// schedule: the kernelized graph -> ordered ScheduleItems (tinygrad's engine/schedule.py), and the memory planner
// that lets intermediate buffers share memory (engine/memory.py).
//
// How a Tensor is realized with these (the lead's Tensor::kernelize/realize, as tinygrad's tensor.py):
//   1. apply_map_to_tensors(get_kernelize_map(UOp::sink({t.uop(), ...})))      kernelize
//   2. sink = UOp::sink({t.uop(), ...}); map every ASSIGN in sink.toposort() to its buffer (uop_base(src(0)))
//      and apply that map to the tensors                                       after this, tensors are buffers
//   3. auto [sched, var_vals] = create_schedule_with_vars(sink); run memory_planner(sched)
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tg/runtime/device.h"
#include "tg/schedule/grouper.h"
#include "tg/shape/sint.h"

namespace tg {

struct ScheduleItem {
  UOp ast;                                // SINK of STOREs (a compiled kernel), or COPY / BUFFER_VIEW
  std::vector<Buffer> bufs;               // output first, then the inputs, in DEFINE_GLOBAL order
  std::vector<const Metadata*> metadata;  // the Tensor methods that made the kernel: ['sum', 'relu', '__matmul__']
  VarVals fixedvars = {};                 // a kernel of a tuple of devices, run on one: {"_device_num": i}
};

// kernels in dependency order (BFS from the kernels that need nothing, as the reference), with the values of the
// bound Variables (name -> value) taken out of the ASTs. A kernel on a tuple of devices is one item per device, in
// the tuple's order, each with its device's number in fixedvars
std::pair<std::vector<ScheduleItem>, std::map<std::string, int64_t>> create_schedule_with_vars(const UOp& sched_sink);

// Buffers whose lifetimes (first to last use in the schedule) don't overlap share memory: on devices whose allocator
// supports offsets, every planned buffer becomes a view into one arena per device; elsewhere a buffer of the same
// device, dtype and size is reused. Left alone: allocated buffers, buffers with lb_refcount() > 0, buffers of
// non-SINK items (copies), and `keep` (the caller passes the buffers live Tensors still point at). replaced, when
// given, gets each arena view put in place of a buffer -> that buffer (what a TinyJit capture plans anew), and no
// buffer is reused in place of another
std::vector<ScheduleItem> memory_planner(std::vector<ScheduleItem> schedule, const std::vector<Buffer>& keep = {},
                                         std::unordered_map<Buffer, Buffer>* replaced = nullptr);

// the planner on lists of buffers (tinygrad's _internal_memory_planner): buffer -> what replaces it
std::vector<std::pair<Buffer, Buffer>> internal_memory_planner(const std::vector<std::vector<Buffer>>& buffers,
                                                               const std::vector<Buffer>& noopt_buffers = {},
                                                               bool ignore_checks = false);

}  // namespace tg
