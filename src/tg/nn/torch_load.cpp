// PyTorch checkpoints (tinygrad's nn.state.torch_load): the zip archive torch.save writes since PyTorch 1.6. Its
// "<name>/data.pkl" is a pickle (protocol 2) of the saved object, whose tensors are persistent references to the
// storages "<name>/data/<key>" of the same archive (raw little-endian arrays). A small pickle machine rebuilds the
// object: dicts, lists, tuples, numbers, strings, and tensors through torch._utils._rebuild_tensor_v2 (a storage, an
// element offset, a size and a stride); any other class becomes an opaque object, and nothing is ever executed.
#include <zlib.h>

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "tg/nn/mapped_file.h"
#include "tg/nn/state.h"
#include "tg/nn/state_internal.h"

namespace tg::nn::state {

namespace {

// *** the zip archive (stored or deflated entries, zip64 sizes and offsets) ***

struct ZipEntry {
  std::string name;
  uint16_t method = 0;
  uint64_t csize = 0, usize = 0, offset = 0;  // offset: of the local header
};

class ZipReader {
 public:
  ZipReader(std::span<const uint8_t> file, std::string what) : f_(file), what_(std::move(what)) {
    if (f_.size() < 4 || u32(0) != 0x04034b50)
      fail(
          "not a zip archive (the format torch.save writes since PyTorch 1.6; the older pickle or tar format is not "
          "supported: load and save the checkpoint again with a newer PyTorch)");
    // the end of central directory record: 22 bytes and a comment of up to 65535 at the end of the file
    size_t eocd = SIZE_MAX;
    for (size_t back = 22; back <= std::min<size_t>(f_.size(), 22 + 65535) && eocd == SIZE_MAX; back++)
      if (u32(f_.size() - back) == 0x06054b50) eocd = f_.size() - back;
    if (eocd == SIZE_MAX) fail("no end of central directory record: the file is truncated or not a zip archive");
    uint64_t count = u16(eocd + 10), cd_size = u32(eocd + 12), cd_off = u32(eocd + 16);
    if ((count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_off == 0xFFFFFFFF) && eocd >= 20 &&
        u32(eocd - 20) == 0x07064b50) {  // the zip64 locator, then the zip64 end record
      uint64_t z = u64(eocd - 20 + 8);
      if (z > f_.size() || u32(z) != 0x06064b50) fail("bad zip64 end of central directory record at byte ", z);
      count = u64(z + 32), cd_size = u64(z + 40), cd_off = u64(z + 48);
    }
    if (cd_off > f_.size() || cd_size > f_.size() - cd_off)
      fail("the central directory [", cd_off, ", +", cd_size, ") goes beyond the file (", f_.size(), " bytes)");
    uint64_t p = cd_off;
    for (uint64_t i = 0; i < count; i++) {
      if (u32(p) != 0x02014b50) fail("central directory entry ", i, " at byte ", p, " has a bad signature");
      ZipEntry e;
      e.method = u16(p + 10);
      e.csize = u32(p + 20), e.usize = u32(p + 24);
      uint64_t nlen = u16(p + 28), xlen = u16(p + 30), clen = u16(p + 32);
      e.offset = u32(p + 42);
      e.name = std::string(reinterpret_cast<const char*>(bytes(p + 46, nlen)), nlen);
      // zip64: the sizes and the offset that don't fit 32 bits follow in the extra field 0x0001, in this order
      for (uint64_t x = p + 46 + nlen, end = x + xlen; x + 4 <= end;) {
        uint64_t id = u16(x), len = u16(x + 2), q = x + 4;
        if (id == 0x0001) {
          if (e.usize == 0xFFFFFFFF && q + 8 <= x + 4 + len) e.usize = u64(q), q += 8;
          if (e.csize == 0xFFFFFFFF && q + 8 <= x + 4 + len) e.csize = u64(q), q += 8;
          if (e.offset == 0xFFFFFFFF && q + 8 <= x + 4 + len) e.offset = u64(q);
        }
        x += 4 + len;
      }
      p += 46 + nlen + xlen + clen;
      entries_.emplace(e.name, std::move(e));
    }
  }

