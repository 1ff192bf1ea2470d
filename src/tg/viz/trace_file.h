#pragma once
// A VIZ trace read back (the file uop/trace.h writes), and what the explorer shows of it: tinygrad's viz/serve.py
// get_metadata (the /ctxs list) and get_details (a step's graphs, one per rewrite), computed from the trace's node
// records alone: no UOp is rebuilt.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tg/helpers/json.h"

namespace tg::viz {

struct TraceNode {
  std::string op, head, label, shape, arg, g;
  std::vector<int64_t> src;
  std::optional<int64_t> ref;
  bool is_float = false;
  std::optional<std::string> tag;
};
struct TraceRule {
  std::string file;
  int64_t line = 0;
  std::string pat;
};
struct TraceStep {
  std::string name, file;
  int64_t line = 0, depth = 0, sink = 0;
  bool bottom_up = false;
  std::vector<std::array<int64_t, 3>> matches;  // before, after, rule
};
struct TraceCtx {
  std::string name;
  std::optional<std::string> kernel_code;
  std::optional<int64_t> ref;
  std::vector<size_t> steps;
};

class Trace {
 public:
  // reads a trace file; a last line cut short (a program killed mid-write) is left out. Error on anything else bad.
  static Trace load(const std::string& path);

  const std::vector<TraceCtx>& ctxs() const { return ctxs_; }
  const TraceStep& step(size_t ctx, size_t idx) const;  // Error naming the numbers when out of range

  json::Value metadata() const;  // GET /ctxs: [{"name", ["kernel_code", "ref",] "steps": [...]}]
  // GET /ctxs?ctx=&idx=: the input graph, then the graph after each rewrite, each passed to emit as it is made
  // (emit returns false to stop: the browser went away); details() collects them
  void details(size_t ctx, size_t idx, const std::function<bool(json::Value)>& emit);
  std::vector<json::Value> details(size_t ctx, size_t idx);

  // for tests and the server: a graph's JSON as the explorer draws it (tinygrad's uop_to_json), its text
  json::Value graph_json(int64_t root) const;
  std::string repr(int64_t root) const;

 private:
  std::vector<int64_t> toposort(int64_t root) const;
  int64_t substitute(int64_t root, const std::unordered_map<int64_t, int64_t>& map);
  int64_t make(int64_t like, std::vector<int64_t> src);

  std::vector<TraceNode> nodes_;
  std::unordered_map<std::string, int64_t> keys_;  // head + sources -> node: the nodes a substitute makes
  std::vector<TraceRule> rules_;
  std::vector<TraceStep> steps_;
  std::vector<TraceCtx> ctxs_;
};

// difflib.unified_diff(a, b) of two texts' lines, as python prints it ("--- \n", "+++ \n", "@@ -1,3 +1,6 @@\n", then
// " line", "-line", "+line"); empty when they are equal
std::vector<std::string> unified_diff(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace tg::viz
