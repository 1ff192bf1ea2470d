#include "tg/viz/trace_file.h"

#include <algorithm>
#include <fstream>
#include <unordered_set>

#include "tg/helpers/helpers.h"
#include "tg/uop/pretty.h"

namespace tg::viz {

namespace {

// the explorer's colour of a node, by op (tinygrad's uops_colors)
std::string color_of(const std::string& op) {
  static const std::unordered_map<std::string, std::string> colors = {
      {"LOAD", "#ffc0c0"},        {"STORE", "#87CEEB"},         {"CONST", "#e0e0e0"},        {"VCONST", "#e0e0e0"},
      {"REDUCE", "#FF5B5B"},      {"DEFINE_GLOBAL", "#ffe0b0"}, {"DEFINE_LOCAL", "#ffe0d0"}, {"DEFINE_ACC", "#f0ffe0"},
      {"REDUCE_AXIS", "#FF6B6B"}, {"RANGE", "#c8a0e0"},         {"ASSIGN", "#909090"},       {"BARRIER", "#ff8080"},
      {"IF", "#c8b0c0"},          {"SPECIAL", "#c0c0ff"},       {"INDEX", "#e8ffa0"},        {"WMMA", "#efefc0"},
      {"VIEW", "#C8F9D4"},        {"MULTI", "#f6ccff"},         {"KERNEL", "#3e7f55"},       {"IGNORE", "#00C000"},
      {"THREEFRY", "#ffff80"},    {"BUFFER_VIEW", "#E5EAFF"},   {"BLOCK", "#C4A484"},        {"BLOCKEND", "#C4A4A4"},
      {"BUFFER", "#B0BDFF"},      {"COPY", "#a040a0"},          {"FUSE", "#FFa500"},         {"ALLREDUCE", "#ff40a0"},
      {"GBARRIER", "#FFC14D"},    {"MSELECT", "#d040a0"},       {"MSTACK", "#d040a0"},
  };
  static const std::unordered_set<std::string> movement = {"RESHAPE", "PERMUTE", "EXPAND", "PAD", "SHRINK", "FLIP"};
  static const std::unordered_set<std::string> alu = {"EXP2", "LOG2", "SIN", "SQRT", "RECIP", "NEG", "TRUNC", "ADD",
                                                      "MUL",  "SHL",  "SHR", "IDIV", "MAX",   "MOD", "CMPLT", "CMPNE",
                                                      "XOR",  "OR",   "AND", "SUB",  "FDIV",  "POW", "WHERE", "MULACC"};
  if (auto it = colors.find(op); it != colors.end()) return it->second;
  if (movement.count(op)) return "#D8F9E4";
  if (alu.count(op)) return "#ffffc0";
  return "#ffffff";
}

// ops whose label leaves the shape out (tinygrad: VIEW, BUFFER, KERNEL, ASSIGN, COPY, SINK and GroupOp.Buffer)
bool shapeless(const std::string& op) {
  static const std::unordered_set<std::string> s = {"VIEW", "BUFFER", "KERNEL", "ASSIGN", "COPY",      "SINK",
                                                    "LOAD", "STORE",  "VALID",  "CONST",  "DEFINE_VAR"};
  return s.count(op) != 0;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find('\n', i);
    if (j == std::string::npos) j = s.size();
    out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  if (!s.empty() && s.back() == '\n') out.pop_back();
  return out;
}

std::string source_line(const std::string& file, int64_t line) {
  static std::unordered_map<std::string, std::vector<std::string>> files;
  auto it = files.find(file);
  if (it == files.end()) {
    std::vector<std::string> lines;
    std::ifstream f(file);
#ifdef TG_SOURCE_DIR
    if (!f && !file.empty() && file[0] != '/') f.open(std::string(TG_SOURCE_DIR) + "/" + file);
#endif
    for (std::string l; std::getline(f, l);) lines.push_back(l);
    it = files.emplace(file, std::move(lines)).first;
  }
  if (line < 1 || static_cast<size_t>(line) > it->second.size()) return "";
  std::string l = it->second[static_cast<size_t>(line - 1)];
  size_t b = l.find_first_not_of(" \t"), e = l.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : l.substr(b, e - b + 1);
}

const json::Value& member(const json::Value& v, const char* key, size_t lineno) {
  const json::Value* m = v.find(key);
  if (m == nullptr) throw Error(cat("VIZ trace: line ", lineno, " has no \"", key, "\""));
  return *m;
}

}  // namespace

Trace Trace::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(cat("VIZ trace: cannot open ", path));
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  const bool complete_last = [&] {  // the file ends with a newline: its last line is whole
    std::ifstream g(path, std::ios::binary | std::ios::ate);
    if (g.tellg() <= 0) return false;
    g.seekg(-1, std::ios::end);
    return g.get() == '\n';
  }();
  if (lines.empty() || lines[0] != "{\"tinygrad_viz_trace\":1}")
    throw Error(cat("VIZ trace: ", path, " is not a tinygrad.cpp VIZ trace (no header line)"));
  Trace t;
  for (size_t i = 1; i < lines.size(); i++) {
    json::Value v;
    try {
      v = json::parse(lines[i]);
    } catch (const Error& e) {
      if (i + 1 == lines.size() && !complete_last) break;  // cut short by a kill: the rest is readable
      throw Error(cat("VIZ trace: ", path, " line ", i + 1, ": ", e.what()));
    }
    if (const json::Value* n = v.find("n")) {
      const json::Array& a = n->as_array();
      if (a.size() < 11 || a[0].as_int() != static_cast<int64_t>(t.nodes_.size()))
        throw Error(cat("VIZ trace: ", path, " line ", i + 1, ": a node record out of order"));
      TraceNode node{a[1].as_string(),
                     a[2].as_string(),
                     a[3].as_string(),
                     a[4].as_string(),
                     a[6].as_string(),
                     a[7].as_string(),
                     {},
                     {},
                     a[9].as_bool(),
                     {}};
      for (const json::Value& s : a[5].as_array()) {
        if (s.as_int() < 0 || s.as_int() >= a[0].as_int())
          throw Error(cat("VIZ trace: ", path, " line ", i + 1, ": a source numbered ", s.as_int()));
        node.src.push_back(s.as_int());
      }
      if (!a[8].is_null()) node.ref = a[8].as_int();
      if (!a[10].is_null()) node.tag = a[10].as_string();
      std::string key = node.head;
      for (int64_t s : node.src) key += cat(",", s);
      t.keys_.emplace(key, static_cast<int64_t>(t.nodes_.size()));
      t.nodes_.push_back(std::move(node));
    } else if (const json::Value* m = v.find("m")) {
      const json::Array& a = m->as_array();
      if (a.size() != 4) throw Error(cat("VIZ trace: ", path, " line ", i + 1, ": a match needs 4 numbers"));
      size_t s = static_cast<size_t>(a[0].as_int());
      int64_t b = a[1].as_int(), af = a[2].as_int(), r = a[3].as_int();
      auto node_ok = [&](int64_t x) { return x >= 0 && x < static_cast<int64_t>(t.nodes_.size()); };
      if (s >= t.steps_.size() || !node_ok(b) || !node_ok(af) || r < 0 || r >= static_cast<int64_t>(t.rules_.size()))
        throw Error(cat("VIZ trace: ", path, " line ", i + 1, ": a match of unknown numbers"));
      t.steps_[s].matches.push_back({b, af, r});
    } else if (const json::Value* r = v.find("rule")) {
      if (r->as_int() != static_cast<int64_t>(t.rules_.size()))
        throw Error(cat("VIZ trace: ", path, " line ", i + 1, ": a rule record out of order"));
      t.rules_.push_back({member(v, "file", i + 1).as_string(), member(v, "line", i + 1).as_int(),
                          member(v, "pat", i + 1).as_string()});
    } else if (const json::Value* s = v.find("step")) {
      size_t c = static_cast<size_t>(member(v, "ctx", i + 1).as_int());
      int64_t sink = member(v, "sink", i + 1).as_int();
      if (s->as_int() != static_cast<int64_t>(t.steps_.size()) || c >= t.ctxs_.size() || sink < 0 ||
          sink >= static_cast<int64_t>(t.nodes_.size()))
        throw Error(cat("VIZ trace: ", path, " line ", i + 1, ": a step of unknown numbers"));
      t.ctxs_[c].steps.push_back(t.steps_.size());
      t.steps_.push_back({member(v, "name", i + 1).as_string(),
                          member(v, "file", i + 1).as_string(),
                          member(v, "line", i + 1).as_int(),
                          member(v, "depth", i + 1).as_int(),
                          sink,
                          member(v, "bottom_up", i + 1).as_bool(),
                          {}});
    } else if (const json::Value* c = v.find("ctx")) {
      size_t id = static_cast<size_t>(c->as_int());
      if (id > t.ctxs_.size()) throw Error(cat("VIZ trace: ", path, " line ", i + 1, ": context ", id, " skips"));
      if (id == t.ctxs_.size()) t.ctxs_.emplace_back();
      if (const json::Value* n = v.find("name")) t.ctxs_[id].name = n->as_string();
      if (const json::Value* k = v.find("kernel_code")) t.ctxs_[id].kernel_code = k->as_string();
      if (const json::Value* k = v.find("ref")) t.ctxs_[id].ref = k->as_int();
    } else {
      throw Error(cat("VIZ trace: ", path, " line ", i + 1, ": an unknown record"));
    }
  }
  return t;
}

