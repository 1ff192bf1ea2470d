#include "tg/uop/uop.h"

#include <algorithm>
#include <iomanip>
#include <memory>
#include <mutex>
#include <numeric>
#include <ostream>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "tg/uop/pretty.h"

namespace tg {

// *** the intern table: sharded by hash, each shard a set of node pointers with heterogeneous lookup ***

namespace {
struct NodeKey {
  Ops op;
  DType dtype;
  std::span<const UOp> src;
  const Arg& arg;
  const Arg& tag;
  uint64_t hash;
};
bool key_eq(const NodeKey& k, const UOpNode* n) {
  if (k.op != n->op || !(k.dtype == n->dtype) || k.src.size() != n->src.size()) return false;
  for (size_t i = 0; i < k.src.size(); i++)
    if (k.src[i] != n->src[i]) return false;
  return arg_eq(k.arg, n->arg) && arg_eq(k.tag, n->tag);
}
struct NodeHash {
  using is_transparent = void;
  size_t operator()(const UOpNode* n) const { return n->hash; }
  size_t operator()(const NodeKey& k) const { return k.hash; }
};
struct NodeEq {
  using is_transparent = void;
  bool operator()(const UOpNode* a, const UOpNode* b) const {
    return key_eq(NodeKey{a->op, a->dtype, a->src, a->arg, a->tag, a->hash}, b);
  }
  bool operator()(const NodeKey& k, const UOpNode* n) const { return k.hash == n->hash && key_eq(k, n); }
  bool operator()(const UOpNode* n, const NodeKey& k) const { return k.hash == n->hash && key_eq(k, n); }
};
constexpr size_t kShards = 16;
struct Shard {
  std::mutex mu;
  std::unordered_set<UOpNode*, NodeHash, NodeEq> set;
};
Shard* shards() {
  static Shard* s = new Shard[kShards];  // never destroyed: handles in static storage may outlive it
  return s;
}
Shard& shard_of(uint64_t h) { return shards()[(h >> 7) % kShards]; }

uint64_t node_hash(Ops op, DType dtype, std::span<const UOp> src, const Arg& arg, const Arg& tag) {
  uint64_t h = hash_combine(static_cast<uint64_t>(op), reinterpret_cast<uintptr_t>(dtype.data_ptr()));
  h = hash_combine(h, arg_hash(arg));
  if (!is_none(tag)) h = hash_combine(h, arg_hash(tag));
  for (const UOp& s : src) h = hash_combine(h, reinterpret_cast<uintptr_t>(s.get()));
  return h;
}

std::atomic<ConstLikeHook> const_like_hook{nullptr};
std::atomic<NodeFreeHook> buffer_free_hook{nullptr};

struct NoneCache final : ArgObject {
  std::string repr() const override { return "None"; }
  uint64_t hash() const override { return 0; }
  bool equals(const ArgObject& o) const override { return &o == this; }
};

// releases one reference; a node whose count reaches zero leaves the table, and its sources are released with a
// worklist, never by recursion (a 200,000-deep chain is freed in a loop)
void release(UOpNode* n);
}  // namespace

struct UOpInternals {
  static UOpNode* take(UOp& u) {
    UOpNode* n = u.n_;
    u.n_ = nullptr;
    return n;
  }
  static UOp adopt(UOpNode* n) { return UOp(n); }
};

namespace {
void release(UOpNode* first) {
  if (first->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  std::vector<UOpNode*> todo{first};
  while (!todo.empty()) {
    UOpNode* n = todo.back();
    todo.pop_back();
    {
      Shard& sh = shard_of(n->hash);
      std::lock_guard lock(sh.mu);
      // a lookup may have replaced this dying node with a fresh one of the same key: erase only if it is still us
      if (auto it = sh.set.find(n); it != sh.set.end() && *it == n) sh.set.erase(it);
    }
    if (n->op == Ops::BUFFER)
      if (auto hook = buffer_free_hook.load(std::memory_order_acquire)) hook(n);
    if (const ArgObject* st = n->st_cache.load(std::memory_order_acquire); st != nullptr && st != uop_cache_none())
      delete st;
    for (UOp& s : n->src) {
      UOpNode* c = UOpInternals::take(s);
      if (c->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) todo.push_back(c);
    }
    delete n;
  }
}

// refs never go 0 -> 1: a dying node cannot be resurrected, so exactly one thread frees it
bool try_acquire(UOpNode* n) {
  uint32_t r = n->refs.load(std::memory_order_relaxed);
  while (r != 0)
    if (n->refs.compare_exchange_weak(r, r + 1, std::memory_order_acq_rel)) return true;
  return false;
}
}  // namespace

UOp::UOp(const UOp& o) noexcept : n_(o.n_) {
  if (n_) n_->refs.fetch_add(1, std::memory_order_relaxed);
}
UOp& UOp::operator=(const UOp& o) noexcept {
  UOpNode* n = o.n_;  // read before the release: o may live in the node released (u = u.src(0))
  if (n) n->refs.fetch_add(1, std::memory_order_relaxed);
  if (n_) release(n_);
  n_ = n;
  return *this;
}
UOp& UOp::operator=(UOp&& o) noexcept {
  if (this != &o) {
    UOpNode* n = o.n_;  // taken before the release, as above
    o.n_ = nullptr;
    if (n_) release(n_);
    n_ = n;
  }
  return *this;
}
UOp::~UOp() {
  if (n_) release(n_);
}

const ArgObject* uop_cache_none() {
  static const NoneCache none;
  return &none;
}
const std::string* uop_device_none() {
  static const std::string none;
  return &none;
}
const std::string* intern_device(const std::string& name) {
  static std::mutex mu;
  static auto* names = new std::unordered_set<std::string>();  // never freed: handles outlive statics
  std::lock_guard lock(mu);
  return &*names->insert(name).first;
}
bool is_multi_device(std::string_view device) { return device.find(',') != std::string_view::npos; }
std::string multi_device_name(const std::vector<std::string>& devices) {
  TG_CHECK(!devices.empty(), "a tuple of devices can't be empty");
  std::string ret;
  for (const std::string& d : devices) {
    TG_CHECK(!d.empty() && !is_multi_device(d), "bad device name in a tuple of devices: ", py_str_repr(d));
    ret += d + ",";
  }
  if (devices.size() > 1) ret.pop_back();
  return ret;
}
std::vector<std::string> device_names(std::string_view device) {
  std::vector<std::string> ret;
  size_t start = 0;
  while (start <= device.size()) {
    size_t end = std::min(device.find(',', start), device.size());
    if (end > start) ret.emplace_back(device.substr(start, end - start));
    start = end + 1;
  }
  return ret;
}
std::string DeviceTupleArg::repr() const {
  std::string ret = "(";
  for (size_t i = 0; i < devices.size(); i++) ret += (i ? ", " : "") + py_str_repr(devices[i]);
  return ret + (devices.size() == 1 ? ",)" : ")");
}
uint64_t DeviceTupleArg::hash() const { return fnv1a(multi_device_name(devices)); }
Arg device_arg(const std::string& device) {
  if (!is_multi_device(device)) return device;
  return ObjectArg(std::make_shared<const DeviceTupleArg>(device_names(device)));
}
std::string device_of_arg(const Arg& arg) {
  if (const auto* t = object_arg<DeviceTupleArg>(arg)) return multi_device_name(t->devices);
  return std::get<std::string>(arg);
}

const Metadata* intern_metadata(const std::string& name, const std::string& caller, bool backward) {
  static std::mutex mu;
  static auto* all = new std::vector<std::unique_ptr<Metadata>>();  // few distinct names; never freed
  std::lock_guard lock(mu);
  for (auto& m : *all)
    if (m->name == name && m->caller == caller && m->backward == backward) return m.get();
  all->push_back(std::make_unique<Metadata>(Metadata{name, caller, backward}));
  return all->back().get();
}
const Metadata* UOp::metadata() const { return n_->metadata.load(std::memory_order_acquire); }
void UOp::set_metadata(const Metadata* m) const { n_->metadata.store(m, std::memory_order_release); }

void set_const_like_hook(ConstLikeHook hook) { const_like_hook.store(hook, std::memory_order_release); }
void set_buffer_free_hook(NodeFreeHook hook) { buffer_free_hook.store(hook, std::memory_order_release); }

UOp UOp::borrow(const UOpNode* n) {
  n->refs.fetch_add(1, std::memory_order_relaxed);
  return UOp(const_cast<UOpNode*>(n));
}

std::vector<UOp> uop_live_parents(const UOp& u) {
  std::vector<UOp> out;
  for (size_t i = 0; i < kShards; i++) {
    std::lock_guard lock(shards()[i].mu);
    for (UOpNode* n : shards()[i].set) {
      bool has = false;
      for (const UOp& s : n->src) has = has || s.get() == u.get();
      if (has && try_acquire(n)) out.push_back(UOpInternals::adopt(n));
    }
  }
  return out;
}

size_t uop_intern_count() {
  size_t n = 0;
  for (size_t i = 0; i < kShards; i++) {
    std::lock_guard lock(shards()[i].mu);
    n += shards()[i].set.size();
  }
  return n;
}

// *** construction ***

UOp UOp::make(Ops op, DType dtype, std::vector<UOp> src, Arg arg, Arg tag) {
  for (const UOp& s : src) TG_CHECK(s, "UOp(", op, ") built with a null source");
  uint64_t h = node_hash(op, dtype, src, arg, tag);
  Shard& sh = shard_of(h);
  {
    std::lock_guard lock(sh.mu);
    auto it = sh.set.find(NodeKey{op, dtype, src, arg, tag, h});
    if (it != sh.set.end()) {
      if (try_acquire(*it)) return UOp(*it);
      sh.set.erase(it);  // dying: its releasing thread sees it is gone and only frees it
    }
  }
  auto [vmin, vmax] = compute_min_max(op, dtype, src, arg);
  OpSet src_ops;
  for (const UOp& s : src) src_ops.add(s.op());
  static std::atomic<uint64_t> made{0};
  auto* n = new UOpNode{op, dtype, std::move(src), std::move(arg), std::move(tag), h, src_ops, vmin, vmax, ++made};
  UOpNode* other = nullptr;
  {
    std::lock_guard lock(sh.mu);
    auto [it, inserted] = sh.set.insert(n);
    if (!inserted) {  // another thread built the same node meanwhile
      if (try_acquire(*it)) {
        other = *it;
      } else {
        sh.set.erase(it);
        sh.set.insert(n);
      }
    }
  }
  if (other != nullptr) {
    UOp drop(n);  // ours, never seen by anyone: its release finds the other node in the table and frees only ours
    return UOp(other);
  }
  return UOp(n);
}

const UOp& UOp::src(size_t i) const {
  TG_ASSERT(i < n_->src.size(), "src index ", i, " out of range for ", n_->op, " with ", n_->src.size(), " sources");
  return n_->src[i];
}

void UOp::bad_arg(const char* want) const {
  throw InternalError(cat("UOp(", op(), ") arg is ", arg_repr(arg()), ", not the requested type ", want));
}

UOp UOp::replace(std::optional<Ops> op_, std::optional<DType> dtype_, std::optional<std::vector<UOp>> src_,
                 std::optional<Arg> arg_) const {
  return make(op_.value_or(op()), dtype_.value_or(dtype()), src_ ? std::move(*src_) : src(),
              arg_ ? std::move(*arg_) : arg(), tag());
}
UOp UOp::with_tag(Arg t) const { return make(op(), dtype(), src(), arg(), std::move(t)); }

UOp UOp::const_(DType dtype, ConstValue v) { return make(Ops::CONST, dtype, {}, dtypes::as_const(v, dtype)); }
UOp UOp::vconst(DType dtype, const Tuple& vals) {
  TG_CHECK(!vals.empty(), "VCONST needs values");
  bool same = std::all_of(vals.begin(), vals.end(), [&](auto& v) { return const_eq_numeric(v, vals[0]); });
  if (same) return const_(dtype, vals[0]);
  TG_CHECK(static_cast<int>(vals.size()) == dtype.count(), "VCONST of ", vals.size(), " values for ", dtype);
  Tuple t;
  for (auto& v : vals) t.push_back(dtypes::as_const(v, dtype.scalar()));
  return make(Ops::VCONST, dtype, {}, std::move(t));
}
UOp UOp::variable(const std::string& name, ConstValue min_val, ConstValue max_val, DType dtype) {
  return make(Ops::DEFINE_VAR, dtype, {}, VarArg{name, min_val, max_val});
}
UOp UOp::range(DType dtype, int64_t end, int64_t idx) { return range(dtype, const_(dtype, end), idx); }
UOp UOp::range(DType dtype, const UOp& end, int64_t idx) { return make(Ops::RANGE, dtype, {end}, ConstValue(idx)); }
UOp UOp::unique() {
  static std::atomic<int64_t> counter{0};
  return make(Ops::UNIQUE, dtypes::void_, {}, ConstValue(counter.fetch_add(1)));
}
UOp UOp::sink(std::vector<UOp> srcs, Arg arg) {
  return make(Ops::SINK, dtypes::void_, std::move(srcs), std::move(arg));
}
UOp UOp::const_like(ConstValue v) const {
  if (auto hook = const_like_hook.load(std::memory_order_acquire)) return hook(*this, v);
  return const_(dtype(), v);
}

UOp UOp::alu(Ops op_, std::vector<UOp> more) const {
  DType out = more.empty() ? dtype() : more.back().dtype();
  if (op_ == Ops::CMPLT || op_ == Ops::CMPNE) out = out.count() > 1 ? dtypes::bool_.vec(out.count()) : dtypes::bool_;
  more.insert(more.begin(), *this);
  return make(op_, out, std::move(more));
}
UOp UOp::cast(DType d) const { return dtype() == d ? *this : make(Ops::CAST, d, {*this}); }
UOp UOp::bitcast(DType d) const { return make(Ops::BITCAST, d, {*this}); }
UOp UOp::gep(int64_t i) const {
  if (op() == Ops::VECTORIZE) return src(static_cast<size_t>(i));
  if (op() == Ops::VCONST) return const_(dtype().scalar(), arg<Tuple>().at(static_cast<size_t>(i)));
  if (op() == Ops::CONST) return const_(dtype().scalar(), const_arg());
  return make(Ops::GEP, dtype().scalar(), {*this}, Tuple{ConstValue(i)});
}
UOp UOp::gep(std::vector<int64_t> idx) const {
  if (idx.size() == 1) return gep(idx[0]);
  Tuple t;
  for (auto i : idx) t.push_back(ConstValue(i));
  return make(Ops::GEP, dtype().scalar().vec(static_cast<int>(idx.size())), {*this}, std::move(t));
}
UOp UOp::broadcast(int count) const {
  TG_ASSERT(dtype().count() == 1, "broadcast of vector ", dtype());
  if (count == 1) return *this;
  return make(Ops::VECTORIZE, dtype().vec(count), std::vector<UOp>(static_cast<size_t>(count), *this));
}
UOp UOp::index(const UOp& idx) const { return make(Ops::INDEX, dtype(), {*this, idx}); }
UOp UOp::index(const UOp& idx, const UOp& valid) const { return make(Ops::INDEX, dtype(), {*this, idx, valid}); }
UOp UOp::load(std::vector<UOp> more) const {
  more.insert(more.begin(), *this);
  return make(Ops::LOAD, dtype().base(), std::move(more));
}
UOp UOp::store(std::vector<UOp> more) const {
  more.insert(more.begin(), *this);
  return make(Ops::STORE, dtypes::void_, std::move(more));
}
UOp special_size(const UOp& special) {
  const SpecialArg& s = special.arg<SpecialArg>();
  if (s.sym) return static_cast<const UOpArg&>(*s.sym).u;
  return UOp::const_(dtypes::int32, s.size);
}

UOp UOp::bind(int64_t val) const {
  TG_CHECK(op() == Ops::DEFINE_VAR, "bind needs a DEFINE_VAR, not ", op());
  auto& v = arg<VarArg>();
  TG_CHECK(as_int(v.min) <= val && val <= as_int(v.max), "bind ", val, " not in range [", const_repr(v.min), ", ",
           const_repr(v.max), "]");
  return make(Ops::BIND, dtype(), {*this, const_like(val)});
}

// *** math ***

UOp UOp::neg() const { return dtype().scalar() == dtypes::bool_ ? logical_not() : *this * -1; }
UOp UOp::logical_not() const { return ne(const_like(true)); }
UOp UOp::ne(const UOp& x) const { return alu(Ops::CMPNE, {x}); }
UOp UOp::eq(const UOp& x) const { return ne(x).logical_not(); }
UOp UOp::maximum(const UOp& x) const { return alu(Ops::MAX, {x}); }
UOp UOp::minimum(const UOp& x) const { return -((-*this).maximum(-x)); }
UOp UOp::where(const UOp& t, const UOp& f) const { return alu(Ops::WHERE, {t, f}); }

// *** symbolic helpers ***

const ConstValue& UOp::const_arg() const {
  TG_ASSERT(op() == Ops::CONST, "const_arg called on ", op());
  return arg<ConstValue>();
}
int64_t UOp::const_factor() const {
  switch (op()) {
    case Ops::CONST: return as_int(const_arg());
    case Ops::VCONST: {
      int64_t g = 0;
      for (auto& v : arg<Tuple>()) g = std::gcd(g, as_int(v));
      return g;
    }
    case Ops::ADD: return std::gcd(src(0).const_factor(), src(1).const_factor());
    case Ops::MUL:
      if (src(0).op() == Ops::CONST) return as_int(src(0).const_arg());
      if (src(1).op() == Ops::CONST) return as_int(src(1).const_arg());
      return 1;
    default: return 1;
  }
}
UOp UOp::divides(int64_t v) const {
  if (v == 1) return *this;
  if (v == 0) return {};
  switch (op()) {
    case Ops::CONST: {
      int64_t c = as_int(const_arg());
      return c % v == 0 ? const_like(c / v) : UOp{};  // exact, so floor and trunc division agree
    }
    case Ops::VCONST: {
      Tuple t;
      for (auto& x : arg<Tuple>()) {
        if (as_int(x) % v != 0) return {};
        t.push_back(as_int(x) / v);
      }
      return vconst(dtype(), t);
    }
    case Ops::ADD: {
      UOp d0 = src(0).divides(v), d1 = d0 ? src(1).divides(v) : UOp{};
      return d0 && d1 ? d0 + d1 : UOp{};
    }
    case Ops::MUL: {
      if (UOp d0 = src(0).divides(v)) return d0 * src(1);
      if (UOp d1 = src(1).divides(v)) return src(0) * d1;
      return {};
    }
    default: return {};
  }
}
bool UOp::is_increasing() const {
  if (GroupOp::Irreducible.has(op())) return true;
  if (op() == Ops::ADD) return src(0).is_increasing() && src(1).is_increasing();
  if ((op() == Ops::MUL || op() == Ops::IDIV) && src(1).op() == Ops::CONST && as_double(src(1).const_arg()) >= 0)
    return src(0).is_increasing();
  return false;
}

// *** graph walks ***

std::vector<UOp> UOp::toposort() const {
  std::vector<UOp> out;
  std::unordered_set<const UOpNode*> done;
  std::vector<std::pair<const UOp*, bool>> stack{{this, false}};
  while (!stack.empty()) {
    auto [u, visited] = stack.back();
    stack.pop_back();
    if (done.count(u->get())) continue;
    if (!visited) {
      stack.push_back({u, true});
      for (auto it = u->src().rbegin(); it != u->src().rend(); ++it) stack.push_back({&*it, false});
    } else if (done.insert(u->get()).second) {
      out.push_back(*u);
    }
  }
  return out;
}

uint64_t UOp::key() const {
  std::unordered_map<const UOpNode*, uint64_t> keys;
  for (const UOp& u : toposort()) {
    uint64_t h = hash_combine(fnv1a(op_name(u.op())), u.dtype().key());
    h = hash_combine(h, fnv1a(arg_repr(u.arg())));
    if (!is_none(u.tag())) h = hash_combine(h, fnv1a(arg_repr(u.tag())));
    for (const UOp& s : u.src()) h = hash_combine(h, keys.at(s.get()));
    keys[u.get()] = h;
  }
  return keys.at(get());
}

// *** tuplize ordering: python's comparison of u.tuplize = (op, arg, dtype, *src tuplize), iteratively ***

namespace {

template <class T>
int cmp3(const T& a, const T& b) {
  return a < b ? -1 : b < a ? 1 : 0;
}
int cmp_cv(const ConstValue& a, const ConstValue& b) {
  if (std::holds_alternative<double>(a) || std::holds_alternative<double>(b)) return cmp3(as_double(a), as_double(b));
  return cmp3(as_i128(a), as_i128(b));
}
int cmp_arg(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return cmp3(a.index(), b.index());  // python would raise; any fixed order will do
  if (auto* x = std::get_if<ConstValue>(&a)) return cmp_cv(*x, std::get<ConstValue>(b));
  if (auto* x = std::get_if<std::string>(&a)) return cmp3(*x, std::get<std::string>(b));
  if (auto* x = std::get_if<Ops>(&a)) return cmp3(static_cast<int>(*x), static_cast<int>(std::get<Ops>(b)));
  if (auto* x = std::get_if<VarArg>(&a)) {
    auto& y = std::get<VarArg>(b);
    if (int c = cmp3(x->name, y.name)) return c;
    if (int c = cmp_cv(x->min, y.min)) return c;
    return cmp_cv(x->max, y.max);
  }
  if (auto* x = std::get_if<SpecialArg>(&a)) {
    auto& y = std::get<SpecialArg>(b);
    if (int c = cmp3(x->name, y.name)) return c;
    if (int c = cmp3(x->size, y.size)) return c;
    return cmp3(x->sym ? x->sym->hash() : 0, y.sym ? y.sym->hash() : 0);
  }
  if (auto* x = std::get_if<Tuple>(&a)) {
    auto& y = std::get<Tuple>(b);
    for (size_t i = 0; i < std::min(x->size(), y.size()); i++)
      if (int c = cmp_cv((*x)[i], y[i])) return c;
    return cmp3(x->size(), y.size());
  }
  if (auto* x = std::get_if<PairTuple>(&a)) return cmp3(*x, std::get<PairTuple>(b));
  if (std::holds_alternative<std::monostate>(a)) return 0;
  return cmp3(arg_repr(a), arg_repr(b));
}
int cmp_head(const UOp& a, const UOp& b) {
  if (int c = cmp3(static_cast<int>(a.op()), static_cast<int>(b.op()))) return c;
  if (int c = cmp_arg(a.arg(), b.arg())) return c;
  if (a.dtype() == b.dtype()) return 0;
  return a.dtype() < b.dtype() ? -1 : 1;
}

}  // namespace

int tuplize_cmp(const UOp& a, const UOp& b) {
  if (a == b) return 0;
  if (int c = cmp_head(a, b)) return c;
  struct Frame {
    const UOp* a;
    const UOp* b;
    size_t i;
  };
  std::vector<Frame> st{{&a, &b, 0}};  // an explicit stack: graphs may be deep
  while (!st.empty()) {
    Frame& f = st.back();
    size_t na = f.a->src().size(), nb = f.b->src().size();
    if (f.i == std::min(na, nb)) {
      if (na != nb) return na < nb ? -1 : 1;
      st.pop_back();
      continue;
    }
    const UOp* sa = &f.a->src()[f.i];
    const UOp* sb = &f.b->src()[f.i];
    f.i++;
    if (*sa == *sb) continue;
    if (int c = cmp_head(*sa, *sb)) return c;
    st.push_back({sa, sb, 0});
  }
  return 0;
}

// *** printing: tinygrad's pretty_print, iteratively ***

namespace {
std::string node_repr_head(const UOpNode* n) {
  std::string s = "UOp(Ops.";
  s += op_name(n->op);
  s += ", ";
  s += n->dtype.repr();
  s += ", arg=";
  const auto* r = n->op == Ops::REDUCE_AXIS ? std::get_if<ReduceArg>(&n->arg) : nullptr;
  if (r != nullptr)  // the reduce op as str(), not repr()
    s += cat("(Ops.", op_name(r->op), ", ", py_tuple(r->axes), r->fuse ? ", True)" : ")");
  else
    s += arg_repr(n->arg);
  if (!is_none(n->tag)) s += ", tag=" + arg_str(n->tag);
  return s + ", src=(";
}
}  // namespace
std::string repr_head(const UOp& u) { return node_repr_head(u.get()); }

std::string UOp::repr() const {
  if (!n_) return "UOp(null)";
  return pretty_print(
      static_cast<const UOpNode*>(n_), node_repr_head, [](const UOpNode* n) { return n->src.size(); },
      [](const UOpNode* n, size_t i) { return n->src[i].get(); });
}
std::ostream& operator<<(std::ostream& os, const UOp& u) { return os << u.repr(); }

void print_uops(const std::vector<UOp>& uops, std::ostream& os) {
  std::unordered_map<const UOpNode*, size_t> pos;
  for (size_t i = 0; i < uops.size(); i++) pos.emplace(uops[i].get(), i);
  auto pad = [](std::string s, size_t w) { return s.size() < w ? s + std::string(w - s.size(), ' ') : s; };
  for (size_t i = 0; i < uops.size(); i++) {
    const UOp& u = uops[i];
    std::vector<std::string> parents;
    for (const UOp& s : u.src()) {
      auto it = pos.find(s.get());
      if (it == pos.end())
        parents.push_back("'--'");
      else if (s.op() == Ops::CONST)
        parents.push_back(py_str_repr(const_repr(s.const_arg())));
      else
        parents.push_back(std::to_string(it->second));
    }
    std::string i4 = std::to_string(i);
    os << std::string(i4.size() < 4 ? 4 - i4.size() : 0, ' ') << i4 << " " << pad(cat(u.op()), 20) << ": "
       << pad(u.dtype().repr(), 30) << " " << pad("[" + join(parents, ", ") + "]", 32) << " " << arg_str(u.arg())
       << "\n";
  }
}

std::vector<int64_t> tuple_ints(const Arg& a) {
  std::vector<int64_t> out;
  for (const ConstValue& v : std::get<Tuple>(a)) out.push_back(as_int(v));
  return out;
}

}  // namespace tg