  const ZipEntry* find(const std::string& name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [n, e] : entries_) out.push_back(n);
    std::sort(out.begin(), out.end());
    return out;
  }

  // an entry's contents: a view of the file when stored, inflated into `scratch` when deflated
  std::span<const uint8_t> read(const ZipEntry& e, std::vector<uint8_t>& scratch) const {
    if (u32(e.offset) != 0x04034b50) fail(py_str_repr(e.name), ": bad local header at byte ", e.offset);
    uint64_t data = e.offset + 30 + u16(e.offset + 26) + u16(e.offset + 28);
    if (data > f_.size() || e.csize > f_.size() - data)
      fail(py_str_repr(e.name), ": its ", e.csize, " bytes at byte ", data, " go beyond the file (", f_.size(),
           " bytes)");
    const uint8_t* src = f_.data() + data;
    if (e.method == 0) {
      if (e.csize != e.usize) fail(py_str_repr(e.name), ": stored with ", e.csize, " bytes but ", e.usize, " expected");
      return {src, e.csize};
    }
    if (e.method != 8) fail(py_str_repr(e.name), ": compression method ", e.method, " (only stored and deflate)");
    if (e.usize > (uint64_t(1) << 40)) fail(py_str_repr(e.name), ": an uncompressed size of ", e.usize, " bytes");
    scratch.assign(e.usize + 1, 0);  // one byte more: an empty entry still gives zlib room, an overlong one shows
    z_stream z{};
    if (inflateInit2(&z, -15) != Z_OK) fail("zlib: inflateInit2 failed");
    uint64_t in_left = e.csize, out_left = scratch.size();
    z.next_in = const_cast<uint8_t*>(src);
    z.next_out = scratch.data();
    int rc = Z_OK;
    while (rc == Z_OK) {  // zlib counts in 32 bits: feed it in pieces
      uInt in_now = static_cast<uInt>(std::min<uint64_t>(in_left, 1u << 30));
      uInt out_now = static_cast<uInt>(std::min<uint64_t>(out_left, 1u << 30));
      z.avail_in = in_now, z.avail_out = out_now;
      rc = inflate(&z, Z_NO_FLUSH);
      in_left -= in_now - z.avail_in, out_left -= out_now - z.avail_out;
      if (rc == Z_OK && in_now == z.avail_in && out_now == z.avail_out) rc = Z_BUF_ERROR;  // no progress
    }
    inflateEnd(&z);
    uint64_t got = scratch.size() - out_left;
    if (rc != Z_STREAM_END || got != e.usize)
      fail(py_str_repr(e.name), ": corrupt deflate data (zlib ", rc, ", ", got, " bytes inflated, ", e.usize,
           " expected)");
    scratch.pop_back();
    return {scratch.data(), scratch.size()};
  }

  template <class... Args>
  [[noreturn]] void fail(const Args&... xs) const {
    throw Error(cat("torch_load ", what_, ": ", xs...));
  }

 private:
  const uint8_t* bytes(uint64_t at, uint64_t n) const {
    if (at > f_.size() || n > f_.size() - at)
      fail("reading ", n, " bytes at byte ", at, " goes beyond the file (", f_.size(), " bytes)");
    return f_.data() + at;
  }
  uint64_t le(uint64_t at, int n) const {
    const uint8_t* b = bytes(at, static_cast<uint64_t>(n));
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
    return v;
  }
  uint16_t u16(uint64_t at) const { return static_cast<uint16_t>(le(at, 2)); }
  uint32_t u32(uint64_t at) const { return static_cast<uint32_t>(le(at, 4)); }
  uint64_t u64(uint64_t at) const { return le(at, 8); }

