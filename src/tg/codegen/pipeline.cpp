#include "tg/codegen/pipeline.h"

#include <algorithm>
#include <deque>
#include <mutex>

#include "tg/codegen/devectorizer.h"
#include "tg/codegen/expander.h"
#include "tg/codegen/linearize.h"
#include "tg/codegen/lowerer.h"
#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/uop/kernel_info.h"
#include "tg/uop/symbolic.h"

namespace tg {

// *** renderer capabilities ***

const RenderOpts& RenderOpts::generic() {
  static const RenderOpts r;
  return r;
}

// *** the steps ***

namespace {

UOp step_lowerer(const UOp& sink, const RenderOpts& opts, const Lowering&) {
  IndexContext ctx = get_index(sink, opts);
  return graph_rewrite(sink, pm_lowerer(), ctx, {.name = "lowerer"});
}
UOp step_initial_symbolic(const UOp& sink, const RenderOpts&, const Lowering&) {
  static const PatternMatcher<UOp> pm = sym_codegen() + migrate_indexing();
  return graph_rewrite(sink, pm, {.name = "initial symbolic"});
}
UOp step_store_ignore(const UOp& sink, const RenderOpts&, const Lowering&) {
  return graph_rewrite(sink, pm_store_ignore(), {.name = "store_ignore"});
}
UOp step_move_ignore(const UOp& sink, const RenderOpts&, const Lowering&) {
  return graph_rewrite(sink, pm_move_ignore(), {.name = "move_ignore"});
}
UOp step_expander(const UOp& sink, const RenderOpts&, const Lowering&) {
  static const PatternMatcher<UOp> pm = pm_delete_ignore() + sym_codegen() + expander();
  return graph_rewrite(sink, pm, {.name = "expander"});
}
UOp step_remove_reduce(const UOp& sink, const RenderOpts&, const Lowering& lowering) {
  static const PatternMatcher<UOp, ReduceContext> pm = pm_reduce() + with_ctx<ReduceContext>(gep_pushing());
  ReduceContext ctx{.acc_num = 0,
                    .defer_horizontal = lowering.deferred_horizontal_reduce,
                    .integer_block_sums = lowering.integer_block_sums};
  return graph_rewrite(sink, pm, ctx, {.name = "remove_reduce"});
}
UOp step_devectorize(const UOp& sink, const RenderOpts& opts, const Lowering& lowering) {
  // DEVECTORIZE=1, the default: sym + devectorize + load_store_folding + correct_load_store + load_store_indexing
  static const PatternMatcher<UOp, const RenderOpts> pm =
      with_ctx<const RenderOpts>(sym_codegen() + devectorize() + load_store_folding()) + correct_load_store() +
      with_ctx<const RenderOpts>(load_store_indexing());
  // DEVECTORIZE=0 (or a CPU tile, Lowering::vector_alus): vector ALUs and accumulators stay vectors (the renderer's
  // vector types); no devectorize
  static const PatternMatcher<UOp, const RenderOpts> pm_vec =
      with_ctx<const RenderOpts>(sym_codegen() + load_store_folding()) + correct_load_store() +
      with_ctx<const RenderOpts>(load_store_indexing());
  // DEVECTORIZE>=2: nor are loads and stores split to the lengths the target supports
  static const PatternMatcher<UOp, const RenderOpts> pm_vec2 =
      with_ctx<const RenderOpts>(sym_codegen() + load_store_folding() + load_store_indexing());
  // a CPU vector tile: as DEVECTORIZE=0, its float32 loads and stores a register wide
  static const PatternMatcher<UOp, const RenderOpts> pm_tile =
      with_ctx<const RenderOpts>(sym_codegen() + load_store_folding() + splatted_lanes_load_alone()) +
      correct_load_store(true) + with_ctx<const RenderOpts>(load_store_indexing());
  if (lowering.vector_alus) return graph_rewrite(sink, pm_tile, opts, {.name = "devectorize"});
  const int64_t mode = DEVECTORIZE.value();
  return graph_rewrite(sink, mode >= 2 ? pm_vec2 : mode == 1 ? pm : pm_vec, opts, {.name = "devectorize"});
}
UOp step_split_odd_vectors(const UOp& sink, const RenderOpts&, const Lowering&) {
  UOp x = graph_rewrite(sink, split_odd_vectors(), {.name = "split odd vectors"});
  if (x == sink) return x;  // no odd vector (most tiles): no CAT left either
  return graph_rewrite(x, cat_to_vectorize(), {.name = "split odd vectors: CAT"});
}
UOp step_horizontal_tree(const UOp& sink, const RenderOpts&, const Lowering&) {
  // from the top: a whole chain of adds is rewritten before any shorter chain inside it
  return graph_rewrite(sink, pm_horizontal_tree(), {.bottom_up = true, .name = "horizontal tree"});
}
UOp step_pre_matcher(const UOp& sink, const RenderOpts& opts, const Lowering&) {
  return graph_rewrite(sink, *opts.pre_matcher, {.name = "pre_matcher"});
}
UOp step_final_rewrite(const UOp& sink, const RenderOpts& opts, const Lowering& lowering) {
  // final rules for the renderer (without sym); cached per set of supported ops and extra matcher
  struct Cached {
    OpSet ops;
    bool force_transcendental;
    const PatternMatcher<UOp>* extra;
    PatternMatcher<UOp, const RenderOpts> pm;
  };
  static std::deque<Cached> cache;  // a deque: an entry stays where it is while others are added
  static std::mutex mu;
  const PatternMatcher<UOp, const RenderOpts>* pm = nullptr;
  const bool force = TRANSCENDENTAL >= 2 || lowering.polynomial_transcendentals;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = std::find_if(cache.begin(), cache.end(), [&](const Cached& c) {
      return c.ops == opts.code_for_op && c.force_transcendental == force && c.extra == opts.extra_matcher;
    });
    if (it == cache.end()) {
      PatternMatcher<UOp, const RenderOpts> m = with_ctx<const RenderOpts>(symbolic_simple()) +
                                                get_late_rewrite_patterns(opts.code_for_op, force) +
                                                with_ctx<const RenderOpts>(pm_render());
      if (opts.extra_matcher) m = m + with_ctx<const RenderOpts>(*opts.extra_matcher);
      it = cache.insert(cache.end(), Cached{opts.code_for_op, force, opts.extra_matcher, std::move(m)});
    }
    pm = &it->pm;
  }
  return graph_rewrite(sink, *pm, opts, {.name = "final rewrite"});
}
UOp step_block_create(const UOp& sink, const RenderOpts&, const Lowering&) {
  BlockContext ctx = BlockContext::from_sink(sink);
  return graph_rewrite(sink, block_create(), ctx, {.bottom_up = true, .name = "Linearizer: Create Blocks"});
}
UOp step_blockend_merge(const UOp& sink, const RenderOpts&, const Lowering&) {
  return graph_rewrite(sink, pm_blockend_merge(), {.name = "Linearizer: Merge Blockends"});
}
UOp step_block_merge(const UOp& sink, const RenderOpts&, const Lowering&) {
  return graph_rewrite(sink, block_merge(), {.name = "Linearizer: Merge Blocks"});
}
UOp step_finalize(const UOp& sink, const RenderOpts&, const Lowering&) {
  return graph_rewrite(sink, pm_finalize(), {.name = "Linearizer: Finalize"});
}

// the steps in order (tinygrad's get_rewrites_for_renderer), each with the condition it runs under (none: always)
const RewriteStep kSteps[] = {
    // ** lowerer (rewrite_shapetracker_with_index) **
    {"lowerer", step_lowerer},
    // ** expander (expand_rewrite) **
    {"initial symbolic", step_initial_symbolic},
    // ignore (for masked stores)
    {"store_ignore", step_store_ignore},
    {"move_ignore", step_move_ignore},
    // expand + remove surviving ignores
    {"expander", step_expander},
    // ** devectorizer (full_graph_rewrite) **
    {"remove_reduce", step_remove_reduce},
    {"devectorize", step_devectorize},
    // vectors kept whole (a CPU tile) of a count that is not a power of two, in power-of-two parts
    {"split odd vectors", step_split_odd_vectors, [](const RenderOpts&, const Lowering& l) { return l.vector_alus; }},
    // a CPU tile's deferred horizontal reduces as trees (after the last rewrite that pushes GEPs)
    {"horizontal tree", step_horizontal_tree,
     [](const RenderOpts&, const Lowering& l) { return l.deferred_horizontal_reduce; }},
    // optional pre matcher
    {"pre_matcher", step_pre_matcher, [](const RenderOpts& o, const Lowering&) { return o.pre_matcher != nullptr; }},
    // final rules for the renderer (without sym)
    {"final rewrite", step_final_rewrite},
};
// ** the linearizer **
const RewriteStep kLinearizerSteps[] = {
    {"Linearizer: Create Blocks", step_block_create},
    {"Linearizer: Merge Blockends", step_blockend_merge},
    {"Linearizer: Merge Blocks", step_block_merge},
    {"Linearizer: Finalize", step_finalize},
};

}  // namespace

