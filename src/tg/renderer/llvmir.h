#pragma once
// LLVMRenderer (tinygrad's renderer/llvmir.py): linearized uops -> LLVM IR text (opaque pointers, LLVM >= 15).
// Each uop is one or a few IR instructions, rendered by the first rule of llvm_rewrite() that matches; a RANGE is a
// do-while loop (entry -> body -> latch) whose accumulators are phi nodes; a gated load branches around its load.
#include <string>
#include <unordered_map>
#include <vector>

#include "tg/renderer/renderer.h"

namespace tg {

using LStr = std::optional<std::string>;
class LLVMRenderer;
using LLVMRewrite = PatternMatcher<LStr, LLVMRenderer>;
const LLVMRewrite& llvm_rewrite();

std::string ldt(DType dt);                   // float, <4 x float>, ptr, i1 ...
std::string lconst(ConstValue v, DType dt);  // an IR constant of dt: 1, 0x3FF0000000000000, true

class LLVMRenderer : public Renderer {
 public:
  LLVMRenderer();
  std::string render(const std::vector<UOp>& uops) override;
  // the kernel with two more i32 parameters (%tg_core, %tg_ncores) whose outermost loop split_range runs only this
  // core's share of its iterations (as ClangRenderer::render_threaded)
  std::string render_threaded(const std::vector<UOp>& uops, const UOp& split_range);
  // the entry points the CPU runtime calls (see runtime/ops_cpu.h): tg_entry_NAME(ptr bufs, ptr vars) and, threaded,
  // tg_entry_threads_NAME(ptr bufs, ptr vars, i32 core, i32 ncores)
  std::string entry_shim(const std::string& name, const std::vector<KernelParam>& params, bool threaded) const;

  // r[u]: the IR value of a uop rendered earlier (for rules)
  const std::string& operator[](const UOp& u) const;
  const UOpNode* split_range = nullptr;

 private:
  std::string render_kernel(const std::vector<UOp>& uops);
  std::unordered_map<const UOpNode*, std::string> r_;
};

}  // namespace tg