  std::span<const uint8_t> f_;
  std::string what_;
  std::unordered_map<std::string, ZipEntry> entries_;
};

// *** the pickle machine ***

enum class Kind : uint8_t { None, Bool, Int, Float, Str, Bytes, Tuple, List, Dict, Global, Storage, Tensor, Object };

using Ref = uint32_t;  // objects live in the machine's arena: a pickle may build cycles, references can't leak them

struct PyObj {
  Kind kind = Kind::None;
  int64_t i = 0;  // Bool, Int; Tensor: the storage offset (elements)
  double f = 0;
  std::string s;                          // Str, Bytes; Global "module name"; Storage: its key
  std::vector<Ref> items;                 // Tuple, List
  std::vector<std::pair<Ref, Ref>> dict;  // Dict
  DType dtype;                            // Storage
  Ref storage = 0;                        // Tensor
  std::vector<int64_t> size, stride;      // Tensor
};

const std::pair<const char*, DType> storage_dtypes[] = {
    {"FloatStorage", dtypes::float32},     {"DoubleStorage", dtypes::float64}, {"HalfStorage", dtypes::float16},
    {"BFloat16Storage", dtypes::bfloat16}, {"LongStorage", dtypes::int64},     {"IntStorage", dtypes::int32},
    {"ShortStorage", dtypes::int16},       {"CharStorage", dtypes::int8},      {"ByteStorage", dtypes::uint8},
    {"BoolStorage", dtypes::bool_}};

class Unpickler {
 public:
  Unpickler(std::span<const uint8_t> data, std::string what) : d_(data), what_(std::move(what)) {}