std::vector<RewriteStep> get_rewrites_for_renderer(const RenderOpts& opts, bool linearizer, const Lowering& lowering) {
  std::vector<RewriteStep> ret;
  for (const RewriteStep& s : kSteps)
    if (s.when == nullptr || s.when(opts, lowering)) ret.push_back(s);
  if (linearizer) ret.insert(ret.end(), std::begin(kLinearizerSteps), std::end(kLinearizerSteps));
  return ret;
}

UOp apply_rewrites(const UOp& sink, const std::vector<RewriteStep>& rewrites, const RenderOpts& opts,
                   const Lowering& lowering) {
  UOp x = sink;
  for (const RewriteStep& s : rewrites) x = s.apply(x, opts, lowering);
  return x;
}

UOp full_rewrite_to_sink(const UOp& sink, const RenderOpts* opts, bool linearizer) {
  const RenderOpts& o = opts ? *opts : RenderOpts::generic();
  const Lowering lowering = lowering_of(sink);
  return apply_rewrites(sink, get_rewrites_for_renderer(o, linearizer, lowering), o, lowering);
}

std::vector<UOp> full_rewrite(const UOp& sink, const RenderOpts* opts) {
  UOp r = full_rewrite_to_sink(sink, opts, true);
  TG_ASSERT(r.op() == Ops::BLOCKFINAL, "linearize failure: got ", r.op());
  return basic_block(r).lst;
}

}  // namespace tg
