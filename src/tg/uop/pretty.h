#pragma once
// tinygrad's pretty_print over any DAG, iteratively: the multi-line UOp(...) text, a node used more than once named
// xN:= where it first appears and xN after. UOp::repr prints live nodes with it; tinygrad-viz prints a trace's nodes.
//   head(n): "UOp(Ops.ADD, dtypes.int, arg=None, src=("   nsrc(n): how many sources   child(n, i): the i-th
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tg {

template <class N, class Head, class NSrc, class Child>
std::string pretty_print(const N& root, Head&& head, NSrc&& nsrc, Child&& child) {
  struct Label {
    int idx, count;
    bool printed;
  };
  std::unordered_map<N, Label> cache;
  {  // pre-order discovery numbering over the whole DAG; count = incoming edges
    std::vector<std::pair<N, size_t>> st{{root, 0}};
    while (!st.empty()) {
      auto& [n, i] = st.back();
      if (i == nsrc(n)) {
        st.pop_back();
        continue;
      }
      N c = child(n, i++);
      int next = static_cast<int>(cache.size());
      auto [it, fresh] = cache.try_emplace(c, Label{next, 0, false});
      if (++it->second.count == 1) st.push_back({c, 0});
    }
    cache.try_emplace(root, Label{0, 0, false});
  }
  std::string out;
  struct Frame {
    N n;
    int d;
    size_t i;
  };
  std::vector<Frame> st;
  auto enter = [&](const N& n, int d) {
    Label& l = cache.at(n);
    if (l.printed) {
      out += std::string(static_cast<size_t>(d), ' ') + " x" + std::to_string(l.idx);
      return false;
    }
    l.printed = true;
    out += std::string(static_cast<size_t>(d), ' ');
    if (l.count > 1) out += "x" + std::to_string(l.idx) + ":=";
    out += head(n);
    st.push_back({n, d, 0});
    return true;
  };
  enter(root, 0);
  while (!st.empty()) {
    Frame& f = st.back();
    if (f.i < nsrc(f.n)) {
      N c = child(f.n, f.i++);
      int d = f.d + 2;
      out += "\n";
      if (!enter(c, d)) out += ",";
    } else {
      out += "))";
      st.pop_back();
      if (!st.empty()) out += ",";
    }
  }
  return out;
}

}  // namespace tg
