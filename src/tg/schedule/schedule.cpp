// the schedule linearizer (tinygrad's engine/schedule.py): KERNELs in BFS order of their ASSIGN dependencies
#include "tg/schedule/schedule.h"

#include <deque>
#include <unordered_map>

#include "tg/runtime/buffers.h"
#include "tg/schedule/grouper_util.h"

namespace tg {

namespace {

// *** unbind Variables ***

const PatternMatcher<UOp, VarVals>& pm_unbind() {
  static const PatternMatcher<UOp, VarVals> pm{
      {op(Ops::BIND, {op(Ops::DEFINE_VAR).named("var"), cvar("val")}),
       [](M m, VarVals& ctx) {
         UOp var = m["var"];
         add_var_val(ctx, var.arg<VarArg>().name, as_int(m["val"].arg<ConstValue>()));
         return var;
       }},  // BIND(var, val) -> var (with its VIEW: the kernel reads it as a scalar of that shape)
      {op(Ops::VIEW).named("x"),
       [](M m, VarVals& ctx) -> UOp {
         const UOp& x = m["x"];
         const ShapeTracker* st = get_st(x.arg());
         if (st == nullptr) return {};
         ShapeTracker unbound = st->unbind(ctx);
         if (unbound == *st) return {};
         return x.replace(std::nullopt, std::nullopt, std::nullopt, st_arg(std::move(unbound)));
       }},  // a symbolic shape's BINDs -> their Variables
  };
  return pm;
}

}  // namespace

std::pair<std::vector<ScheduleItem>, std::map<std::string, int64_t>> create_schedule_with_vars(const UOp& sched_sink) {
  // construct the KERNEL children graph based on assigns
  std::unordered_map<const UOpNode*, std::vector<UOp>> children;
  std::vector<UOp> kernels;  // in_degree's insertion order
  std::unordered_map<const UOpNode*, int> in_degree;
  for (const UOp& u : sched_sink.toposort()) {
    if (u.op() != Ops::ASSIGN) continue;  // anything that's not an ASSIGN doesn't write a kernel
    const UOp& k = u.src(1);
    if (in_degree.emplace(k.get(), 0).second) kernels.push_back(k);
    for (const UOp& s : k.src()) {
      if (s.op() == Ops::ASSIGN) {
        children[s.src(1).get()].push_back(k);
        in_degree[k.get()]++;
      } else if (s.op() == Ops::MSELECT || s.op() == Ops::MSTACK) {  // one of a tuple's buffers; ones stacked
        for (const UOp& s2 : s.src()) {
          const UOp& ss = s2.op() == Ops::MSELECT ? s2.src(0) : s2;
          if (ss.op() == Ops::BUFFER) continue;
          TG_CHECK(ss.op() == Ops::ASSIGN, "input to MSELECT/MSTACK must be ASSIGN or BUFFER, not ", ss.op());
          children[ss.src(1).get()].push_back(k);
          in_degree[k.get()]++;
        }
      } else {
        TG_CHECK(s.op() == Ops::BUFFER, "input to kernel must be ASSIGN or BUFFER, not ", s.op());
      }
    }
    // an ASSIGN's sources past (target, kernel) are kernels that read its target's old value (kernelize_map): this
    // kernel overwrites it, so it runs after them. The reference leaves that to the BFS order, which can break it
    for (size_t i = 2; i < u.src().size(); i++)
      if (const UOp& r = u.src(i); r.op() == Ops::ASSIGN && r.src(1) != k) {
        children[r.src(1).get()].push_back(k);
        in_degree[k.get()]++;
      }
  }

  // linearize KERNEL UOps into ScheduleItems in BFS order
  std::deque<UOp> queue;
  for (const UOp& k : kernels)
    if (in_degree[k.get()] == 0) queue.push_back(k);
  std::vector<ScheduleItem> schedule;
  VarVals var_vals;
  size_t scheduled = 0;
  while (!queue.empty()) {
    scheduled++;
    UOp k = queue.front();
    queue.pop_front();
    const KernelArg& ka = get_kernel(k);
    UOp ast = graph_rewrite(ka.ast, pm_unbind(), var_vals, {.name = "unbind vars"});
    if (ast.op() == Ops::BUFFER_VIEW) {  // the output is a view of the input's Buffer: (size, offset) in elements
      Buffer base = uop_buffer(buf_uop(k.src(1)));
      const Tuple& arg = ast.arg<Tuple>();
      uop_set_buffer(k.src(0), base.view(as_int(arg.at(0)), ast.dtype(), as_int(arg.at(1)) * base.dtype().itemsize()));
    }
    std::vector<std::vector<Buffer>> ubufs;  // per source: its Buffer, or one per device of a tuple
    for (const UOp& s : k.src()) ubufs.push_back(uop_buffers(buf_uop(s)));
    const bool multi = is_multi_device(uop_device_str(k.src(0)));
    if (!multi) {
      ScheduleItem si{ast, {}, ka.metadata};
      for (auto& b : ubufs) si.bufs.push_back(b.at(0));
      schedule.push_back(std::move(si));
    } else {  // one item per device, its number bound (a kernel that doesn't read it ignores it)
      for (size_t i = 0; i < ubufs[0].size(); i++) {
        ScheduleItem si{ast, {}, ka.metadata};
        for (auto& b : ubufs) {
          TG_CHECK(b.size() == ubufs[0].size(), "a kernel on ", ubufs[0].size(), " devices reads a buffer on ",
                   b.size());
          si.bufs.push_back(b[i]);
        }
        si.fixedvars["_device_num"] = int64_t(i);
        schedule.push_back(std::move(si));
      }
    }
    for (const UOp& x : children[k.get()])
      if (--in_degree[x.get()] == 0) queue.push_back(x);
  }
  TG_CHECK(scheduled == kernels.size(), "cycle in the kernel graph: ", kernels.size() - scheduled, " of ",
           kernels.size(), " kernels can't be ordered");
  return {std::move(schedule), std::move(var_vals)};
}

}  // namespace tg