  Ref load() {
    while (true) {
      size_t at = pos_;
      uint8_t op = take(1)[0];
      switch (op) {
        case 0x80: take(1); break;                                   // PROTO
        case 0x95: take(8); break;                                   // FRAME
        case '.': return pop(at);                                    // STOP
        case '(': marks_.push_back(stack_.size()); break;            // MARK
        case '}': push(make(Kind::Dict)); break;                     // EMPTY_DICT
        case ']': push(make(Kind::List)); break;                     // EMPTY_LIST
        case ')': push(make(Kind::Tuple)); break;                    // EMPTY_TUPLE
        case 't': push(sequence(Kind::Tuple, pop_mark(at))); break;  // TUPLE
        case 'l': push(sequence(Kind::List, pop_mark(at))); break;   // LIST
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
          std::vector<Ref> xs(static_cast<size_t>(op - 0x84));
          for (size_t k = xs.size(); k-- > 0;) xs[k] = pop(at);
          push(sequence(Kind::Tuple, std::move(xs)));
          break;
        }
        case 'd': {  // DICT
          Ref dict = make(Kind::Dict);
          set_items(dict, pop_mark(at), at);
          push(dict);
          break;
        }
        case 'q': memo_[take(1)[0]] = top(at); break;          // BINPUT
        case 'r': memo_[uint_le(4)] = top(at); break;          // LONG_BINPUT
        case 0x94: memo_[memo_.size()] = top(at); break;       // MEMOIZE
        case 'h': push(memo(take(1)[0], at)); break;           // BINGET
        case 'j': push(memo(uint_le(4), at)); break;           // LONG_BINGET
        case 'X': push(str(Kind::Str, uint_le(4))); break;     // BINUNICODE
        case 0x8c: push(str(Kind::Str, take(1)[0])); break;    // SHORT_BINUNICODE
        case 0x8d: push(str(Kind::Str, uint_le(8))); break;    // BINUNICODE8
        case 'T': push(str(Kind::Str, uint_le(4))); break;     // BINSTRING
        case 'U': push(str(Kind::Str, take(1)[0])); break;     // SHORT_BINSTRING
        case 'B': push(str(Kind::Bytes, uint_le(4))); break;   // BINBYTES
        case 'C': push(str(Kind::Bytes, take(1)[0])); break;   // SHORT_BINBYTES
        case 0x8e: push(str(Kind::Bytes, uint_le(8))); break;  // BINBYTES8
        case 'c': {                                            // GLOBAL: "module\nname\n"
          std::string module = line(at), name = line(at);
          push(global(module + " " + name));
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          Ref name = pop(at), module = pop(at);
          if (o(module).kind != Kind::Str || o(name).kind != Kind::Str) fail(at, "STACK_GLOBAL needs two strings");
          push(global(o(module).s + " " + o(name).s));
          break;
        }
        case 'J': push(integer(static_cast<int32_t>(uint_le(4)))); break;  // BININT
        case 'K': push(integer(take(1)[0])); break;                        // BININT1
        case 'M': push(integer(static_cast<int64_t>(uint_le(2)))); break;  // BININT2
        case 0x8a: push(long_int(take(1)[0], at)); break;                  // LONG1
        case 0x8b: push(long_int(uint_le(4), at)); break;                  // LONG4
        case 'G': {                                                        // BINFLOAT: big-endian double
          const uint8_t* b = take(8);
          uint64_t bits = 0;
          for (int k = 0; k < 8; k++) bits = bits << 8 | b[k];
          Ref r = make(Kind::Float);
          std::memcpy(&o(r).f, &bits, 8);
          push(r);
          break;
        }
        case 'N': push(make(Kind::None)); break;  // NONE
        case 0x88:
        case 0x89: {  // NEWTRUE, NEWFALSE
          Ref r = make(Kind::Bool);
          o(r).i = op == 0x88;
          push(r);
          break;
        }
        case 'R': {  // REDUCE: callable(*args)
          Ref args = pop(at), fn = pop(at);
          push(reduce(fn, args, at));
          break;
        }
        case 0x81: {  // NEWOBJ: cls.__new__(cls, *args)
          pop(at), pop(at);
          push(make(Kind::Object));
          break;
        }
        case 'b':
          pop(at);
          top(at);
          break;     // BUILD: the state of the object below is not used
        case 's': {  // SETITEM
          Ref v = pop(at), k = pop(at);
          set_items(top(at), {k, v}, at);
          break;
        }
        case 'u': {  // SETITEMS
          std::vector<Ref> kv = pop_mark(at);
          set_items(top(at), std::move(kv), at);
          break;
        }
        case 'a': {  // APPEND
          Ref v = pop(at);
          append(top(at), {v});
          break;
        }
        case 'e': {  // APPENDS
          std::vector<Ref> xs = pop_mark(at);
          append(top(at), xs);
          break;
        }
        case 'Q': push(persistent(pop(at), at)); break;  // BINPERSID
        case '0': pop(at); break;                        // POP
        case '1': pop_mark(at); break;                   // POP_MARK
        case '2': push(top(at)); break;                  // DUP
        default: fail(at, "unsupported pickle opcode 0x", hex(op));
      }
    }
  }

  const PyObj& o(Ref r) const { return objs_[r]; }
  PyObj& o(Ref r) { return objs_[r]; }

