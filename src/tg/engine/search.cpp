#include "tg/engine/search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <set>
#include <sstream>

#include "tg/codegen/heuristic.h"
#include "tg/engine/realize.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/diskcache.h"
#include "tg/runtime/threadpool.h"

namespace tg {

const std::vector<Opt>& beam_actions() {
  static const std::vector<Opt> actions = [] {
    std::vector<Opt> a;
    for (int amt : {0, 2, 3, 4, 5, 7})
      for (int axis = 0; axis < 6; axis++) a.push_back({OptOps::UPCAST, axis, amt});
    for (int amt : {0, 4, 7})
      for (int axis = 0; axis < 5; axis++) a.push_back({OptOps::UNROLL, axis, amt});
    for (int amt : {2, 3, 4, 8, 13, 16, 29})
      for (int axis = 0; axis < 6; axis++) a.push_back({OptOps::LOCAL, axis, amt});
    for (int amt : {13, 16, 28, 29, 32, 49, 64, 256})
      for (int axis = 0; axis < 3; axis++) a.push_back({OptOps::GROUPTOP, axis, amt});
    for (int amt : {0, 4, 8, 16})
      for (int axis = 0; axis < 3; axis++) a.push_back({OptOps::GROUP, axis, amt});
    if (BEAM_PADTO)
      for (int axis = 0; axis < 7; axis++) a.push_back({OptOps::PADTO, axis, 32});
    a.push_back({OptOps::LOCAL, 0, 32});
    a.push_back({OptOps::LOCAL, 6, 2});
    const int use_tc = static_cast<int>(TC), tc_opt = static_cast<int>(TC_OPT.is_set() ? TC_OPT.value() : 2);
    a.push_back({OptOps::TC, 0, std::tuple<int, int, int>{-1, 0, use_tc}});
    for (int axis = 0; axis < 9; axis++)  // covers resnet's kernels (3 global x 3 reduce dims)
      a.push_back({OptOps::TC, axis, std::tuple<int, int, int>{-1, tc_opt, use_tc}});
    for (int a0 = 0; a0 < 5; a0++)
      for (int a1 = a0 + 1; a1 < 5; a1++) a.push_back({OptOps::SWAP, a0, a1});
    return a;
  }();
  return actions;
}

namespace {

// "op,axis,arg;..." for the disk cache: arg is empty for None, an int, or "a/b/c" for TC's tuple
std::optional<std::string> opts_key(const std::vector<Opt>& opts) {
  std::ostringstream os;
  for (const Opt& o : opts) {
    os << static_cast<int>(o.op) << "," << o.axis.value_or(-1) << ",";
    if (const int* i = std::get_if<int>(&o.arg)) os << *i;
    if (const auto* t = std::get_if<std::tuple<int, int, int>>(&o.arg))
      os << std::get<0>(*t) << "/" << std::get<1>(*t) << "/" << std::get<2>(*t);
    os << ";";
  }
  return os.str();
}
std::optional<std::vector<Opt>> parse_opts(const std::string& s) {
  std::vector<Opt> out;
  std::istringstream is(s);
  std::string item;
  while (std::getline(is, item, ';')) {
    int op = 0, axis = 0, n = 0, a = 0, b = 0, c = 0;
    if (std::sscanf(item.c_str(), "%d,%d,%n", &op, &axis, &n) != 2 || n == 0) return std::nullopt;
    if (op < static_cast<int>(OptOps::TC) || op > static_cast<int>(OptOps::THREAD)) return std::nullopt;
    const std::string rest = item.substr(static_cast<size_t>(n));
    OptArg arg;
    if (std::sscanf(rest.c_str(), "%d/%d/%d", &a, &b, &c) == 3)
      arg = std::tuple<int, int, int>{a, b, c};
    else if (!rest.empty() && std::sscanf(rest.c_str(), "%d", &a) == 1)
      arg = a;
    else if (!rest.empty())
      return std::nullopt;
    out.push_back({static_cast<OptOps>(op), axis < 0 ? std::nullopt : std::optional<int>(axis), arg});
  }
  return out;
}

// the candidates one action away from k, whose upcast and local amounts stay within BEAM_UPCAST_MAX / BEAM_LOCAL_MAX
std::vector<Kernel> kernel_actions(const Kernel& k) {
  std::vector<Kernel> out;
  const int64_t max_up = BEAM_UPCAST_MAX, max_lcl = BEAM_LOCAL_MAX;
  for (const Opt& a : beam_actions()) {
    Kernel k2 = k.copy();
    try {
      k2.apply_opt(a);
    } catch (const KernelOptError&) {
      continue;
    }
    sint up = 1, lcl = 1;
    const Shape& fs = k2.full_shape();
    for (int i = k2.first_upcast(); i < k2.shape_len(); i++) up *= fs[static_cast<size_t>(i)];
    for (int i = k2.global_dims(); i < k2.global_dims() + k2.local_dims + k2.group_for_reduces; i++)
      lcl *= fs[static_cast<size_t>(i)];
    if (up > max_up || lcl > max_lcl) continue;
    out.push_back(std::move(k2));
  }
  return out;
}

// scratch buffers for every DEFINE_GLOBAL of the kernel, by its index
std::vector<Buffer> scratch_buffers(const Kernel& k) {
  std::vector<Buffer> bufs;
  for (const UOp& u : k.ast.toposort())
    if (u.op() == Ops::DEFINE_GLOBAL) {
      auto i = static_cast<size_t>(as_int(u.arg<ConstValue>()));
      if (bufs.size() <= i) bufs.resize(i + 1);
      bufs[i] = Buffer(k.opts.device, std::max<int64_t>(u.dtype().size(), 1), u.dtype().base());
      bufs[i].allocate();
    }
  return bufs;
}

}  // namespace

Kernel beam_search(const Kernel& k0, Renderer& r, int amt) {
  // the hand-coded kernel: its opts are part of the key, since the result may be it, with its Lowering (a CPU tile's
  // vector ALUs), which a changed heuristic may change; so a changed heuristic searches again
  Kernel hand = k0.copy();
  apply_hand_coded(hand);
  const std::string key = cat(k0.opts.device, ":", k0.ast.key(), ":", amt, ":", opts_repr(hand.applied_opts));
  const bool cache = CACHELEVEL >= 1 && !IGNORE_BEAM_CACHE;
  if (cache)
    if (auto hit = diskcache_get("beam_search", key))
      if (auto opts = parse_opts(*hit)) {
        if (*opts == hand.applied_opts) return hand;
        try {
          return Kernel(k0).apply_opts(*opts);
        } catch (const KernelOptError&) {  // a stale entry: search again
        }
      }
  const int64_t debug = DEBUG;
  std::vector<Buffer> bufs = scratch_buffers(k0);
  std::set<std::string> seen;  // rendered sources already timed
  // the candidates' runners, compiled COMPILE_THREADS at a time (null: it doesn't render or compile, or renders as
  // one already timed)
  auto compile_all = [&](const std::vector<Kernel>& ks) {
    std::vector<std::shared_ptr<CompiledRunner>> runners(ks.size());
    parallel_each(ks.size(), compile_threads(), [&](size_t i) {
      try {
        runners[i] = compile_kernel(ks[i], r, true);
      } catch (const std::exception& e) {  // a candidate that doesn't render or compile is no candidate
        if (BEAM_DEBUG) std::cout << "BEAM: " << opts_repr(ks[i].applied_opts) << ": " << e.what() << "\n";
      }
    });
    for (auto& runner : runners)
      if (runner && !seen.insert(runner->p.src).second) runner = nullptr;
    return runners;
  };
  // a runner's time as it will run (its threads included): the best of 3, or of 1 when slower than early_stop
  auto time_of = [&](CompiledRunner& runner, double early_stop) -> double {
    std::vector<Buffer> args;
    for (int64_t g : runner.p.globals) args.push_back(bufs.at(static_cast<size_t>(g)));
    double best = INFINITY;
    for (int i = 0; i < 3 && (i == 0 || best <= early_stop); i++)
      best = std::min(best, runner(args, {}, true).value_or(INFINITY));
    return best;
  };
  // candidates -> (kernel, time) of those that compile, sorted fastest first
  auto timed_of = [&](std::vector<Kernel> ks, double early_stop) {
    std::vector<std::shared_ptr<CompiledRunner>> runners = compile_all(ks);
    std::vector<std::pair<Kernel, double>> out;
    for (size_t i = 0; i < ks.size(); i++)
      if (runners[i])
        if (double t = time_of(*runners[i], early_stop); t < INFINITY) out.push_back({std::move(ks[i]), t});
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.second < b.second; });
    return out;
  };
  // the first beam: the kernel as it is, and with the hand-coded opts (CPU tiles included), so BEAM's pick is never
  // slower than no BEAM (only the hand-coded one when it has no opts: a plain CPU loop, lowered as such)
  std::vector<std::pair<Kernel, double>> beam =
      timed_of(hand.applied_opts.empty() ? std::vector<Kernel>{hand} : std::vector<Kernel>{k0.copy(), hand}, INFINITY);
  TG_CHECK(!beam.empty(), "BEAM: kernel ", k0.name(), " compiles neither unoptimized nor with the hand-coded opts");
  // a kernel 3x slower than the best goes no further (it isn't timed again either): with the hand-coded opts in the
  // first beam, the unoptimized kernel's children would be most of a search's time and none of its result
  auto prune = [](std::vector<std::pair<Kernel, double>>& b) {
    while (b.size() > 1 && b.back().second > b[0].second * 3) b.pop_back();
  };
  prune(beam);
  const double min_progress = static_cast<double>(BEAM_MIN_PROGRESS) / 100.0 / 1e6;  // 0.01 us
  auto st = std::chrono::steady_clock::now();
  while (true) {
    std::vector<Kernel> cands;
    for (const auto& [k, t] : beam)
      for (Kernel& cand : kernel_actions(k)) {
        if (BEAM_DEBUG >= 2) std::cout << "BEAM: try " << opts_repr(cand.applied_opts) << "\n";
        cands.push_back(std::move(cand));
      }
    std::vector<std::pair<Kernel, double>> timed = timed_of(std::move(cands), beam[0].second * 3);
    bool exiting = timed.empty() || beam[0].second - timed[0].second < min_progress;
    if (!exiting) {
      beam.assign(timed.begin(), timed.begin() + std::min<std::ptrdiff_t>(amt, std::ssize(timed)));
      prune(beam);
    }
    if (debug >= 2)
      std::cout << cat(time_to_str(std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count()),
                       ": BEAM ", k0.name(), " ", time_to_str(beam[0].second), " from ", timed.size(), " candidates ",
                       opts_repr(beam[0].first.applied_opts), "\n");
    if (exiting) break;
  }
  Kernel best = std::move(beam[0].first);
  if (std::optional<std::string> v = opts_key(best.applied_opts); cache && v) diskcache_put("beam_search", key, *v);
  return best;
}

}  // namespace tg
