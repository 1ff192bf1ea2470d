#include "tg/codegen/program.h"

#include <iostream>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "tg/codegen/pipeline.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/device.h"
#include "tg/uop/trace.h"

namespace tg {

ProgramSpec to_program(const Kernel& k, Renderer& r, bool quiet, const std::string& device) {
  const UOp& ast = k.ast;
  // VIZ: a context per kernel compiled (tinygrad's tracked Kernel.linearize; BEAM's candidates too)
  std::optional<trace::TrackedContext> viz;
  if (trace::enabled()) viz.emplace(k.name());
  trace::snapshot(ast, "View Base AST");
  UOp opt_ast = k.get_optimized_ast();
  trace::snapshot(opt_ast, "fixup optimized AST");
  const int64_t debug = quiet ? 0 : DEBUG.value();
  if (debug >= 3) {
    std::cout << k.name() << "\n";
    if (debug >= 5) std::cout << ast.repr() << "\n";
    std::cout << k.buffer_table(debug >= 4);
    std::vector<std::string> opts;
    for (auto& o : k.applied_opts) opts.push_back(o.repr());
    std::cout << "[" << join(opts, ", ") << "]\n";
    if (debug >= 5) std::cout << opt_ast.repr() << "\n";
  }
  // the optimized AST's KernelInfo carries the kernel's Lowering (a CPU tile's vector ALUs ...) to the codegen
  std::vector<UOp> uops = full_rewrite(opt_ast, r);
  if (debug >= 6) print_uops(uops, std::cout);
  std::string src;
  {
    std::lock_guard lock(r.mu);
    src = r.render(uops);
  }
  if (viz) viz->set_kernel(src, ast);
  int64_t mem = 0;  // bytes of every global buffer the kernel touches, counted once
  {
    std::unordered_map<int64_t, int64_t> seen;
    for (const UOp& u : ast.toposort())
      if ((u.op() == Ops::LOAD || u.op() == Ops::STORE) && !u.src().empty()) {
        UOp b = u.src(0);
        while (b.op() == Ops::VIEW && !b.src().empty()) b = b.src(0);
        if (b.op() == Ops::DEFINE_GLOBAL)
          seen[as_int(b.arg<ConstValue>()) * 2 + (u.op() == Ops::STORE)] = b.dtype().nbytes();
      }
    for (auto& [k2, v] : seen) mem += v;
  }
  std::optional<LaunchSize> launch;
  if (r.has_local) launch = LaunchSize{1, 1, 1};
  ProgramSpec spec = ProgramSpec::from_uops(to_function_name(k.name()), src,
                                            Device::canonicalize(device.empty() ? k.opts.device : device), ast, uops,
                                            launch, launch, mem);
  spec.first_reduce = k.first_reduce(), spec.vector_alus = k.lowering.vector_alus;
  return spec;
}

}  // namespace tg