 private:
  template <class... Args>
  [[noreturn]] void fail(size_t at, const Args&... xs) const {
    throw Error(cat("torch_load ", what_, ": data.pkl byte ", at, ": ", xs...));
  }
  static std::string hex(uint8_t b) {
    const char* d = "0123456789abcdef";
    return {d[b >> 4], d[b & 15]};
  }
  const uint8_t* take(uint64_t n) {
    if (n > d_.size() - pos_) fail(pos_, "needs ", n, " more bytes, the pickle ends (", d_.size(), " bytes)");
    const uint8_t* p = d_.data() + pos_;
    pos_ += n;
    return p;
  }
  uint64_t uint_le(int n) {
    const uint8_t* b = take(static_cast<uint64_t>(n));
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; k--) v = v << 8 | b[k];
    return v;
  }
  std::string line(size_t at) {
    size_t end = pos_;
    while (end < d_.size() && d_[end] != '\n') end++;
    if (end == d_.size()) fail(at, "GLOBAL without its newline");
    std::string s(reinterpret_cast<const char*>(d_.data() + pos_), end - pos_);
    pos_ = end + 1;
    return s;
  }
  Ref make(Kind k) {
    if (objs_.size() >= (size_t(1) << 31)) fail(pos_, "too many objects");
    objs_.emplace_back();
    objs_.back().kind = k;
    return static_cast<Ref>(objs_.size() - 1);
  }
  Ref integer(int64_t v) {
    Ref r = make(Kind::Int);
    o(r).i = v;
    return r;
  }
  Ref long_int(uint64_t n, size_t at) {  // little-endian two's complement of n bytes
    if (n > 8) fail(at, "an integer of ", n, " bytes (more than 64 bits)");
    const uint8_t* b = take(n);
    uint64_t v = 0;
    for (uint64_t k = n; k-- > 0;) v = v << 8 | b[k];
    if (n > 0 && n < 8 && (b[n - 1] & 0x80)) v |= ~uint64_t(0) << (8 * n);  // sign extension
    return integer(static_cast<int64_t>(v));
  }
  Ref str(Kind k, uint64_t n) {
    const uint8_t* b = take(n);
    Ref r = make(k);
    o(r).s.assign(reinterpret_cast<const char*>(b), n);
    return r;
  }
  Ref global(std::string name) {
    Ref r = make(Kind::Global);
    o(r).s = std::move(name);
    return r;
  }
  Ref sequence(Kind k, std::vector<Ref> xs) {
    Ref r = make(k);
    o(r).items = std::move(xs);
    return r;
  }
  void push(Ref r) { stack_.push_back(r); }
  Ref top(size_t at) const {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail(at, "the stack is empty");
    return stack_.back();
  }
  Ref pop(size_t at) {
    Ref r = top(at);
    stack_.pop_back();
    return r;
  }
  std::vector<Ref> pop_mark(size_t at) {
    if (marks_.empty()) fail(at, "no MARK on the stack");
    std::vector<Ref> xs(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return xs;
  }
  Ref memo(uint64_t key, size_t at) const {
    auto it = memo_.find(key);
    if (it == memo_.end()) fail(at, "memo key ", key, " was never stored");
    return it->second;
  }
  void set_items(Ref target, std::vector<Ref> kv, size_t at) {
    if (kv.size() % 2 != 0) fail(at, "SETITEMS with an odd number of items (", kv.size(), ")");
    if (o(target).kind != Kind::Dict) return;  // an object's items are not kept
    for (size_t k = 0; k < kv.size(); k += 2) {
      auto& d = o(target).dict;
      auto same = std::find_if(d.begin(), d.end(), [&](const auto& p) { return same_key(p.first, kv[k]); });
      if (same != d.end())
        same->second = kv[k + 1];
      else
        d.push_back({kv[k], kv[k + 1]});
    }
  }
  bool same_key(Ref a, Ref b) const {
    const PyObj &x = o(a), &y = o(b);
    if (x.kind != y.kind) return false;
    if (x.kind == Kind::Str || x.kind == Kind::Bytes) return x.s == y.s;
    if (x.kind == Kind::Int || x.kind == Kind::Bool) return x.i == y.i;
    return a == b;
  }
  void append(Ref target, const std::vector<Ref>& xs) {
    if (o(target).kind == Kind::List) o(target).items.insert(o(target).items.end(), xs.begin(), xs.end());
  }
  const std::vector<Ref>& tuple_items(Ref r, size_t at, const char* what) const {
    if (o(r).kind != Kind::Tuple) fail(at, what, " must be a tuple");
    return o(r).items;
  }
  int64_t int_of(Ref r, size_t at, const char* what) const {
    if (o(r).kind != Kind::Int) fail(at, what, " must be an int");
    return o(r).i;
  }
  // ('storage', torch.FloatStorage, key, location, numel) -> a storage of the archive
  Ref persistent(Ref pid, size_t at) {
    const std::vector<Ref>& t = tuple_items(pid, at, "a persistent id");
    if (t.size() != 5 || o(t[0]).kind != Kind::Str || o(t[0]).s != "storage" || o(t[1]).kind != Kind::Global ||
        o(t[2]).kind != Kind::Str)
      fail(at, "a persistent id must be ('storage', <storage class>, key, location, numel)");
    std::string cls = o(t[1]).s;
    const DType* dt = nullptr;
    for (const auto& [name, d] : storage_dtypes)
      if (cls == std::string("torch ") + name) dt = &d;
    if (dt == nullptr) fail(at, "unsupported storage class ", py_str_repr(cls));
    int64_t numel = int_of(t[4], at, "a storage's numel");
    if (numel < 0) fail(at, "a storage of ", numel, " elements");
    Ref r = make(Kind::Storage);
    o(r).dtype = *dt;
    o(r).s = o(t[2]).s;
    o(r).i = numel;
    return r;
  }
  Ref reduce(Ref fn, Ref args, size_t at) {
    std::string name = o(fn).kind == Kind::Global ? o(fn).s : "";
    const std::vector<Ref>& a = tuple_items(args, at, cat("the arguments of ", name.empty() ? "a call" : name).c_str());
    if (name == "collections OrderedDict") return make(Kind::Dict);
    if (name == "torch Size" && a.size() == 1) return sequence(Kind::Tuple, tuple_items(a[0], at, "torch.Size's"));
    if ((name == "torch._utils _rebuild_parameter" || name == "torch._utils _rebuild_parameter_with_state") &&
        !a.empty() && o(a[0]).kind == Kind::Tensor)
      return a[0];
    if (name == "torch._utils _rebuild_tensor_v2" || name == "torch._utils _rebuild_tensor") {
      if (a.size() < 4 || o(a[0]).kind != Kind::Storage) fail(at, name, " needs (storage, offset, size, stride, ...)");
      Ref t = make(Kind::Tensor);
      o(t).storage = a[0];
      o(t).i = int_of(a[1], at, "a tensor's storage offset");
      for (Ref x : tuple_items(a[2], at, "a tensor's size")) o(t).size.push_back(int_of(x, at, "a size"));
      for (Ref x : tuple_items(a[3], at, "a tensor's stride")) o(t).stride.push_back(int_of(x, at, "a stride"));
      if (o(t).size.size() != o(t).stride.size())
        fail(at, "a tensor of size ", shape_str(o(t).size), " with stride ", shape_str(o(t).stride));
      return t;
    }
    return make(Kind::Object);  // any other class: kept opaque, its contents unused
  }

  std::span<const uint8_t> d_;
  std::string what_;
  size_t pos_ = 0;
  std::deque<PyObj> objs_;
  std::vector<Ref> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Ref> memo_;
};

