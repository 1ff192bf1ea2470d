// runtime: the PYTHON device's program text (what its renderer writes and its program factory reads back), the
// counterpart of the reference's pickled uop list. One uop a line, in program order:
//   <index> <OP> <dtype> (<source indices>) <arg>
// then the uops the program reaches only through an arg or as an operand it does not list (a symbolic SPECIAL's size),
// as lines that start with "aux". Reading it rebuilds the same (interned) uops.
//   dtype: float, float:4 (a vector), float*16 (a pointer to 16), float*16L (local), float*-1@4 (4 pointers)
//   arg:   -  b1  i-3  u18446744073709551615  f0.5  F7ff8000000000000 (a non-finite double's bits)  "text"  oADD
//          (i0 i1) (a tuple)  p(0 1 2 3) (pairs)  var("n" i1 i8)  special("gidx0" 4 -|@7)  reduce(oADD (i2) 0)
//          wmma("name" 8 16 16 half float "CUDA" 32 p(..) p(..) p(..) (..))  kernel("E_4" 0 1 0 0 0 0)  uop(@7)
//          ?  (an arg with no text form: the program can't be read back)
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <unordered_map>

#include "tg/runtime/ops_python.h"
#include "tg/uop/kernel_info.h"
#include "tg/uop/uop.h"
#include "tg/uop/wmma_arg.h"

namespace tg {

namespace {

std::string dtype_text(DType d) {
  if (d.is_image()) return "?";
  DType b = d.is_ptr() ? d.base() : d;
  std::string s = b.scalar().repr().substr(7);  // dtypes.float -> float
  if (b.count() > 1) s += cat(":", b.count());
  if (d.is_ptr()) s += cat("*", d.size(), d.local() ? "L" : "", d.v() > 1 ? cat("@", d.v()) : "");
  return s;
}

std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return o + "\"";
}

std::string const_text(const ConstValue& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "b1" : "b0";
  if (const int64_t* i = std::get_if<int64_t>(&v)) return cat("i", *i);
  if (const uint64_t* u = std::get_if<uint64_t>(&v)) return cat("u", *u);
  const double f = std::get<double>(v);
  char buf[40];
  if (!std::isfinite(f)) {
    auto r = std::to_chars(buf, buf + sizeof(buf), std::bit_cast<uint64_t>(f), 16);
    return "F" + std::string(buf, r.ptr);
  }
  auto r = std::to_chars(buf, buf + sizeof(buf), f);  // the shortest text that reads back to the same double
  return "f" + std::string(buf, r.ptr);
}

std::string ints_text(const std::vector<int64_t>& xs) {
  std::string s = "(";
  for (size_t i = 0; i < xs.size(); i++) s += cat(i ? " " : "", "i", xs[i]);
  return s + ")";
}

std::string pairs_text(const PairTuple& ps) {
  std::string s = "p(";
  for (size_t i = 0; i < ps.size(); i++) s += cat(i ? " " : "", ps[i].first, " ", ps[i].second);
  return s + ")";
}

// the text of an arg; ref(u) gives the index of a uop an arg holds
template <class Ref>
std::string arg_text(const Arg& a, Ref ref) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "-";
        if constexpr (std::is_same_v<T, ConstValue>) return const_text(x);
        if constexpr (std::is_same_v<T, std::string>) return quoted(x);
        if constexpr (std::is_same_v<T, Ops>) return cat("o", op_name(x));
        if constexpr (std::is_same_v<T, VarArg>)
          return cat("var(", quoted(x.name), " ", const_text(x.min), " ", const_text(x.max), ")");
        if constexpr (std::is_same_v<T, SpecialArg>) {
          const UOpArg* sym = x.sym ? dynamic_cast<const UOpArg*>(x.sym.get()) : nullptr;
          if (x.sym && !sym) return "?";
          return cat("special(", quoted(x.name), " ", x.size, " ", sym ? cat("@", ref(sym->u)) : "-", ")");
        }
        if constexpr (std::is_same_v<T, ReduceArg>)
          return cat("reduce(o", op_name(x.op), " ", ints_text(x.axes), " ", x.fuse ? 1 : 0, ")");
        if constexpr (std::is_same_v<T, Tuple>) {
          std::string s = "(";
          for (size_t i = 0; i < x.size(); i++) s += cat(i ? " " : "", const_text(x[i]));
          return s + ")";
        }
        if constexpr (std::is_same_v<T, PairTuple>) return pairs_text(x);
        if constexpr (std::is_same_v<T, ObjectArg>) {
          if (const WmmaArg* w = dynamic_cast<const WmmaArg*>(x.get()))
            return cat("wmma(", quoted(w->name), " ", w->dims[0], " ", w->dims[1], " ", w->dims[2], " ",
                       dtype_text(w->dtype_in), " ", dtype_text(w->dtype_out), " ", quoted(w->device), " ", w->threads,
                       " ", pairs_text(w->upcast_axes[0]), " ", pairs_text(w->upcast_axes[1]), " ",
                       pairs_text(w->upcast_axes[2]), " ", ints_text(w->reduce_axes), ")");
          if (const KernelInfo* k = dynamic_cast<const KernelInfo*>(x.get()))
            return cat("kernel(", quoted(k->name), " ", k->local_dims, " ", k->upcasted, " ",
                       k->dont_use_locals ? 1 : 0, " ", k->lowering.vector_alus ? 1 : 0, " ",
                       k->lowering.deferred_horizontal_reduce ? 1 : 0, " ",
                       k->lowering.polynomial_transcendentals ? 1 : 0, " ", k->lowering.integer_block_sums ? 1 : 0, " ",
                       k->lowering.reassociate_reduces ? 1 : 0, ")");
          if (const UOpArg* u = dynamic_cast<const UOpArg*>(x.get())) return cat("uop(@", ref(u->u), ")");
          return "?";
        }
      },
      a);
}

