#pragma once
// BEAM search (tinygrad's engine/search.py): the opts of a kernel found by timing candidates. From the unoptimized
// kernel and the hand-coded opts, each round applies every action (an UPCAST, UNROLL, LOCAL, GROUP(TOP), PADTO or
// SWAP) to each of the `amt` fastest kernels so far, compiles and times the new ones on scratch buffers (min of 3
// runs), and keeps the `amt` fastest; it stops when a round gains nothing. BEAM=n in get_runner; the result is
// kept in the disk cache ("beam_search", per device, AST, amt and hand-coded opts) unless CACHELEVEL=0 or
// IGNORE_BEAM_CACHE=1.
#include <vector>

#include "tg/codegen/kernel.h"
#include "tg/renderer/renderer.h"

namespace tg {

// the fastest kernel found: k with its opts applied (and, when it is the hand-coded one, that one's Lowering)
Kernel beam_search(const Kernel& k, Renderer& r, int amt);

// the actions BEAM tries (tinygrad's `actions`, without tensor cores)
const std::vector<Opt>& beam_actions();

}  // namespace tg
