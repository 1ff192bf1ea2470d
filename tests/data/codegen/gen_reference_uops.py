# generates reference_uops.out with the reference tinygrad (2025-06-12): python3 gen_reference_uops.py /path/to/ref
# each case: "#### name", the optimized AST (NOOPT: no opts applied), "----", print_uops(full_rewrite(ast, ClangRenderer()))
import sys; sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else '/work/ref')
from tinygrad import Tensor
from tinygrad.codegen.kernel import Kernel
from tinygrad.codegen import full_rewrite
from tinygrad.renderer.cstyle import ClangRenderer
from tinygrad.uop.ops import print_uops, Ops
from tinygrad.codegen.heuristic import hand_coded_optimizations
def case(name, t, opt=False):
  asts = [si.ast for si in t.schedule() if si.ast.op is Ops.SINK]
  for i, ast in enumerate(asts):
    k = Kernel(ast, opts=ClangRenderer())
    if opt: k.apply_opts(hand_coded_optimizations(k))
    ast_opt = k.get_optimized_ast()
    print(f"#### {name}" + (f".{i}" if len(asts) > 1 else ""))
    print(ast_opt)
    print("----")
    print_uops(full_rewrite(ast_opt, ClangRenderer()))
case("r_256", Tensor.empty(256).sum())
case("r_4_4_4", Tensor.empty(4, 4) @ Tensor.empty(4, 4))
case("r_16_16_axis0", Tensor.empty(16, 16).sum(axis=0))
case("max_axis1", Tensor.empty(16, 16).max(axis=1))
case("pad", Tensor.empty(4, 4).pad(((1, 1), (0, 0))) + 1)
case("ew16x16_opt", Tensor.empty(16, 16) + 1, opt=True)
case("pad_opt", Tensor.empty(4, 4).pad(((1, 1), (0, 0))) + 1, opt=True)
case("arange", Tensor.arange(16).contiguous())
