#pragma once
// multi-device tensor-level UOps (tinygrad's UOp.multi, axis, bounds, _shard, _unshard, shard, mselect, allreduce):
// a tensor on a tuple of devices is MULTI(x, axis) when it is split along axis, each device holding one slice of x's
// shape; one on a tuple without MULTI holds the whole tensor on every device. The graph below MULTI is written once
// for all devices: the Variable `_device_num` (0 .. devices-1) stands for the device a kernel runs on, bound per
// device by the schedule. The rewrites that push MULTI up and lower ALLREDUCE are kernelize's (schedule/multi.h).
#include <optional>
#include <string>
#include <vector>

#include "tg/shape/uop_shape.h"

namespace tg {

// the sharded axis (tinygrad's UOp.axis): MULTI's arg, carried up through elementwise ops, reshapes, permutes and
// reduces over other axes; nullopt for a single device, a replicated tensor, or a reduce over the sharded axis
std::optional<int64_t> uop_axis(const UOp& u);
std::vector<std::pair<sint, sint>> uop_bounds(const UOp& multi);  // each device's [begin, end) along the axis

UOp uop_multi(const UOp& u, int64_t axis);  // MULTI: u is on a tuple of devices
UOp uop_mselect(const UOp& u, int64_t i);   // the i-th device's part of a tuple's UOp
UOp uop_allreduce(const UOp& u, Ops op, const UOp& device);
UOp uop_allreduce(const UOp& u, Ops op, const std::string& device);
UOp uop_device_num(size_t devices);               // DEFINE_VAR `_device_num` in [0, devices)
UOp uop_shard_slice(const UOp& u, int64_t axis);  // _shard: this device's slice of u (u's axis divides evenly)
UOp uop_unshard(const UOp& u, int64_t axis);      // _unshard: the slice padded with zeros to the whole axis
UOp uop_shard(const UOp& u, const std::string& devices, int64_t axis);  // copied to the tuple, each its slice
// COPY to device; with from set, of the from-th part of u's tuple (tinygrad's copy_to_device(device, arg))
UOp uop_copy_to_device(const UOp& u, const std::string& device, int64_t from);

}  // namespace tg
