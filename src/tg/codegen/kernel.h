#pragma once
// Kernel: one scheduled kernel AST plus the opts applied to it (tinygrad's codegen/kernel.py). It keeps one
// ShapeTracker per buffer (and two per reduce, and one for the full shape), reshapes and permutes them all together
// as opts are applied, names the kernel, and hands the lowerer get_optimized_ast().
//
// Axis layout of every ShapeTracker in sts (all have shape_len dims):
//   [global dims | local dims] first_reduce [group-reduce dims | reduce dims] first_upcast [upcast/unroll dims]
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tg/codegen/opt.h"
#include "tg/renderer/renderer.h"
#include "tg/shape/real_strides.h"
#include "tg/shape/shapetracker.h"
#include "tg/uop/kernel_info.h"
#include "tg/uop/uop.h"

namespace tg {

// An opt that does not apply to this kernel (tinygrad's KernelOptError). BEAM and the heuristic catch it.
struct KernelOptError : Error {
  using Error::Error;
};

// *** the process-wide name counter: E_4, E_4n1, E_4n2 for distinct kernels that would share a name ***

// counts base_name (keyed by its to_function_name) and returns base_name + colored("nN" or "", "BLACK")
std::string register_kernel_name(const std::string& base_name);
void reset_kernel_cnt();  // for tests: forget every name counted so far

// Where a tensor core sits in the kernel's shape (tinygrad's TensorCoreOptions)
struct TensorCoreOptions {
  std::array<int, 3> axes;                     // the dims of N, M (while they exist) and K
  std::array<bool, 2> axes_exist{true, true};  // N and M are still dims of the shape
  std::vector<std::pair<int, int>> axis_pads;  // (dim, tc dim) for N, M, K that must be padded to fit
  void fix_axes(int removed_axis);             // a dim was removed: shift N and M or mark them gone
  bool operator==(const TensorCoreOptions&) const = default;
};

class Kernel {
 public:
  explicit Kernel(UOp ast);  // for Device::DEFAULT's renderer, as tinygrad's Kernel(ast)
  Kernel(UOp ast, RenderOpts opts);
  Kernel(const Kernel&) = default;  // NOTE: a copy has no name yet (tinygrad's Kernel.copy)
  Kernel& operator=(const Kernel&) = default;
  Kernel copy() const { return *this; }

  UOp ast;  // the SINK as scheduled
  RenderOpts opts;
  std::vector<UOp> reduceops;  // REDUCE_AXIS nodes in toposort order
  std::vector<UOp> vars;       // DEFINE_VAR nodes
  std::vector<UOp> bufs;       // LOAD/STORE/CONST/VALID/DEFINE_VAR nodes, reversed toposort order (as tinygrad)
  // bufs' ShapeTrackers, then (reduce output, reduce input) per reduceop, then the full shape with 0 strides
  std::vector<ShapeTracker> sts;
  std::vector<Opt> applied_opts;
  int group_for_reduces = 0, upcasted = 0, local_dims = 0;
  bool dont_use_locals = false;
  std::optional<TensorCore> tensor_core;  // the tensor core the TC opt applied
  std::optional<TensorCoreOptions> tensor_core_opts;
  int use_tensor_cores = 0;  // 1: WMMA, 2: its shape only, 3: emulated with shared memory
  // how the codegen lowers the applied opts, where the heuristic chose more than opts (a CPU tile: its vector ALUs
  // kept). Set by apply_hand_coded; an opt applied after it drops it (the lowering belongs to the opts it came with)
  Lowering lowering;

  // *** shape views ***
  const Shape& output_shape() const { return sts[0].shape(); }
  const Shape& full_shape() const { return sts.back().shape(); }
  Shape full_unupcasted_shape() const;
  int shape_len() const { return static_cast<int>(sts[0].shape().size()); }
  int first_upcast() const { return shape_len() - upcasted; }
  int first_reduce() const;  // the first dim where the output is reduced (or first_upcast)
  int global_dims() const { return first_reduce() - local_dims; }
  UOp reduceop() const { return reduceops.empty() ? UOp() : reduceops[0]; }
  std::vector<UOp> membufs() const;     // the distinct buffers (DEFINE_GLOBAL/DEFINE_LOCAL) loaded or stored
  int buf_index(const UOp& buf) const;  // bufs.index(buf); -1 when absent
  struct UpcastedAxis {
    sint size;
    std::optional<sint> stride;
    bool reduced;  // the output does not have this dim (an unroll)
  };
  std::vector<UpcastedAxis> upcasted_axis(int i) const;  // the upcast dims of sts[i]
  std::vector<std::string> colors() const;               // one per dim: blue/BLUE, cyan, green, red, magenta, yellow
  std::string colored_shape(int pad = 0, bool dense = false) const;

