#pragma once
// the linearizer: a rewritten kernel graph into one ordered list of UOps through basic blocks (BLOCK, BLOCKSTART,
// BLOCKEND, BLOCKFINAL), as tinygrad's codegen/linearize.py
#include <optional>
#include <unordered_map>
#include <vector>

#include "tg/uop/upat.h"

namespace tg {

// the arg of BLOCK / BLOCKEND / BLOCKFINAL. Equality is identity, as tinygrad's BasicBlock (eq=False)
struct BasicBlock final : ArgObject {
  std::vector<UOp> lst;
  std::vector<UOp> ctx;
  UOp end;
  int64_t cnt = 0;
  std::optional<std::vector<UOp>> child_ctx;
  uint64_t serial;  // makes every BasicBlock a distinct arg

  BasicBlock(std::vector<UOp> lst_, std::vector<UOp> ctx_ = {}, UOp end_ = {}, int64_t cnt_ = 0,
             std::optional<std::vector<UOp>> child_ctx_ = std::nullopt);
  std::string repr() const override;
  uint64_t hash() const override { return serial; }
  bool equals(const ArgObject& o) const override { return &o == this; }
};
const BasicBlock& basic_block(const UOp& u);  // the BasicBlock arg of a BLOCK-like UOp

struct BlockContext {
  std::unordered_map<const UOpNode*, int64_t> child_count;
  std::unordered_map<const UOpNode*, std::vector<UOp>> block_ctxs, child_ctxs;
  const std::vector<UOp>& last_ctx(const UOp& u) const;
  static BlockContext from_sink(const UOp& sink);
};

std::vector<UOp> block_reorder(const std::vector<UOp>& lst);
const PatternMatcher<UOp, BlockContext>& block_create();
const PatternMatcher<UOp>& pm_blockend_merge();
const PatternMatcher<UOp>& block_merge();
const PatternMatcher<UOp>& pm_finalize();

}  // namespace tg
