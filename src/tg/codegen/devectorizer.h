#pragma once
// the devectorizer: REDUCE -> DEFINE_ACC+ASSIGN, load/store grouping and splitting, scalarizing vector ALUs, valid
// simplification and the late rules for the renderer (tinygrad's codegen/devectorizer.py), plus the symbolic.py
// helpers it needs (gep_pushing, simplify_valid, uop_given_valid) and the codegen rules of `sym`
// Its rules are in four files: devectorizer.cpp (load/store, devectorize, split_odd_vectors, pm_render),
// devectorizer_sym.cpp (the symbolic.py parts), devectorizer_reduce.cpp (pm_reduce, pm_horizontal_tree) and
// devectorizer_late.cpp (get_late_rewrite_patterns).
#include <optional>
#include <vector>

#include "tg/renderer/renderer.h"

namespace tg {

// *** symbolic helpers (uop/symbolic.py) ***
UOp uop_given_valid(const UOp& valid,
                    const UOp& uop);   // uop simplified given valid is true; null if valid is never true
UOp simplify_valid(const UOp& valid);  // null when nothing changed
// operand s of a WMMA restricted to the given instructions' elements (each instruction takes upcast_size(s) of them)
UOp wmma_operand(const UOp& wmma, size_t s, const std::vector<int64_t>& instrs);
const PatternMatcher<UOp>& gep_pushing();
const PatternMatcher<UOp>& sym_codegen();  // sym() + gep_pushing + the codegen-time rules of tinygrad's sym

// *** devectorizer ***
struct ReduceContext {
  int64_t acc_num = 0;
  // a REDUCE whose input is wider than its output (an unrolled reduce axis) keeps one accumulator per input lane
  // and sums the lanes once, after the loop, instead of summing them into the accumulator on every iteration:
  // independent vector FMAs instead of a serial chain (a different order of the additions)
  bool defer_horizontal = false;
  // with it, a sum of float(p) * s over an output's lanes, p a product of integers and s the same over all of them,
  // is float(the integer sum) * s: the products in the order (quad, output, 4 lanes) that a dot-product instruction
  // takes when a quad of 4 lanes of every output lies side by side in memory (nn::GGMLInt8Weight's layout), the
  // quads' sums added as whole vectors, and one scale and accumulator lane an output
  bool integer_block_sums = false;
};
const PatternMatcher<UOp>& load_store_indexing();
const PatternMatcher<UOp>& load_store_folding();
// register_wide (ours, a CPU vector tile: Lowering::vector_alus): float32 folds up to a register's width, not 4
const PatternMatcher<UOp, const RenderOpts>& correct_load_store(bool register_wide = false);
const PatternMatcher<UOp>& devectorize();
// ours, a CPU vector tile (Lowering::vector_alus): a float vector load whose lanes are splatted (the broadcast
// operand's rows side by side in memory, a weight gradient's X^T) loads each splatted lane alone, a broadcast from
// memory on a load port, where the splat of a register's lane past the first is a shuffle on an FMA's port (AVX2's
// vpermps; AVX-512's shuffles share port 5 with its second FMA unit)
const PatternMatcher<UOp>& splatted_lanes_load_alone();
// DEVECTORIZE=0: vector ALUs and accumulators whose count is not a power of two (a CPU tile of 6 x 32 lanes) as
// CATs of power-of-two parts, which the C compiler keeps in whole registers (a <192 x float> it widens and shuffles)
const PatternMatcher<UOp>& split_odd_vectors();
const PatternMatcher<UOp>& cat_to_vectorize();  // the CATs left after it, for the renderer
const PatternMatcher<UOp>& pm_render();
const PatternMatcher<UOp, ReduceContext>& pm_reduce();  // includes sym
// a deferred horizontal reduce (the op-chain of GEPs pm_reduce leaves) as a tree of halvings; after the last GEP push
const PatternMatcher<UOp>& pm_horizontal_tree();
// rules for the ops the renderer lacks: EXP2, LOG2, SIN -> polynomials (all of them when force_transcendental,
// TRANSCENDENTAL=2), SQRT -> xpow, MOD -> AND, MUL -> SHL, IDIV -> SHR / magic multiply, NEG, SUB, MULACC
// float(p), p a product of integers: the int8 matmuls' products (their CPU tile, the devectorizer's integer groups)
bool is_int_product(const UOp& u);
PatternMatcher<UOp, const RenderOpts> get_late_rewrite_patterns(OpSet ops, bool force_transcendental = false);

}  // namespace tg
