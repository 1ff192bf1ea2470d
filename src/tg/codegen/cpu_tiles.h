#pragma once
// The CPU's opts (ours, on top of tinygrad's heuristic): for targets whose renderer has vector register tiles
// (RenderOpts::simd_lanes > 0: the CPU devices, from CPU_ARCH), register tiles the C compiler turns into wide vector
// FMAs, plain loops it vectorizes itself, and the loop order and row upcasts of big kernels. codegen/heuristic asks
// for them by that capability; nothing here reads the host.
#include <optional>
#include <vector>

#include "tg/codegen/kernel.h"

namespace tg {

// a kernel of at least 2^20 iterations on a target with tiles: the ones the tiles and the other CPU opts are for;
// smaller kernels keep the reference's opts (and code)
bool big_cpu_kernel(const Kernel& k);

// For a big float sum-of-products kernel (matmul, conv), a register tile that the C compiler turns into
// wide vector FMAs, since the kernel keeps its vector ALUs (Lowering::vector_alus). Two shapes of tile:
//  - output lanes: an output axis that every input loads contiguously or broadcasts becomes the innermost lanes
//    (upcast 32 with AVX-512, else 16; or 8 or 4); with fewer than 16, another axis that keeps the broadcast inputs
//    uniform fills a 16-lane vector; up to two axes along which the contiguous inputs repeat take the outer lanes
//    (up to cpu_tile_lanes(k.opts) in all: the register budget, renderer/renderer.h), those along which the broadcast
//    inputs move least first, so that the loads of one reduce step share cache lines; the innermost reduce axis is
//    unrolled by 2. Two registers of lanes halve the broadcast loads per multiply-add (the MNIST convs: ~180 -> ~280
//    GFLOP/s; the outer lanes along a conv's rows rather than its batch: the 5x5 conv's forward 45 -> 32 ms).
//  - reduce lanes, when no output axis qualifies (the weight gradient of a conv): the same choice among the reduce
//    axes, unrolled; each output element of a 4x4 tile (two output axes that some input broadcasts; a single such
//    axis takes up to 16) accumulates a whole vector, summed once after the loop
//    (Lowering::deferred_horizontal_reduce).
//  - a sum along contiguous rows: vector accumulators along the row for four outputs; a big sum of short rows takes
//    them far apart (THREAD: a block of rows per thread share, UPCASTTOP: four quarters of each block).
// nullopt when the kernel has no such axes, or is too small to be worth it (those keep the reference's opts).
struct CpuTile {
  std::vector<Opt> opts;
  bool reduce_lanes = false;
  bool block_sums = false;  // Lowering::integer_block_sums
  // how the codegen lowers the tile: its vector ALUs kept, a reduce-lanes tile's horizontal sums after the loop
  Lowering lowering() const {
    return {.vector_alus = true, .deferred_horizontal_reduce = reduce_lanes, .integer_block_sums = block_sums};
  }
};
// whole_rows: a matmul's output lanes may take a contiguous row of up to a quarter of the register budget (not an
// eighth; half with 16 registers, one row's accumulators), so that each step of the reduce reads whole rows of its
// input (see cpu_symbolic_tile)
std::optional<CpuTile> cpu_vector_tile(const Kernel& k, bool whole_rows = false);
// the tile of a kernel with a symbolic size (a Variable's: decode's attention over the positions so far): the one
// cpu_vector_tile chooses for a stand-in with the Variable at a value that leaves every symbolic size above 16 with
// no divisor from 2 to 16 (so no opt takes those axes), when its opts apply to the kernel itself and leave each
// symbolic size a loop of its own. nullopt otherwise (the reference's opts). Its matmuls take whole rows: decode's
// attention sums its values over the positions, each a head's row of 64 read from memory once per token, where half
// rows read the cache twice, 128 bytes of every 256, and waited on memory (TinyLlama at 515 positions: 32 -> 16 us a
// layer; AVX2, which read 32 bytes of every 256 eight times: 40 -> 21 us)
std::optional<CpuTile> cpu_symbolic_tile(const Kernel& k);
// the first tile cpu_vector_tile tries: a matvec over packed weights (one output axis, one reduce axis; an input of
// bytes, shorts or halves, the activations broadcast along the output), as a quantized GGUF weight dequantized
// inside the matvec gives, whose reads repeat every block of up to 256 weights. The reduce unrolls by 32 (one block)
// and rows are upcast (8 of blocks of 32, 4 of super-blocks, half as many within 16 registers): each shift and select
// of a block's decoding folds to a lane's own or is the same for all lanes, the bytes load as whole vectors and
// decode lane-wise, and each lane accumulates apart, summed after the loop (on AVX-512, 4096x11008: Q4_0 2.6 -> 9.3
// GiB/s of weights, F16 9.8 -> 22.3). nullopt when the kernel is not one
std::optional<CpuTile> cpu_packed_matvec_tile(const Kernel& k);
// a big CPU copy that transposes (a load of 4-byte elements stored along an axis it reads with a stride, read
// contiguously along another): a square of a register's width of both axes (8 x 8 with AVX2), each of its rows one
// vector load and each of its columns one vector store, the transposition the C compiler's shuffles in registers
// (where the reference's upcast of the stored axis loaded each element alone, from rows far apart)
std::optional<CpuTile> cpu_transpose_tile(const Kernel& k);
// a CPU kernel of 64K iterations or more with exp2/log2/sin, elementwise or a sum along its innermost axis (read
// contiguously) that no tile took (a softmax's denominator over rows of 6625): left as plain loops (no opts), a sum's
// adds free to be reordered (Lowering::reassociate_reduces), so the C compiler's loop vectorizer runs the innermost
// loop a whole vector register at a time (its transcendentals are polynomials, as in every kernel of the clang
// renderer), where the upcast form keeps scalar code (16M exp2: 42 -> 8 ms). CPU_VECTOR_TILE=0 turns it off with the
// tiles
bool cpu_vector_loop(const Kernel& k);
// a CPU kernel of 64K iterations or more summing a small window (64 terms at most: a depthwise conv's 5x5) that no
// tile took, whose innermost output axis is stored contiguously and read contiguously or not at all by every load:
// its reduce unrolled whole, so the innermost loop runs along the output row and the C compiler's loop vectorizer
// runs it a whole vector register at a time, a window's shifted row an unaligned vector load (the upcast form loads
// aligned float4s and shuffles them lane by lane: the recognizer's 5x5 depthwise convs at ~24 GFLOP/s on AVX2).
// nullopt when the kernel is not one. CPU_VECTOR_TILE=0 turns it off with the tiles
std::optional<std::vector<Opt>> cpu_window_loop(const Kernel& k);
// ours, big CPU kernels: also upcast the axis the output stores contiguously, a few elements of a row per iteration
// (CPU_ROW_UPCAST=0 off)
void cpu_row_upcast(Kernel& k);
// ours, big CPU reduces: k's opts with the global loops ordered so the inputs are walked in memory order (the axes
// along which the loads move farthest outermost; CPU_LOOP_ORDER=0 off); nullopt when off or an opt doesn't apply.
// Elementwise kernels keep the order of their stores
std::optional<std::vector<Opt>> cpu_loop_order(const Kernel& k);

}  // namespace tg