// the uops an arg holds (a SPECIAL's symbolic size, a UOpArg)
std::vector<UOp> arg_uops(const Arg& a) {
  const ObjectArg* o = std::get_if<ObjectArg>(&a);
  if (const SpecialArg* s = std::get_if<SpecialArg>(&a)) o = s->sym ? &s->sym : nullptr;
  const UOpArg* u = o ? dynamic_cast<const UOpArg*>(o->get()) : nullptr;
  return u ? std::vector<UOp>{u->u} : std::vector<UOp>{};
}

// *** reading ***

struct Reader {
  std::string_view s;
  size_t pos = 0;
  const std::string& name;

  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1 + static_cast<size_t>(std::count(s.begin(), s.begin() + static_cast<ptrdiff_t>(pos), '\n'));
    throw ValueError(cat("PYTHON: ", name, ": not a PYTHON program: ", what, " at line ", line));
  }
  void skip_space() {
    while (pos < s.size()) {
      if (s[pos] == '#')  // a comment runs to the end of the line
        while (pos < s.size() && s[pos] != '\n') pos++;
      else if (std::isspace(static_cast<unsigned char>(s[pos])))
        pos++;
      else
        break;
    }
  }
  bool at_end() {
    skip_space();
    return pos >= s.size();
  }
  bool peek(char c) {
    skip_space();
    return pos < s.size() && s[pos] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(cat("expected '", c, "'"));
    pos++;
  }
  // a run of name characters: letters, digits, '_', '.', '-', '+'
  std::string_view word() {
    skip_space();
    size_t st = pos;
    while (pos < s.size() &&
           (std::isalnum(static_cast<unsigned char>(s[pos])) || std::strchr("_.-+", s[pos]) != nullptr))
      pos++;
    if (st == pos) fail("expected a word");
    return s.substr(st, pos - st);
  }
  template <class T>
  T number(std::string_view w) const {
    T v{};
    auto r = std::from_chars(w.data(), w.data() + w.size(), v);
    if (r.ec != std::errc() || r.ptr != w.data() + w.size()) fail(cat("bad number '", w, "'"));
    return v;
  }
  int64_t integer() { return number<int64_t>(word()); }
  // an integer glued to what follows (a pointer's size before its L): an optional '-', then digits
  int64_t glued_integer() {
    size_t st = pos;
    if (pos < s.size() && s[pos] == '-') pos++;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) pos++;
    return number<int64_t>(s.substr(st, pos - st));
  }
  std::string string() {
    expect('"');
    std::string o;
    for (;; pos++) {
      if (pos >= s.size()) fail("unterminated string");
      char c = s[pos];
      if (c == '"') break;
      if (c == '\\') {
        if (++pos >= s.size()) fail("unterminated string");
        c = s[pos] == 'n' ? '\n' : s[pos];
      }
      o += c;
    }
    pos++;
    return o;
  }
  ConstValue constant() {
    std::string_view w = word();
    std::string_view v = w.substr(1);
    switch (w[0]) {
      case 'b':
        if (v != "0" && v != "1") fail("bad bool");
        return v == "1";
      case 'i': return number<int64_t>(v);
      case 'u': return number<uint64_t>(v);
      case 'f': return number<double>(v);
      case 'F': {
        uint64_t bits{};
        auto r = std::from_chars(v.data(), v.data() + v.size(), bits, 16);
        if (r.ec != std::errc() || r.ptr != v.data() + v.size()) fail("bad double bits");
        return std::bit_cast<double>(bits);
      }
      default: fail(cat("bad constant '", w, "'"));
    }
  }
  Ops op() {
    std::string_view w = word();
    for (int i = 0; i < NUM_OPS; i++)
      if (op_name(static_cast<Ops>(i)) == w) return static_cast<Ops>(i);
    fail(cat("unknown op '", w, "'"));
  }
  DType dtype() {
    std::string_view w = word();  // float, float:4 ...; then *size, L, @v
    static const std::unordered_map<std::string, DType> scalars = [] {
      std::unordered_map<std::string, DType> m{{"void", dtypes::void_}};
      for (DType d : dtypes::all) m.emplace(d.repr().substr(7), d);
      return m;
    }();
    auto it = scalars.find(std::string(w));
    if (it == scalars.end()) fail(cat("unknown dtype '", w, "'"));
    DType d = it->second;
    if (pos < s.size() && s[pos] == ':') pos++, d = d.vec(static_cast<int>(glued_integer()));
    if (pos < s.size() && s[pos] == '*') {
      pos++;
      int64_t size = glued_integer();
      bool local = pos < s.size() && s[pos] == 'L';
      if (local) pos++;
      d = d.ptr(size, local);
      if (pos < s.size() && s[pos] == '@') pos++, d = d.vec(static_cast<int>(glued_integer()));
    }
    return d;
  }
  std::vector<int64_t> ints() {
    expect('(');
    std::vector<int64_t> o;
    while (!peek(')')) o.push_back(as_int(constant()));
    pos++;
    return o;
  }
  PairTuple pairs() {
    expect('p');
    expect('(');
    PairTuple o;
    while (!peek(')')) {
      int64_t a = integer();
      o.emplace_back(a, integer());
    }
    pos++;
    return o;
  }
  int ref(size_t n) {
    expect('@');
    int64_t i = integer();
    if (i < 0 || static_cast<size_t>(i) >= n) fail(cat("no uop @", i));
    return static_cast<int>(i);
  }
};