// a tensor's shape over its storage, checked: sizes, strides and offset within the storage
struct TensorLayout {
  Shape shape;
  int64_t numel = 1;
  bool contiguous = true;  // row-major strides (a dim of size 1 has any): the elements are one run of the storage
};
TensorLayout check_tensor(const PyObj& t, const PyObj& storage, size_t nbytes, const std::string& name,
                          const std::string& what) {
  auto fail = [&](const auto&... xs) {
    throw Error(cat("torch_load ", what, ": tensor ", py_str_repr(name), ": ", xs...));
  };
  const int64_t isz = storage.dtype.itemsize();
  if (static_cast<uint64_t>(storage.i) * static_cast<uint64_t>(isz) != nbytes)
    fail("storage ", py_str_repr(storage.s), " holds ", nbytes, " bytes, not ", storage.i, " x ", isz);
  int64_t numel = 1, last = t.i;
  for (size_t k = 0; k < t.size.size(); k++) {
    if (t.size[k] < 0 || t.stride[k] < 0) fail("size ", shape_str(t.size), " with stride ", shape_str(t.stride));
    if (__builtin_mul_overflow(numel, t.size[k], &numel)) fail("size ", shape_str(t.size), " overflows");
  }
  if (t.i < 0) fail("a storage offset of ", t.i);
  if (numel > (int64_t(1) << 40) / isz)
    fail("size ", shape_str(t.size), ": ", numel, " elements is more than 2**40 bytes");
  if (numel > 0) {
    for (size_t k = 0; k < t.size.size(); k++) {
      int64_t span = 0;
      if (__builtin_mul_overflow(t.size[k] - 1, t.stride[k], &span) || __builtin_add_overflow(last, span, &last))
        fail("size ", shape_str(t.size), " with stride ", shape_str(t.stride), " overflows");
    }
    if (last >= storage.i)
      fail("size ", shape_str(t.size), ", stride ", shape_str(t.stride), " and offset ", t.i, " reach element ", last,
           " of a storage of ", storage.i);
  }
  TensorLayout l{Shape(t.size.begin(), t.size.end()), numel, true};
  for (size_t k = t.size.size(), run = 1; k-- > 0; run *= static_cast<size_t>(t.size[k]))
    l.contiguous = l.contiguous && (t.size[k] == 1 || t.stride[k] == static_cast<int64_t>(run));
  return l;
}

