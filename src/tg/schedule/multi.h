#pragma once
// multi-device rewrites (tinygrad's engine/multi.py), the first matchers of kernelize:
//   multi_pm          pushes MULTI up through the ops of a sharded tensor, so every op below it runs on each device's
//                     slice (an elementwise op, movement, a reduce; a reduce over the sharded axis becomes ALLREDUCE;
//                     a COPY of a MULTI off the devices becomes the slices padded and all-reduced there)
//   replace_allreduce lowers ALLREDUCE into copies between the devices and adds: naive (every device's buffer copied to
//                     every device) or ring (reduce-scatter of chunks, then all-gather; RING=2 always, RING=1 above
//                     RING_ALLREDUCE_THRESHOLD elements on more than two devices); a COPY onto a tuple of devices into
//                     MSTACK of one copy per device; MSELECT/MSTACK through views
#include "tg/schedule/grouper_rules.h"

namespace tg::grouper {

const GPM& multi_pm();
const GPM& replace_allreduce();

}  // namespace tg::grouper