const TraceStep& Trace::step(size_t ctx, size_t idx) const {
  if (ctx >= ctxs_.size()) throw Error(cat("VIZ: no context ", ctx, " (the trace has ", ctxs_.size(), ")"));
  if (idx >= ctxs_[ctx].steps.size())
    throw Error(cat("VIZ: context ", ctx, " has no step ", idx, " (it has ", ctxs_[ctx].steps.size(), ")"));
  return steps_[ctxs_[ctx].steps[idx]];
}

json::Value Trace::metadata() const {
  json::Array out;
  for (const TraceCtx& c : ctxs_) {
    json::Array steps;
    for (size_t s : c.steps) {
      const TraceStep& st = steps_[s];
      steps.push_back(json::Object{{"name", st.name},
                                   {"loc", json::Array{st.file, st.line}},
                                   {"depth", st.depth},
                                   {"match_count", st.matches.size()},
                                   {"code_line", source_line(st.file, st.line)}});
    }
    json::Object o{{"name", c.name}};
    if (c.kernel_code) o.push_back({"kernel_code", *c.kernel_code});
    if (c.kernel_code || c.ref) o.push_back({"ref", c.ref ? json::Value(*c.ref) : json::Value()});
    o.push_back({"steps", std::move(steps)});
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<int64_t> Trace::toposort(int64_t root) const {
  std::vector<int64_t> out;
  std::unordered_set<int64_t> done;
  std::vector<std::pair<int64_t, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [u, visited] = stack.back();
    stack.pop_back();
    if (done.count(u)) continue;
    if (!visited) {
      stack.push_back({u, true});
      const auto& src = nodes_[static_cast<size_t>(u)].src;
      for (auto it = src.rbegin(); it != src.rend(); ++it) stack.push_back({*it, false});
    } else if (done.insert(u).second) {
      out.push_back(u);
    }
  }
  return out;
}

json::Value Trace::graph_json(int64_t root) const {
  std::vector<int64_t> topo = toposort(root);
  std::unordered_set<int64_t> in_graph(topo.begin(), topo.end()), excluded;
  std::unordered_map<int64_t, std::vector<int64_t>> children;
  for (int64_t u : topo)
    for (int64_t s : nodes_[static_cast<size_t>(u)].src) children[s].push_back(u);
  for (int64_t u : topo) {
    const TraceNode& n = nodes_[static_cast<size_t>(u)];
    // DEVICE, CONST and UNIQUE are printed in their users' labels; so is a CONST's VIEW no other node uses
    if (n.op == "DEVICE" || n.op == "CONST" || n.op == "UNIQUE") excluded.insert(u);
    if (n.op == "CONST" && !n.src.empty()) {
      const auto& users = children[n.src[0]];
      if (std::all_of(users.begin(), users.end(),
                      [&](int64_t c) { return nodes_[static_cast<size_t>(c)].op == "CONST"; }))
        excluded.insert(n.src[0]);
    }
  }
  json::Object graph;
  for (int64_t u : topo) {
    if (excluded.count(u)) continue;
    const TraceNode& n = nodes_[static_cast<size_t>(u)];
    std::string label = n.label;
    json::Array src;
    for (size_t i = 0; i < n.src.size(); i++) {
      const TraceNode& x = nodes_[static_cast<size_t>(n.src[i])];
      if (!excluded.count(n.src[i])) {
        src.push_back(n.src[i]);
        continue;
      }
      if (x.op == "CONST" && n.is_float && !x.g.empty())
        label += cat("\nCONST", i, " ", x.g);
      else
        label += cat("\n", x.op, i, " ", x.arg);
    }
    if (!shapeless(n.op) && !n.shape.empty()) label += "\n" + n.shape;
    graph.push_back({std::to_string(u), json::Object{{"label", label},
                                                     {"src", std::move(src)},
                                                     {"color", color_of(n.op)},
                                                     {"ref", n.ref ? json::Value(*n.ref) : json::Value()},
                                                     {"tag", n.tag ? json::Value(*n.tag) : json::Value()}}});
  }
  return graph;
}

std::string Trace::repr(int64_t root) const {
  return pretty_print(
      root, [&](int64_t n) { return nodes_[static_cast<size_t>(n)].head; },
      [&](int64_t n) { return nodes_[static_cast<size_t>(n)].src.size(); },
      [&](int64_t n, size_t i) { return nodes_[static_cast<size_t>(n)].src[i]; });
}

int64_t Trace::make(int64_t like, std::vector<int64_t> src) {
  TraceNode n = nodes_[static_cast<size_t>(like)];
  if (n.src == src) return like;
  n.src = std::move(src);
  std::string key = n.head;
  for (int64_t s : n.src) key += cat(",", s);
  auto [it, fresh] = keys_.try_emplace(key, static_cast<int64_t>(nodes_.size()));
  if (fresh) nodes_.push_back(std::move(n));
  return it->second;
}

// root with every key of map replaced, bottom up, as UOp.substitute: a replacement's own graph is substituted too
int64_t Trace::substitute(int64_t root, const std::unordered_map<int64_t, int64_t>& map) {
  std::unordered_map<int64_t, int64_t> done;
  auto replaced = [&](int64_t u) {  // follow the map to its end (a cycle stops where it closes)
    std::unordered_set<int64_t> seen{u};
    for (auto it = map.find(u); it != map.end() && seen.insert(it->second).second; it = map.find(it->second))
      u = it->second;
    return u;
  };
  std::vector<int64_t> stack{root};
  while (!stack.empty()) {
    int64_t u = stack.back();
    if (done.count(u)) {
      stack.pop_back();
      continue;
    }
    int64_t r = replaced(u);
    bool ready = true;
    for (int64_t s : nodes_[static_cast<size_t>(r)].src)
      if (!done.count(s)) ready = false, stack.push_back(s);
    if (!ready) continue;
    stack.pop_back();
    std::vector<int64_t> src;
    for (int64_t s : nodes_[static_cast<size_t>(r)].src) src.push_back(done.at(s));
    done[u] = make(r, std::move(src));
  }
  return done.at(root);
}

std::vector<json::Value> Trace::details(size_t ctx, size_t idx) {
  std::vector<json::Value> out;
  details(ctx, idx, [&](json::Value v) {
    out.push_back(std::move(v));
    return true;
  });
  return out;
}

void Trace::details(size_t ctx, size_t idx, const std::function<bool(json::Value)>& emit) {
  const TraceStep& st = step(ctx, idx);  // make() grows nodes_, never steps_
  int64_t next_sink = st.sink;
  if (!emit(json::Object{{"graph", graph_json(next_sink)},
                         {"uop", repr(next_sink)},
                         {"changed_nodes", nullptr},
                         {"diff", nullptr},
                         {"upat", nullptr}}))
    return;
  std::unordered_map<int64_t, int64_t> replaces;
  for (const auto& [u0, u1, r] : st.matches) {
    replaces[u0] = u1;
    int64_t new_sink = substitute(next_sink, replaces);
    json::Value graph = graph_json(new_sink);
    json::Array changed;
    for (int64_t x : toposort(u1))
      if (graph.find(std::to_string(x)) != nullptr) changed.push_back(x);
    json::Array diff;
    for (std::string& l : unified_diff(split_lines(repr(u0)), split_lines(repr(u1)))) diff.push_back(std::move(l));
    const TraceRule& rule = rules_[static_cast<size_t>(r)];
    if (!emit(json::Object{{"graph", std::move(graph)},
                           {"uop", repr(new_sink)},
                           {"changed_nodes", std::move(changed)},
                           {"diff", std::move(diff)},
                           {"upat", json::Array{json::Array{rule.file, rule.line}, rule.pat}}}))
      return;
    if (!st.bottom_up) next_sink = new_sink;
  }
}

// *** difflib.unified_diff ***

std::vector<std::string> unified_diff(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  struct Op {
    char tag;  // e equal, r replace, d delete, i insert
    size_t i1, i2, j1, j2;
  };
  // opcodes: the common prefix and suffix, and a longest common subsequence of the middle (when it is small)
  size_t pre = 0, suf = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) pre++;
  while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) suf++;
  const size_t n = a.size() - pre - suf, m = b.size() - pre - suf;
  std::vector<Op> ops;
  auto push = [&](char tag, size_t i1, size_t i2, size_t j1, size_t j2) {
    if (i1 == i2 && j1 == j2) return;
    if (!ops.empty() && ops.back().tag == tag && ops.back().i2 == i1 && ops.back().j2 == j1) {
      ops.back().i2 = i2, ops.back().j2 = j2;
      return;
    }
    ops.push_back({tag, i1, i2, j1, j2});
  };
  push('e', 0, pre, 0, pre);
  if (n * m <= 4'000'000) {
    std::vector<uint32_t> L((n + 1) * (m + 1), 0);  // L[i][j]: LCS length of a[pre+i:], b[pre+j:] (middles)
    auto at = [&](size_t i, size_t j) -> uint32_t& { return L[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;)
      for (size_t j = m; j-- > 0;)
        at(i, j) = a[pre + i] == b[pre + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    size_t i = 0, j = 0, di = 0, dj = 0;  // a pending run of differences starts at (di, dj)
    auto flush = [&] {
      char tag = i > di && j > dj ? 'r' : i > di ? 'd' : 'i';
      push(tag, pre + di, pre + i, pre + dj, pre + j);
    };
    while (i < n || j < m) {
      if (i < n && j < m && a[pre + i] == b[pre + j]) {
        flush();
        push('e', pre + i, pre + i + 1, pre + j, pre + j + 1);
        i++, j++, di = i, dj = j;
      } else if (j < m && (i == n || at(i, j + 1) >= at(i + 1, j))) {
        j++;
      } else {
        i++;
      }
    }
    flush();
  } else {
    push(n && m ? 'r' : n ? 'd' : 'i', pre, pre + n, pre, pre + m);
  }
  push('e', pre + n, a.size(), pre + m, b.size());
  if (ops.size() == 1 && ops[0].tag == 'e') return {};
  if (ops.empty()) return {};
  // difflib's get_grouped_opcodes(3)
  const size_t ctx = 3;
  if (ops.front().tag == 'e') {
    Op& o = ops.front();
    o.i1 = std::max(o.i1, o.i2 > ctx ? o.i2 - ctx : 0), o.j1 = std::max(o.j1, o.j2 > ctx ? o.j2 - ctx : 0);
  }
  if (ops.back().tag == 'e') {
    Op& o = ops.back();
    o.i2 = std::min(o.i2, o.i1 + ctx), o.j2 = std::min(o.j2, o.j1 + ctx);
  }
  std::vector<std::vector<Op>> groups(1);
  for (Op o : ops) {
    if (o.tag == 'e' && o.i2 - o.i1 > 2 * ctx) {
      groups.back().push_back({'e', o.i1, std::min(o.i2, o.i1 + ctx), o.j1, std::min(o.j2, o.j1 + ctx)});
      groups.emplace_back();
      o.i1 = std::max(o.i1, o.i2 - ctx), o.j1 = std::max(o.j1, o.j2 - ctx);
    }
    groups.back().push_back(o);
  }
  if (groups.back().size() == 1 && groups.back()[0].tag == 'e') groups.pop_back();
  auto range = [](size_t start, size_t stop) {
    size_t begin = start + 1, len = stop - start;
    if (len == 1) return std::to_string(begin);
    if (len == 0) begin--;
    return cat(begin, ",", len);
  };
  std::vector<std::string> out{"--- \n", "+++ \n"};
  for (const auto& g : groups) {
    if (g.empty()) continue;
    out.push_back(cat("@@ -", range(g.front().i1, g.back().i2), " +", range(g.front().j1, g.back().j2), " @@\n"));
    for (const Op& o : g) {
      if (o.tag == 'e') {
        for (size_t k = o.i1; k < o.i2; k++) out.push_back(" " + a[k]);
        continue;
      }
      if (o.tag == 'r' || o.tag == 'd')
        for (size_t k = o.i1; k < o.i2; k++) out.push_back("-" + a[k]);
      if (o.tag == 'r' || o.tag == 'i')
        for (size_t k = o.j1; k < o.j2; k++) out.push_back("+" + b[k]);
    }
  }
  return out;
}

}  // namespace tg::viz