// a tensor's elements, copied from its storage (gathered by its offset and strides when they aren't one run) into a
// realized contiguous buffer
Tensor rebuild_tensor(const PyObj& t, const PyObj& storage, std::span<const uint8_t> bytes, const std::string& name,
                      const std::string& what, const std::string& device) {
  auto [shape, numel, contiguous] = check_tensor(t, storage, bytes.size(), name, what);
  const int64_t isz = storage.dtype.itemsize();
  if (numel == 0) return realized_from_bytes(bytes.data(), storage.dtype, shape, device);
  if (contiguous) return realized_from_bytes(bytes.data() + t.i * isz, storage.dtype, shape, device);
  std::vector<uint8_t> host(static_cast<size_t>(numel * isz));
  std::vector<int64_t> idx(t.size.size(), 0);
  for (int64_t n = 0; n < numel; n++) {  // row-major over the tensor, each element from its strided place
    int64_t src = t.i;
    for (size_t k = 0; k < idx.size(); k++) src += idx[k] * t.stride[k];
    std::memcpy(host.data() + n * isz, bytes.data() + src * isz, static_cast<size_t>(isz));
    for (size_t k = idx.size(); k-- > 0;) {
      if (++idx[k] < t.size[k]) break;
      idx[k] = 0;
    }
  }
  return realized_from_bytes(host.data(), storage.dtype, shape, device);
}