// a line read back: the arg is built once its referenced uops are (args holding uops name them by index)
struct Line {
  bool aux = false;
  Ops op{};
  DType dtype;
  std::vector<int> src, refs;
  std::function<Arg(const std::vector<UOp>&)> arg;
};

}  // namespace

std::string PythonRenderer::render(const std::vector<UOp>& uops) {
  std::unordered_map<const UOpNode*, size_t> pos;
  std::vector<UOp> order(uops);
  for (size_t i = 0; i < uops.size(); i++) pos.emplace(uops[i].get(), i);
  // the uops reached but not listed come after the program, each after what it uses (an explicit stack, no recursion)
  for (size_t i = 0; i < order.size(); i++) {
    std::vector<UOp> reach(order[i].src().begin(), order[i].src().end());
    for (const UOp& a : arg_uops(order[i].arg())) reach.push_back(a);
    for (const UOp& r : reach)
      if (!pos.contains(r.get()))
        for (const UOp& x : r.toposort())
          if (pos.emplace(x.get(), order.size()).second) order.push_back(x);
  }
  auto ref = [&](const UOp& u) { return pos.at(u.get()); };
  std::string out = "# PYTHON program: index op dtype (sources) arg\n";
  for (size_t i = 0; i < order.size(); i++) {
    const UOp& u = order[i];
    std::string src;
    for (const UOp& s : u.src()) src += cat(src.empty() ? "" : " ", ref(s));
    out += cat(i < uops.size() ? "" : "aux ", i, " ", op_name(u.op()), " ", dtype_text(u.dtype()), " (", src, ") ",
               arg_text(u.arg(), ref), "\n");
  }
  return out;
}

