// TinyJit: the Tensor side of the JIT (tinygrad's TinyJit in engine/jit.py): realizes the inputs into buffers, checks
// each call against the captured one, and hands the outputs back as tensors; engine/jit.h captures and replays
#include "tg/tensor/jit.h"

#include <algorithm>
#include <iostream>
#include <set>

#include "tg/helpers/knobs.h"
#include "tg/runtime/buffers.h"
#include "tg/runtime/device.h"
#include "tg/shape/shapetracker.h"
#include "tg/shape/uop_multi.h"
#include "tg/tensor/tensor_internal.h"

namespace tg {

namespace {

// realizes several graphs in one schedule, as Tensor::realize does for one (tinygrad's Tensor.realize(*lst));
// every live tensor follows
// the function's outputs, with every assign it left pending (optimizer updates of state that isn't returned)
void realize_outputs(const std::vector<Tensor>& outs) {
  std::vector<UOp> uops = pending_assign_uops();
  for (const Tensor& t : outs) uops.push_back(t.uop());
  realize_uops(std::move(uops));
}

struct InputSpec {
  std::string name;
  ShapeTracker st;  // unbound: a symbolic shape's Variables, not their values
  DType dtype;
  std::string device;
  std::optional<int64_t> axis;  // the axis a tensor on many devices is split along (its st: one device's part)
};

// the inputs, realized into buffers (tinygrad's _prepare_jit_inputs)
struct Inputs {
  std::vector<Buffer> bufs;            // each input's Buffers: one, or one per device of a tuple
  std::vector<std::string> buf_names;  // the input each is of: "0", or "0 on CPU:1" for a device of a tuple
  std::vector<UOp> bases;              // the inputs' BUFFER nodes
  std::vector<InputSpec> specs;
  VarVals var_vals;  // the values of the Variables in their shapes
};

// an input's own graph: MULTI's source for a tensor split across devices (its buffer holds each device's part)
const UOp& input_uop(const UOp& u) { return u.op() == Ops::MULTI ? u.src(0) : u; }
UOp input_base(const UOp& u) { return uop_base(input_uop(u)); }
// realized: a BUFFER (on one device or a tuple), or the MSTACK of one BUFFER per device a copy onto a tuple leaves
bool is_buffer(const UOp& base) {
  if (base.op() == Ops::BUFFER) return true;
  if (base.op() != Ops::MSTACK) return false;
  for (const UOp& s : base.src())
    if (uop_base(s).op() != Ops::BUFFER) return false;
  return true;
}

// a graph with its bound Variables at new values: the BINDs in it, and those in its shapes (VIEW's ShapeTracker,
// a movement op's symbolic arg); what a replay returns for a symbolic output
const PatternMatcher<UOp, VarVals>& pm_rebind() {
  static const PatternMatcher<UOp, VarVals> pm{
      {op(Ops::BIND, {op(Ops::DEFINE_VAR).named("var"), op(Ops::CONST).named("val")}).named("x"),
       [](M m, VarVals& vals) -> UOp {
         auto it = vals.find(m["var"].arg<VarArg>().name);
         if (it == vals.end() || as_int(m["val"].const_arg()) == it->second) return {};
         UOp val = m["val"].replace(std::nullopt, std::nullopt, std::nullopt, ConstValue(it->second));
         return m["x"].replace(std::nullopt, std::nullopt, std::vector<UOp>{m["var"], val});
       }},
      {op(Ops::VIEW).named("x"),
       [](M m, VarVals& vals) -> UOp {
         const ShapeTracker* st = get_st(m["x"].arg());
         if (st == nullptr) return {};
         ShapeTracker now = st->rebind(vals);
         return now == *st ? UOp() : m["x"].replace(std::nullopt, std::nullopt, std::nullopt, st_arg(std::move(now)));
       }},
      {op({Ops::RESHAPE, Ops::EXPAND, Ops::PAD, Ops::SHRINK}).named("x"),
       [](M m, VarVals& vals) -> UOp {
         const SymArg* a = object_arg<SymArg>(m["x"].arg());
         if (a == nullptr) return {};
         Shape s = a->shape;
         Mask k = a->mask;
         for (sint& x : s) x = rebind(x, vals);
         for (auto& [b, e] : k) b = rebind(b, vals), e = rebind(e, vals);
         Arg arg = s.empty() ? mask_arg(k) : shape_arg(s);
         return arg == m["x"].arg() ? UOp() : m["x"].replace(std::nullopt, std::nullopt, std::nullopt, arg);
       }},
  };
  return pm;
}
Inputs prepare_inputs(const JitArgs& a) {
  Inputs in;
  for (const auto& [name, val] : a.vars) add_var_val(in.var_vals, name, val);
  std::vector<UOp> todo;
  for (const Tensor& t : a.tensors)
    if (!uop_is_realized(t.uop())) todo.push_back(t.uop());
  realize_uops(todo);
  todo.clear();
  // a constant has no buffer to swap: it gets one of its own (the reference bakes it into the kernels, and a
  // contiguous() would dedup two equal constants into one buffer)
  for (Tensor t : a.tensors)
    if (!is_buffer(input_base(t.uop()))) {
      TG_JIT_CHECK(t.uop().op() != Ops::MULTI, "TinyJit: input sharded across ", t.device(),
                   " is a constant with no buffer: pass it .contiguous()");
      Shape now;  // a symbolic shape at its bound values
      for (const sint& d : t.shape()) {
        std::optional<int64_t> v = bound_value(d);
        TG_JIT_CHECK(v.has_value(), "TinyJit: input shape ", shape_str(t.shape()), " has an unbound Variable");
        now.push_back(*v);
      }
      Tensor fresh = Tensor::empty(now, {.device = t.device(), .dtype = t.dtype()});
      todo.push_back(t.replace(fresh.assign(t.reshape(now)).reshape(t.shape())).uop());
    }
  realize_uops(todo);
  for (size_t k = 0; k < a.tensors.size(); k++) {
    const UOp& u = input_uop(a.tensors[k].uop());
    UOp base = uop_base(u);
    TG_ASSERT(is_buffer(base), "JIT input ", a.names[k], " did not realize into a buffer: ", base.op());
    std::vector<Buffer> bs = uop_buffers(base);
    std::vector<std::string> devs = device_names(a.tensors[k].device());
    for (size_t d = 0; d < bs.size(); d++) {
      bs[d].ensure_allocated();
      for (size_t k2 = 0; k2 < in.bufs.size(); k2++)
        TG_JIT_CHECK(!(in.bufs[k2] == bs[d]), "duplicate inputs to TinyJit: inputs ", in.buf_names[k2], " and ",
                     a.names[k], " are the same buffer (pass a copy of one)");
      in.bufs.push_back(bs[d]);
      in.buf_names.push_back(bs.size() == 1 ? a.names[k] : a.names[k] + " on " + devs.at(d));
    }
    const ShapeTracker* st = uop_st(u);
    TG_ASSERT(st != nullptr, "JIT input ", a.names[k], " has no shape");
    in.specs.push_back(
        {a.names[k], st->unbind(in.var_vals), u.dtype(), a.tensors[k].device(), uop_axis(a.tensors[k].uop())});
    in.bases.push_back(std::move(base));
  }
  return in;
}

std::string names_str(const std::vector<std::string>& names) { return "[" + join(names, ", ") + "]"; }

}  // namespace

void JitArgs::add_var(const UOp& bind) {
  TG_JIT_CHECK(bind.op() == Ops::BIND && bind.src(0).op() == Ops::DEFINE_VAR && bind.src(1).op() == Ops::CONST,
               "TinyJit: a UOp argument must be a bound Variable, got ", bind.render());
  add_var_val(vars, bind.src(0).arg<VarArg>().name, as_int(bind.src(1).const_arg()));
}

struct JitFunction::Captured {
  explicit Captured(CapturedJit jit) : jit(std::move(jit)) {}
  CapturedJit jit;  // the kernels, replayed over each call's input buffers (one per device of a tuple's input)
  std::vector<std::string> names;  // the tensor inputs'
  std::vector<InputSpec> expected;
  std::vector<std::pair<std::string, JitValue>> values;
  VarVals vars;  // the Variable arguments (their names are checked; their values change per call)
  // the outputs: the captured call's tensors are returned again (as tinygrad returns the same objects), so an output
  // that is a state tensor stays that tensor; an output that is (a view of) an input is made over this call's input
  std::vector<UOp> ret;
  std::vector<std::optional<Tensor>> ret_tensors;  // none for outputs over inputs
  std::vector<UOp> input_bases;  // the captured call's input buffers, kept only when an output is a view of one
};

JitFunction::JitFunction() = default;
JitFunction::~JitFunction() = default;
JitFunction::JitFunction(JitFunction&&) noexcept = default;
JitFunction& JitFunction::operator=(JitFunction&&) noexcept = default;

void JitFunction::reset() {
  cnt_ = 0;
  captured_.reset();
}

const std::vector<ExecItem>& JitFunction::jit_cache() const {
  static const std::vector<ExecItem> none;
  return captured_ ? captured_->jit.jit_cache() : none;
}

// The allocators' caches of the devices the inputs are on, given back to the system. After call 1 they hold its
// intermediates, after call 2 the capture's; the next call's buffers (the capture's own, then the memory plan's,
// sized otherwise) would be added to them instead of taking their place (the GPT step's peak memory: 3.4 -> 1.4 GB)
static void free_device_caches(const std::vector<Buffer>& bufs) {
  std::set<std::string> devices;
  for (const Buffer& b : bufs)
    if (b) devices.insert(b.device());
  for (const std::string& d : devices) free_cached_memory(d);
}

std::vector<Tensor> JitFunction::call(const JitArgs& a, const Fn& fn) {
  Inputs in = prepare_inputs(a);

  // *** calls 1 (and every call with JIT=0): run the function ***
  if (!JIT || cnt_ == 0) {
    realize_uops(pending_assign_uops());
    std::vector<Tensor> outs = fn();
    realize_outputs(outs);
    cnt_++;
    return outs;
  }

  // *** call 2: run it once more, capturing what runs ***
  if (cnt_ == 1) {
    TG_CHECK(capturing == nullptr, "having TinyJit inside another TinyJit is not supported");
    realize_uops(pending_assign_uops());  // the caller's own pending assigns are not the function's
    free_device_caches(in.bufs);          // call 1's intermediates
    JitRecorder rec;
    std::vector<Tensor> outs;
    rec.capture([&] {
      outs = fn();
      realize_outputs(outs);
    });
    TG_JIT_CHECK(
        !rec.items.empty(),
        "TinyJit: nothing to capture, the function ran no kernels (didn't JIT anything!): return the tensors it "
        "computes or assign its state");
    for (const auto& [name, val] : rec.var_vals)
      TG_JIT_CHECK(in.var_vals.count(name), "TinyJit: a kernel ran with the Variable ", name, "=", val,
                   " bound inside the function: a replay couldn't change it; bind it in an input's shape");
    for (size_t k = 0; k < a.tensors.size(); k++)
      TG_JIT_CHECK(input_base(a.tensors[k].uop()) == in.bases[k], "TinyJit: input ", a.names[k],
                   " got a new buffer inside the function (an assign to a tensor whose buffer another tensor shares), "
                   "which a replay can't repeat");
    auto c = std::make_unique<Captured>(CapturedJit(std::move(rec.items), in.bufs, in.buf_names));
    c->names = a.names;
    c->expected = in.specs;
    c->values = a.values, c->vars = a.vars;
    for (const Tensor& t : outs) {
      c->ret.push_back(t.uop());
      bool over_input = false;
      for (const UOp& u : t.uop().toposort())
        if (std::find(in.bases.begin(), in.bases.end(), u) != in.bases.end()) over_input = true;
      c->ret_tensors.push_back(over_input ? std::nullopt : std::optional<Tensor>(t));
      if (over_input) c->input_bases = in.bases;
    }
    if (DEBUG >= 1)
      std::cout << "JIT captured " << c->jit.jit_cache().size() << " kernels with " << in.bufs.size() << " inputs\n";
    captured_ = std::move(c);
    cnt_++;
    return outs;
  }

  // *** call 3 and on: replay ***
  Captured& c = *captured_;
  TG_JIT_CHECK(a.names == c.names, "TinyJit: args mismatch: the captured call had tensor inputs ", names_str(c.names),
               ", this call has ", names_str(a.names));
  for (size_t k = 0; k < in.specs.size(); k++) {
    const InputSpec &now = in.specs[k], &was = c.expected[k];
    TG_JIT_CHECK(now.st.shape() == was.st.shape(), "TinyJit: input ", now.name, " has shape ",
                 shape_str(now.st.shape()), ", the captured call had ", shape_str(was.st.shape()));
    TG_JIT_CHECK(now.st == was.st, "TinyJit: input ", now.name, " is the view ", now.st.repr(),
                 ", the captured call had ", was.st.repr());
    TG_JIT_CHECK(now.dtype == was.dtype, "TinyJit: input ", now.name, " has dtype ", now.dtype,
                 ", the captured call had ", was.dtype);
    TG_JIT_CHECK(now.device == was.device, "TinyJit: input ", now.name, " is on ", now.device,
                 ", the captured call had ", was.device);
    TG_JIT_CHECK(now.axis == was.axis, "TinyJit: input ", now.name, " is split along axis ",
                 now.axis ? std::to_string(*now.axis) : "None", ", the captured call's along ",
                 was.axis ? std::to_string(*was.axis) : "None");
  }
  std::vector<std::string> now_vars, was_vars;
  for (auto& [n, v] : a.vars) now_vars.push_back(n);
  for (auto& [n, v] : c.vars) was_vars.push_back(n);
  TG_JIT_CHECK(now_vars == was_vars, "TinyJit: args mismatch: the captured call had the Variables ",
               names_str(was_vars), ", this call has ", names_str(now_vars));
  std::vector<std::string> vnames, cnames;
  for (auto& [n, v] : a.values) vnames.push_back(n);
  for (auto& [n, v] : c.values) cnames.push_back(n);
  TG_JIT_CHECK(vnames == cnames, "TinyJit: args mismatch: the captured call had other arguments ", names_str(cnames),
               ", this call has ", names_str(vnames));
  for (size_t k = 0; k < a.values.size(); k++)
    TG_JIT_CHECK(a.values[k].second == c.values[k].second, "TinyJit: argument ", a.values[k].first, " is ",
                 a.values[k].second.repr(), ", the captured call had ", c.values[k].second.repr(),
                 " (arguments that aren't tensors are captured by value)");

  // assigns left pending since the last call (new weights for the state, say) land before the kernels read them
  realize_uops(pending_assign_uops());

  if (cnt_ == 2) free_device_caches(in.bufs);  // the capture's intermediates, replaced by the memory plan's buffers
  c.jit(in.bufs, in.var_vals);  // the captured kernels over this call's input buffers, at its Variables' values

  std::vector<std::pair<UOp, UOp>> to_now;
  for (size_t k = 0; k < c.input_bases.size(); k++) to_now.push_back({c.input_bases[k], in.bases[k]});
  std::vector<Tensor> outs;
  for (size_t o = 0; o < c.ret.size(); o++) {
    const std::optional<Tensor>& t = c.ret_tensors[o];
    UOp now = to_now.empty() ? c.ret[o] : c.ret[o].substitute(to_now);
    if (!in.var_vals.empty()) now = graph_rewrite(now, pm_rebind(), in.var_vals, {.name = "rebind"});
    if (t && t->uop() == c.ret[o] && now == c.ret[o])
      outs.push_back(*t);
    else  // over an input, of other Variable values, or the caller pointed the returned tensor elsewhere: a new
      outs.push_back(tensor_from_uop(now, std::nullopt));  // tensor over the output
  }
  cnt_++;
  return outs;
}

}  // namespace tg
