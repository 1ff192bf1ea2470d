#pragma once
// the device Buffer behind each BUFFER UOp (tinygrad's `buffers` weak dict in ops.py): made on first use, dropped
// with the node
#include <optional>
#include <vector>

#include "tg/runtime/device.h"
#include "tg/uop/uop.h"

namespace tg {

// BUFFER (or a contiguous view of one): its Buffer, made lazily; MSELECT: that device's Buffer of a tuple's
Buffer uop_buffer(const UOp& buf);
// the Buffers behind a BUFFER on a tuple of devices (tinygrad's MultiBuffer, one per device), an MSELECT of one of
// them, or an MSTACK of single ones; a single device's BUFFER gives its one Buffer
std::vector<Buffer> uop_buffers(const UOp& u);
// gives a BUFFER that has no Buffer yet this one (the schedule makes a BUFFER_VIEW's output a view of its base)
void uop_set_buffer(const UOp& buf, Buffer b);
std::optional<Buffer> uop_realized(
    const UOp& u);                   // the allocated Buffer of a BUFFER, else nullopt (tinygrad's realized)
bool uop_is_realized(const UOp& u);  // base is an allocated BUFFER
size_t live_uop_buffers();           // for tests: how many BUFFER nodes hold a Buffer

}  // namespace tg
