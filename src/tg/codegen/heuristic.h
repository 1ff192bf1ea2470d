#pragma once
// hand_coded_optimizations: the default opts when BEAM is off (tinygrad's codegen/heuristic.py)
#include <optional>
#include <vector>

#include "tg/codegen/kernel.h"

namespace tg {

// the opts the heuristic picks for k, worked out on a copy (k itself is unchanged). Ours on top of the reference's,
// for CPU kernels of 2^20 iterations or more: the vector tile below; else the output's contiguous row upcast too
// (CPU_ROW_UPCAST=0 off) and, for reduces, the global loops ordered so the inputs are walked in memory order
// (CPU_LOOP_ORDER=0 off)
std::vector<Opt> hand_coded_optimizations(const Kernel& k);
// the tiles' register budget in float lanes: the target's (RenderOpts::simd_lanes, set by the CPU devices from
// CPU_ARCH: 256 = 16 of the 32 AVX-512 registers; 128 = all 16 of AVX2's, whose 8x16 tile spills a little but keeps
// more multiply-adds per load than a 4x16 one, which measured slower (x86-64-v3 on a Zen 4: 1024^2 sgemm 90 against
// 64-93 GFLOP/s, 2048^2 70 against 37); 64 for SSE); the host's when the opts have none; CPU_TILE_LANES=64, 128 or
// 256 overrides both
int cpu_tile_lanes(const RenderOpts& opts);
int cpu_tile_lanes();  // the host's (or CPU_TILE_LANES)
// CPU only: for a big float sum-of-products kernel (matmul, conv), a register tile that the C compiler turns into
// wide vector FMAs, since the kernel keeps its vector ALUs (RenderOpts::devectorize = 0). Two shapes of tile:
//  - output lanes: an output axis that every input loads contiguously or broadcasts becomes the innermost lanes
//    (upcast 32 with AVX-512, else 16; or 8 or 4); with fewer than 16, another axis that keeps the broadcast inputs
//    uniform fills a 16-lane vector; up to two axes along which the contiguous inputs repeat take the outer lanes
//    (up to cpu_tile_lanes() in all), those along which the broadcast inputs move least first, so that the loads of
//    one reduce step share cache lines; the innermost reduce axis is unrolled by 2. Two registers of lanes halve the
//    broadcast loads per multiply-add (the MNIST convs: ~180 -> ~280 GFLOP/s; the outer lanes along a conv's rows
//    rather than its batch: the 5x5 conv's forward 45 -> 32 ms).
//  - reduce lanes, when no output axis qualifies (the weight gradient of a conv): the same choice among the reduce
//    axes, unrolled; each output element of a 4x4 tile (two output axes that some input broadcasts; a single such
//    axis takes up to 16) accumulates a whole vector, summed once after the loop
//    (RenderOpts::defer_horizontal_reduce).
//  - a sum along contiguous rows: vector accumulators along the row for four outputs; a big sum of short rows takes
//    them far apart (THREAD: a block of rows per thread share, UPCASTTOP: four quarters of each block).
// nullopt when the kernel has no such axes, or is too small to be worth it (those keep the reference's opts).
struct CpuTile {
  std::vector<Opt> opts;
  bool reduce_lanes = false;
};
std::optional<CpuTile> cpu_vector_tile(const Kernel& k);
// the tile k's applied opts are, if they are its cpu_vector_tile
std::optional<CpuTile> applied_cpu_vector_tile(const Kernel& k);
// a big elementwise CPU kernel with exp2/log2/sin: left as one plain loop per element (no opts), its transcendental
// ops rendered as polynomials (RenderOpts::force_transcendental), so the C compiler's loop vectorizer runs it a whole
// vector register at a time, where the upcast form keeps a scalar libm call per element (16M exp2: 42 -> 8 ms).
// CPU_VECTOR_TILE=0 turns it off with the tiles
bool cpu_vector_loop(const Kernel& k);
// what engine/realize's get_kernel does before BEAM: nothing under NOOPT=1, else the hand-coded opts
// NOTE: tensor cores would be tried first; none are implemented yet
void apply_default_opts(Kernel& k);

}  // namespace tg