// every tensor of the archive's pickle (torch_load's path and tensor forms). With `disk` (the file on DISK, whose
// mapping `bytes` is), a tensor that is one run of a stored (not deflated) entry is a lazy view of the file, copied
// to dev when it is used; the others are read now.
StateDict load_archive(std::span<const uint8_t> bytes, const std::string& what, const std::string& dev,
                       const Tensor* disk) {
  ZipReader zip(bytes, what);
  std::string prefix;
  for (const std::string& n : zip.names())
    if (n.size() >= 9 && n.compare(n.size() - 9, 9, "/data.pkl") == 0 && n.find('/') == n.size() - 9)
      prefix = n.substr(0, n.size() - 8);
  if (prefix.empty()) zip.fail("no <name>/data.pkl in the archive (entries: ", join(zip.names(), ", "), ")");
  if (const ZipEntry* bo = zip.find(prefix + "byteorder")) {
    std::vector<uint8_t> scratch;
    std::span<const uint8_t> b = zip.read(*bo, scratch);
    if (std::string(b.begin(), b.end()) != "little")
      zip.fail("byteorder ", py_str_repr(std::string(b.begin(), b.end())), ": only little-endian checkpoints load");
  }
  std::vector<uint8_t> pkl_scratch;
  Unpickler up(zip.read(*zip.find(prefix + "data.pkl"), pkl_scratch), what);
  Ref root = up.load();

  // a storage's bytes, inflated once however many tensors view it
  std::unordered_map<std::string, std::vector<uint8_t>> inflated;
  auto storage_bytes = [&](const std::string& key, const std::string& tensor) {
    const ZipEntry* e = zip.find(prefix + "data/" + key);
    if (e == nullptr)
      zip.fail("tensor ", py_str_repr(tensor), ": its storage ", py_str_repr(prefix + "data/" + key),
               " is not in the archive");
    auto [it, fresh] = inflated.try_emplace(key);
    return fresh || e->method == 0 ? zip.read(*e, it->second) : std::span<const uint8_t>(it->second);
  };

  // every tensor reachable through dicts, lists and tuples, under its dotted path ("model.conv.weight", "hist.0")
  StateDict out;
  std::unordered_set<Ref> seen;
  std::vector<std::pair<Ref, std::string>> todo{{root, ""}};
  while (!todo.empty()) {
    auto [r, name] = todo.back();
    todo.pop_back();
    const PyObj& x = up.o(r);
    auto child = [&, n = name](const std::string& k) { return n.empty() ? k : n + "." + k; };
    if (x.kind == Kind::Tensor) {
      const PyObj& st = up.o(x.storage);
      std::span<const uint8_t> b = storage_bytes(st.s, name);
      if (const ZipEntry* e = zip.find(prefix + "data/" + st.s); disk != nullptr && e->method == 0) {
        TensorLayout l = check_tensor(x, st, b.size(), name, what);
        if (l.contiguous && l.numel > 0) {
          int64_t isz = st.dtype.itemsize(), off = (b.data() - bytes.data()) + x.i * isz;
          Tensor v = disk->shrink({{off, off + l.numel * isz}}).bitcast(st.dtype).reshape(l.shape).to(dev);
          out.insert_or_assign(name, v);
          continue;
        }
      }
      out.insert_or_assign(name, rebuild_tensor(x, st, b, name, what, dev));
      continue;
    }
    if (!seen.insert(r).second) continue;  // a container reached twice (or a cycle) is walked once
    if (x.kind == Kind::Dict) {
      for (size_t k = x.dict.size(); k-- > 0;) {  // reversed onto the stack: visited in the dict's order
        const PyObj& key = up.o(x.dict[k].first);
        std::string ks = key.kind == Kind::Str ? key.s : key.kind == Kind::Int ? std::to_string(key.i) : "";
        if (!ks.empty()) todo.push_back({x.dict[k].second, child(ks)});
      }
    } else if (x.kind == Kind::List || x.kind == Kind::Tuple) {
      for (size_t k = x.items.size(); k-- > 0;) todo.push_back({x.items[k], child(std::to_string(k))});
    }
  }
  return out;
}

StateDict load_archive_bytes(std::span<const uint8_t> bytes, const std::string& what, const std::string& dev) {
  return load_archive(bytes, what, dev, nullptr);
}

}  // namespace

StateDict torch_load(const std::string& path, std::optional<std::string> device) {
  return torch_load(Tensor::from_file(path), std::move(device));
}
StateDict torch_load(const Tensor& file, std::optional<std::string> device) {
  if (!is_disk_file(file)) return load_file(file, device, "torch_load", load_archive_bytes);
  // on DISK: the archive's directory and pickle are read from the mapping, the tensors' bytes when they are used
  DiskBytes f(file, "torch_load");
  return load_archive(f.bytes(), py_str_repr(f.path()), canonical_device(device), &file);
}

}  // namespace tg::nn::state