  // *** the opts ***
  // applies opt or throws KernelOptError (leaving the kernel unchanged)
  void apply_opt(const Opt& opt, bool append_opt = true);
  Kernel& apply_opts(const std::vector<Opt>& opts);
  int real_axis(const Opt& opt) const;
  // The TC opt, then (when it applied) the hand-coded opts around it, or extra_opts instead. False when no tensor
  // core fits the kernel. use_tensor_cores: 1 WMMA, 2 only the shape, 3 emulated; tc_select: -1 tries each in turn;
  // tc_opt: 0 a single reduce of two LOADs, 1 also casts and several reduce dims, 2 also pads N/M/K (TC_SELECT,
  // TC_OPT when unset)
  bool apply_tensor_cores(int use_tensor_cores = 1, const std::optional<std::vector<Opt>>& extra_opts = std::nullopt,
                          int axis = 0, std::optional<int> tc_select = std::nullopt,
                          std::optional<int> tc_opt = std::nullopt);

  // *** outputs ***
  // E_/r_ + coloured dims + the nN suffix. Computed (and counted) once per Kernel, after the opts are applied.
  const std::string& name() const;
  std::string base_name() const;  // the name without the counter suffix; counts nothing
  // the AST with each buffer's ShapeTracker replaced by its reshaped/permuted one and the SINK arg set to
  // KernelInfo(name, local_dims, upcasted, dont_use_locals); name_override skips naming (and counting)
  UOp get_optimized_ast(const std::optional<std::string>& name_override = {}) const;
  // the DEBUG>=3 buffer table: "{i:2d}: {shape:25s} {dtype:20s} {real_strides:30s} " + (DEBUG>=4: the ShapeTracker)
  std::string buffer_table(bool with_st) const;

  // *** the shape machinery the opts use (public: the heuristic and tests call them) ***
  using ShapeFxn = std::function<Shape(const Shape&)>;
  void reshape_and_permute(const ShapeFxn& new_shape_fxn, const std::optional<std::vector<int64_t>>& axis);
  void upcast();  // the last dim becomes an upcast dim
  // split `amount` off dim `axis` (from the top or the bottom) and move it to insert_before (default: the end)
  void shift_to(int axis, sint amount, bool top = false, std::optional<int> insert_before = {});
  bool simplify_ones();            // drops dims that are 1 in the full shape; true if any
  void simplify_merge_adjacent();  // merges neighbouring dims that every ShapeTracker can merge
  // ours, a big kernel on a target with CPU tiles: each reduce dim along which some ShapeTracker's index is not affine
  // (a division or a modulo of its range: a gradient read through a reshape of a permuted tensor) is split into the
  // dims along which every index is, where there are such; a tile's inner loop then steps its pointers rather than
  // dividing (the GPT's q, k and v gradients read as one (4096, 1152) operand: 1152 -> (3, 6, 64))
  void split_unaffine_dims();

 private:
  void apply_opt_unchecked(const Opt& opt, bool append_opt);
  std::optional<TensorCoreOptions> create_tc_opts(const UOp& reduceop, const TensorCore& tc, int axis,
                                                  int opt_level) const;
  bool apply_tc_opt(int use_tensor_cores, int axis, int tc_select, int opt_level);
  UOp tensor_core_reduce(const UOp& op, const UOp& ret, const std::vector<int64_t>& axes) const;
  // the name is a cached property: a copy starts without one, so copying does not count it twice
  struct NameCache {
    std::optional<std::string> v;
    NameCache() = default;
    NameCache(const NameCache&) {}
    NameCache& operator=(const NameCache&) {
      v.reset();
      return *this;
    }
  };
  mutable NameCache name_;
};

}  // namespace tg