std::vector<UOp> load_python_program(const std::string& name, std::string_view src) {
  Reader rd{src, 0, name};
  std::vector<Line> lines;
  while (!rd.at_end()) {
    Line ln;
    std::string_view w = rd.word();
    if ((ln.aux = w == "aux")) w = rd.word();
    if (rd.number<int64_t>(w) != static_cast<int64_t>(lines.size()))
      rd.fail(cat("uop ", lines.size(), " numbered ", w));
    ln.op = rd.op();
    if (rd.peek('?')) rd.fail("a dtype with no text form");
    ln.dtype = rd.dtype();
    rd.expect('(');
    while (!rd.peek(')')) ln.src.push_back(static_cast<int>(rd.integer()));
    rd.pos++;
    // the arg: its kind by its first characters
    rd.skip_space();
    std::string_view rest = src.substr(rd.pos);
    auto starts = [&](std::string_view p) { return rest.substr(0, p.size()) == p; };
    if (starts("?"))
      throw NotImplementedError(cat("PYTHON: ", name, ": uop ", lines.size(), " (", ln.op,
                                    ") has an arg with no program text; it can't be read back"));
    Arg a;
    if (starts("-") && (rest.size() == 1 || std::isspace(static_cast<unsigned char>(rest[1])))) {
      rd.pos++;
    } else if (starts("\"")) {
      a = rd.string();
    } else if (starts("(")) {
      rd.pos++;
      Tuple t;
      while (!rd.peek(')')) t.push_back(rd.constant());
      rd.pos++;
      a = std::move(t);
    } else if (starts("p(")) {
      a = rd.pairs();
    } else if (starts("var(")) {
      rd.pos += 4;
      VarArg v{rd.string(), rd.constant(), rd.constant()};
      rd.expect(')');
      a = std::move(v);
    } else if (starts("special(")) {
      rd.pos += 8;
      SpecialArg sp{rd.string(), rd.integer()};
      if (rd.peek('-'))
        rd.pos++;
      else
        ln.refs.push_back(rd.ref(src.size()));
      rd.expect(')');
      ln.arg = [sp, refs = ln.refs](const std::vector<UOp>& built) {
        SpecialArg r = sp;
        if (!refs.empty()) r.sym = std::make_shared<const UOpArg>(built[static_cast<size_t>(refs[0])]);
        return Arg(r);
      };
    } else if (starts("reduce(")) {
      rd.pos += 7;
      ReduceArg r{rd.op(), rd.ints(), rd.integer() != 0};
      rd.expect(')');
      a = std::move(r);
    } else if (starts("wmma(")) {
      rd.pos += 5;
      std::string wn = rd.string();
      std::array<int, 3> dims{};
      for (int& d : dims) d = static_cast<int>(rd.integer());
      DType in = rd.dtype(), out = rd.dtype();
      std::string dev = rd.string();
      int threads = static_cast<int>(rd.integer());
      std::array<PairTuple, 3> up{rd.pairs(), rd.pairs(), rd.pairs()};
      std::vector<int64_t> red = rd.ints();
      rd.expect(')');
      a = wmma_arg(WmmaArg(wn, dims, in, out, dev, threads, up, red));
    } else if (starts("kernel(")) {
      rd.pos += 7;
      std::string kn = rd.string();
      int ld = static_cast<int>(rd.integer()), up = static_cast<int>(rd.integer());
      bool dul = rd.integer() != 0;
      Lowering lw;
      lw.vector_alus = rd.integer() != 0, lw.deferred_horizontal_reduce = rd.integer() != 0,
      lw.polynomial_transcendentals = rd.integer() != 0, lw.integer_block_sums = rd.integer() != 0;
      lw.reassociate_reduces = rd.integer() != 0;
      rd.expect(')');
      a = ObjectArg(std::make_shared<const KernelInfo>(kn, ld, up, dul, lw));
    } else if (starts("uop(")) {
      rd.pos += 4;
      ln.refs.push_back(rd.ref(src.size()));
      rd.expect(')');
      ln.arg = [r = ln.refs[0]](const std::vector<UOp>& built) {
        return Arg(std::make_shared<const UOpArg>(built[static_cast<size_t>(r)]));
      };
    } else if (starts("o")) {
      rd.pos++;
      a = rd.op();
    } else {
      a = rd.constant();
    }
    if (!ln.arg) ln.arg = [a](const std::vector<UOp>&) { return a; };
    lines.push_back(std::move(ln));
  }
  // build each uop after its sources and the uops its arg holds (a DEFINE_ACC lists its RANGEs after itself)
  const size_t n = lines.size();
  std::vector<UOp> built(n);
  std::vector<uint8_t> state(n, 0);  // 0 not yet, 1 waiting for its inputs, 2 built
  for (size_t root = 0; root < n; root++) {
    std::vector<size_t> stack{root};
    while (!stack.empty()) {
      const size_t i = stack.back();
      if (state[i] == 2) {
        stack.pop_back();
        continue;
      }
      std::vector<int> deps = lines[i].src;
      deps.insert(deps.end(), lines[i].refs.begin(), lines[i].refs.end());
      bool ready = true;
      for (int d : deps) {
        if (d < 0 || static_cast<size_t>(d) >= n)
          throw ValueError(cat("PYTHON: ", name, ": not a PYTHON program: uop ", i, " uses uop ", d, " of ", n));
        if (state[static_cast<size_t>(d)] == 2) continue;
        if (state[static_cast<size_t>(d)] == 1)
          throw ValueError(cat("PYTHON: ", name, ": not a PYTHON program: uop ", i, " depends on itself"));
        ready = false;
        stack.push_back(static_cast<size_t>(d));
      }
      if (!ready) {
        state[i] = 1;
        continue;
      }
      std::vector<UOp> s;
      for (int d : lines[i].src) s.push_back(built[static_cast<size_t>(d)]);
      built[i] = UOp::make(lines[i].op, lines[i].dtype, std::move(s), lines[i].arg(built));
      state[i] = 2;
      stack.pop_back();
    }
  }
  std::vector<UOp> prog;
  for (size_t i = 0; i < n; i++)
    if (!lines[i].aux) prog.push_back(built[i]);
  return prog;
}

}  // namespace tg
