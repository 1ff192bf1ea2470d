#include "tg/engine/realize.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <iostream>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "tg/codegen/heuristic.h"
#include "tg/codegen/kernel.h"
#include "tg/codegen/program.h"
#include "tg/engine/search.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/profile.h"
#include "tg/runtime/threadpool.h"
#include "tg/uop/trace.h"

namespace tg {

std::string time_to_str(double t, int w) {
  char buf[64];
  if (t > 10)
    std::snprintf(buf, sizeof(buf), "%*.2fs ", w, t);
  else if (t > 10e-3)
    std::snprintf(buf, sizeof(buf), "%*.2fms", w, t * 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%*.2fus", w, t * 1e6);
  return buf;
}

// *** runners ***

CompiledRunner::CompiledRunner(ProgramSpec spec, std::string display_name)
    : Runner(std::move(display_name), spec.device, spec.estimates), p(std::move(spec)) {
  if (DEBUG >= 4) std::cout << p.src << "\n" << std::flush;  // print(p.src): a blank line after }
  BuiltProgram b = Device::get(p.device).build(p);
  lib = std::move(b.lib), prg_ = std::move(b.program);
}

CompiledRunner::Args CompiledRunner::args(const std::vector<Buffer>& bufs, const VarVals& vars) const {
  Args a;
  a.handles.reserve(bufs.size());
  for (const Buffer& b : bufs) a.handles.push_back(b.opaque());
  for (const UOp& v : p.vars) {
    const std::string& name = v.arg<VarArg>().name;
    auto it = vars.find(name);
    TG_CHECK(it != vars.end(), "kernel ", p.name, " needs a value for variable '", name, "'");
    a.vals.push_back(it->second);
  }
  a.global = p.launch_global(vars).value_or(LaunchSize{1, 1, 1});
  return a;
}

std::optional<double> CompiledRunner::operator()(const std::vector<Buffer>& bufs, const VarVals& vars, bool wait) {
  Args a = args(bufs, vars);
  return (*prg_)(a.handles, a.vals, wait, a.global, p.local_size);
}

static std::string view_name(const Buffer& buf) {
  char b[64];
  std::snprintf(b, sizeof(b), "view %8lld @ %-10lld", static_cast<long long>(buf.nbytes()),
                static_cast<long long>(buf.offset()));
  return colored(b, "yellow");
}
ViewOp::ViewOp(const Buffer& buf) : Runner(view_name(buf), buf.device()) {}

std::optional<double> ViewOp::operator()(const std::vector<Buffer>& bufs, const VarVals&, bool) {
  TG_CHECK(bufs.size() >= 2 && bufs[0].is_view() && bufs[0].base() == bufs[1].base(),
           "a view op's output must be a view of its input's base");
  return std::nullopt;
}

static std::string copy_name(int64_t total_sz, const std::string& dest, const std::string& src) {
  char buf[128];
  std::string d = dest.substr(0, 7), s = src.substr(0, 7);
  if (total_sz >= 1e6)
    std::snprintf(buf, sizeof(buf), "copy %7.2fM, %7s <- %-7s", static_cast<double>(total_sz) / 1e6, d.c_str(),
                  s.c_str());
  else
    std::snprintf(buf, sizeof(buf), "copy %8lld, %7s <- %-7s", static_cast<long long>(total_sz), d.c_str(), s.c_str());
  return colored(buf, "yellow");
}
BufferCopy::BufferCopy(int64_t total_sz, const std::string& dest_device, const std::string& src_device)
    : Runner(copy_name(total_sz, dest_device, src_device), dest_device, Estimates{0, total_sz, total_sz}) {}

std::optional<double> BufferCopy::operator()(const std::vector<Buffer>& bufs, const VarVals&, bool wait) {
  TG_CHECK(bufs.size() >= 2, "copy needs a destination and a source buffer");
  const Buffer &dest = bufs[0], &src = bufs[1];
  TG_CHECK(dest.size() == src.size() && dest.dtype() == src.dtype(), "buffer copy mismatch, ", dest.size(),
           " != ", src.size(), ", ", dest.dtype(), " != ", src.dtype());
  auto st = std::chrono::steady_clock::now();
  Buffer(dest).copy_from(src);
  if (!wait) return std::nullopt;
  Device::get(dest.device()).synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count();
}

// *** the method cache: one compiled runner per (device, ast, opts context) ***

std::shared_ptr<CompiledRunner> compile_kernel(const Kernel& k, Renderer& r, bool quiet, const std::string& device) {
  return std::make_shared<CompiledRunner>(to_program(k, r, quiet, device), k.name());
}

namespace {

std::mutex runner_mu;
std::unordered_map<std::string, std::shared_ptr<CompiledRunner>>& runner_cache() {
  static std::unordered_map<std::string, std::shared_ptr<CompiledRunner>> cache;
  return cache;
}
// an ast's structural key, computed once per ast: a kernel scheduled again is the same interned node (held here, so
// its address is not reused), and its key walks the whole ast formatting every arg
uint64_t ast_key(const UOp& ast) {
  static std::mutex mu;
  static std::unordered_map<const UOpNode*, std::pair<UOp, uint64_t>> keys;
  {
    std::lock_guard lock(mu);
    if (auto it = keys.find(ast.get()); it != keys.end()) return it->second.second;
  }
  const uint64_t key = ast.key();
  std::lock_guard lock(mu);
  keys.try_emplace(ast.get(), ast, key);
  return key;
}
// the method cache's key: the device, the ast and every setting that changes how it is optimized or rendered
std::string runner_key(const std::string& device, const UOp& ast) {
  return cat(device, ":", ast_key(ast), ":", knobs_key(knob_flag::CODE));
}
std::shared_ptr<CompiledRunner> cached_runner(const std::string& key) {
  std::lock_guard lock(runner_mu);
  auto it = runner_cache().find(key);
  return it == runner_cache().end() ? nullptr : it->second;
}
std::shared_ptr<CompiledRunner> cache_runner(const std::string& key, std::shared_ptr<CompiledRunner> runner) {
  std::lock_guard lock(runner_mu);
  return runner_cache().emplace(key, std::move(runner)).first->second;
}
// the kernel for an ast with its opts: BEAM's pick, the hand-coded ones, or none (NOOPT)
Kernel optimized_kernel(const UOp& ast, Renderer& r) {
  Kernel k(ast, r);
  if (int64_t beam = BEAM; beam >= 1) return beam_search(k, r, static_cast<int>(beam));
  apply_default_opts(k);  // nothing under NOOPT
  return k;
}

}  // namespace

std::atomic<int64_t> cross_compiled{0};

void cross_compile(const UOp& ast) {
  static const std::string target = CROSS_COMPILE;
  if (target.empty()) return;
  static const Toolchain tc = Device::toolchain(target);
  Kernel k(ast, *tc.renderer);  // the hand-coded opts: BEAM would have to run it
  apply_default_opts(k);
  ProgramSpec p = to_program(k, *tc.renderer, true, tc.renderer->device);
  if (DEBUG >= 4) std::cout << "cross-compiling for " << target << ":\n" << p.src << "\n";
  tc.compiler->compile_cached(p.src);
  cross_compiled++;
}

size_t method_cache_size() {
  std::lock_guard lock(runner_mu);
  return runner_cache().size();
}

std::shared_ptr<CompiledRunner> get_runner(const std::string& device, const UOp& ast) {
  const std::string key = runner_key(device, ast);
  if (auto hit = cached_runner(key)) return hit;
  Renderer& r = *Device::get(device).renderer;
  Kernel k = optimized_kernel(ast, r);
  auto ret = cache_runner(key, compile_kernel(k, r, false, device));
  cross_compile(ast);
  return ret;
}

int compile_threads() {
  return static_cast<int>(std::max<int64_t>(1, COMPILE_THREADS ? COMPILE_THREADS.value() : cpu_threads()));
}

void compile_schedule(const std::vector<ScheduleItem>& schedule) {
  const int threads = compile_threads();
  // DEBUG=3 prints each kernel as it compiles, in order; VIZ records them in order (the same trace every run)
  if (threads <= 1 || DEBUG >= 3 || trace::enabled()) return;
  struct Job {
    std::string key, device;
    Kernel k;
    Job(std::string key_, std::string device_, const UOp& ast)
        : key(std::move(key_)), device(std::move(device_)), k(optimized_kernel(ast, *Device::get(device).renderer)) {}
  };
  struct Pending {
    std::string key, device;
    UOp ast;
  };
  std::vector<Pending> pending;
  std::unordered_set<std::string> seen;
  for (const ScheduleItem& si : schedule) {
    if (si.ast.op() != Ops::SINK || si.bufs.empty()) continue;
    std::string device = si.bufs[0].device(), key = runner_key(device, si.ast);
    if (seen.insert(key).second && !cached_runner(key)) pending.push_back({key, device, si.ast});
  }
  if (pending.size() < 2) return;  // one kernel: the run compiles it
  std::deque<Job> jobs;            // a deque: a Kernel's name is not copied with it, so each stays where it is made
  // kernels are named here, in schedule order (n1, n2 ... as when they compile one by one)
  for (Pending& p : pending) (void)jobs.emplace_back(std::move(p.key), std::move(p.device), p.ast).k.name();
  parallel_each(jobs.size(), threads, [&](size_t i) {
    Job& j = jobs[i];
    try {
      cache_runner(j.key, compile_kernel(j.k, *Device::get(j.device).renderer, false, j.device));
    } catch (...) {  // left to the run, which compiles it again and raises with the kernel's context
      return;
    }
    cross_compile(j.k.ast);
  });
}

// *** lowering and running ***

ExecItem lower_schedule_item(const ScheduleItem& si) {
  const UOp& ast = si.ast;
  if (ast.op() == Ops::SINK) {
    TG_CHECK(!si.bufs.empty(), "a kernel without buffers");
    auto runner = get_runner(si.bufs[0].device(), ast);
    std::vector<Buffer> bufs;
    for (int64_t g : runner->p.globals) bufs.push_back(si.bufs.at(static_cast<size_t>(g)));
    return ExecItem{runner, std::move(bufs), si.metadata, si.fixedvars};
  }
  if (ast.op() == Ops::BUFFER_VIEW) {
    TG_CHECK(si.bufs.size() >= 2, "a buffer view needs two buffers");
    return ExecItem{std::make_shared<ViewOp>(si.bufs[0]), si.bufs, si.metadata, si.fixedvars};
  }
  if (ast.op() == Ops::COPY) {
    TG_CHECK(si.bufs.size() >= 2, "a copy needs two buffers");
    return ExecItem{std::make_shared<BufferCopy>(si.bufs[0].nbytes(), si.bufs[0].device(), si.bufs[1].device()),
                    si.bufs, si.metadata, si.fixedvars};
  }
  throw Error(cat("can't lower a schedule item with ast ", ast.op()));
}

std::vector<bool> ExecItem::written() const {
  std::vector<bool> w(bufs.size(), false);
  if (auto* cr = dynamic_cast<const CompiledRunner*>(prg.get())) {
    for (size_t i = 0; i < bufs.size() && i < cr->p.globals.size(); i++)
      w[i] = std::find(cr->p.outs.begin(), cr->p.outs.end(), cr->p.globals[i]) != cr->p.outs.end();
  } else if (!w.empty() && dynamic_cast<const ViewOp*>(prg.get()) == nullptr) {
    w[0] = true;  // a copy writes its destination (a view op writes nothing)
  }
  return w;
}

// the buffers an item wrote get a new version (Buffer::version)
static void mark_written(const ExecItem& ei) {
  std::vector<bool> w = ei.written();
  for (size_t i = 0; i < w.size(); i++)
    if (w[i]) ei.bufs[i].mark_written();
}

static void update_stats(const Runner& prg, std::optional<double> et) {
  GlobalCounters::kernel_count++;
  GlobalCounters::global_ops += prg.estimates.ops;
  GlobalCounters::global_mem += prg.estimates.mem;
  if (et) GlobalCounters::time_sum_s += *et;
}

std::optional<double> ExecItem::run(const VarVals& vars, bool wait, bool do_update_stats, bool jit) {
  if (!jit)
    for (Buffer& b : bufs) b.ensure_allocated();
  const int64_t debug = DEBUG;
  const bool profile = profile_enabled();
  const double st_us = profile ? profile_now_us() : 0;
  const std::optional<double> et = (*prg)(bufs, with_fixedvars(vars), wait || debug >= 2 || profile);
  mark_written(*this);
  if (profile)
    profile_range(prg->device, ansistrip(prg->display_name), st_us, et ? *et * 1e6 : profile_now_us() - st_us,
                  dynamic_cast<const BufferCopy*>(prg.get()) != nullptr);
  if (!do_update_stats) return et;
  update_stats(*prg, et);
  if (debug >= 2) {
    double t = et.value_or(0), tt = t != 0 ? t : 1e-20;
    int64_t lds = prg->estimates.lds, mem = std::min(prg->estimates.mem, lds);
    char head[64], tail[160];
    std::snprintf(head, sizeof(head), "*** %-7s %4lld", prg->device.substr(0, 7).c_str(),
                  static_cast<long long>(GlobalCounters::kernel_count.load()));
    std::string ptm = et ? (t > 0.01 ? colored(time_to_str(t, 9), "yellow") : time_to_str(t, 9)) : "";
    std::snprintf(tail, sizeof(tail), "/%9.2fms (%9.2f GFLOPS %6.1f|%-7.1f GB/s)", GlobalCounters::time_sum_s * 1e3,
                  static_cast<double>(prg->estimates.ops) / (tt * 1e9), static_cast<double>(mem) / (tt * 1e9),
                  static_cast<double>(lds) / (tt * 1e9));
    std::string meta;
    if (!metadata.empty()) {
      std::vector<std::string> names;
      for (auto* m : metadata) names.push_back(py_str_repr(TRACEMETA >= 2 ? m->repr() : m->str()));
      meta = "[" + join(names, ", ") + "]";
    }
    char mem_s[64];
    std::snprintf(mem_s, sizeof(mem_s), " arg %2zu mem %5.2f GB ", bufs.size(),
                  static_cast<double>(GlobalCounters::mem_used.load()) / 1e9);
    size_t pad = 41 > ansilen(prg->display_name) ? 41 - ansilen(prg->display_name) : 0;
    std::cout << (jit              ? colored(head, "magenta")
                  : prg->first_run ? colored(head, "green")
                                   : std::string(head))
              << " " << prg->display_name << std::string(pad, ' ') << mem_s << (et ? "tm " + ptm + tail : std::string())
              << " " << meta << "\n";
  }
  prg->first_run = false;
  return et;
}

VarVals ExecItem::with_fixedvars(const VarVals& vars) const {
  if (fixedvars.empty()) return vars;
  VarVals all = vars;
  for (const auto& [k, v] : fixedvars) all[k] = v;
  return all;
}

// *** the kernels of one AST on the devices of a tuple, together ***

namespace {

int64_t device_num(const ExecItem& ei) {
  auto it = ei.fixedvars.find("_device_num");
  return it == ei.fixedvars.end() ? -1 : it->second;
}

// how many of items, from the first, are one kernel on the devices of a tuple: compiled runners of one AST, their
// _device_num 0, 1, 2 ... (schedule.cpp emits them so), each on its own device with every buffer there (so they
// share no memory)
size_t siblings(std::span<ExecItem> items) {
  auto* first = dynamic_cast<CompiledRunner*>(items[0].prg.get());
  if (first == nullptr || device_num(items[0]) != 0) return 1;
  std::unordered_set<std::string> devices;
  size_t k = 0;
  for (; k < items.size(); k++) {
    const ExecItem& ei = items[k];
    auto* r = dynamic_cast<CompiledRunner*>(ei.prg.get());
    if (r == nullptr || device_num(ei) != static_cast<int64_t>(k) || r->p.ast != first->p.ast ||
        !devices.insert(r->device).second)
      break;
    bool own = std::all_of(ei.bufs.begin(), ei.bufs.end(), [&](const Buffer& b) { return b.device() == r->device; });
    if (!own) break;
  }
  return std::max<size_t>(k, 1);
}

}  // namespace

size_t run_together(std::span<ExecItem> items, const VarVals& vars, bool do_update_stats, bool jit) {
  TG_ASSERT(!items.empty(), "run_together: no items");
  const size_t k = siblings(items);
  // DEBUG=2 and the profiler time each kernel alone
  if (k == 1 || DEBUG >= 2 || profile_enabled()) {
    for (size_t j = 0; j < k; j++) items[j].run(vars, false, do_update_stats, jit);
    return k;
  }
  std::vector<CompiledRunner::Args> args;  // what the shares read
  std::vector<Program::Shares> shares;
  std::vector<int> first_share;  // items[j]'s shares are [first_share[j], first_share[j+1])
  int threads = 0, total = 0;
  args.reserve(k);
  for (size_t j = 0; j < k; j++) {
    if (!jit)
      for (Buffer& b : items[j].bufs) b.ensure_allocated();
    auto& r = static_cast<CompiledRunner&>(*items[j].prg);
    std::optional<Program::Shares> s =
        r.shares(args.emplace_back(r.args(items[j].bufs, items[j].with_fixedvars(vars))));
    if (!s) {  // a device with a queue of its own (the first item tells, the devices of a tuple being of one kind)
      for (size_t i = 0; i < k; i++) items[i].run(vars, false, do_update_stats, jit);
      return k;
    }
    first_share.push_back(total);
    total += s->n, threads += s->threads;
    shares.push_back(std::move(*s));
  }
  first_share.push_back(total);
  parallel_for(
      total,
      [&](int i) {
        size_t j =
            static_cast<size_t>(std::upper_bound(first_share.begin(), first_share.end(), i) - first_share.begin()) - 1;
        shares[j].run(i - first_share[j]);
      },
      std::min(threads, cpu_threads()));
  for (size_t j = 0; j < k; j++) mark_written(items[j]);
  if (do_update_stats)
    for (size_t j = 0; j < k; j++) update_stats(*items[j].prg, std::nullopt);
  return k;
}

void run_schedule(std::vector<ScheduleItem> schedule, const VarVals& vars, bool do_update_stats) {
  compile_schedule(schedule);
  std::vector<ExecItem> eis;
  for (size_t i = 0; i < schedule.size();) {
    // an item and the siblings after it (the same kernel on the next devices of a tuple), lowered before they run
    eis.clear();
    do {
      const ScheduleItem& si = schedule[i++];
      try {
        eis.push_back(lower_schedule_item(si));
      } catch (...) {
        if (DEBUG >= 2) {
          std::cout << "error lowering " << si.ast.op() << "\ntensor operations:\n";
          for (auto* m : si.metadata) std::cout << "  " << m->repr() << "\n";
        }
        throw;
      }
      if (capturing != nullptr && CAPTURING) capturing->add(eis.back(), vars);
    } while (i < schedule.size() && schedule[i].ast == schedule[i - 1].ast && !schedule[i].fixedvars.empty());
    for (size_t j = 0; j < eis.size();) j += run_together(std::span(eis).subspan(j), vars, do_update_stats);
  }
}

}  // namespace tg
