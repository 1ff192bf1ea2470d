#include "tg/uop/trace.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tg/helpers/json.h"
#include "tg/helpers/knobs.h"
#include "tg/uop/upat.h"

extern char** environ;

namespace tg::trace {

struct Step {
  int64_t id;
};

namespace {

std::atomic<int64_t> current_ctx{-1};  // the context opened last
thread_local int depth = 0;            // named rewrites running on this thread

std::string default_shape_str(const UOp&) { return ""; }
std::atomic<ShapeStrHook> shape_hook{default_shape_str};

// what a label says of a node as a source that the graph leaves out (CONST, DEVICE, UNIQUE): python's str(arg), and
// format(arg, 'g') of a number (for a float parent)
std::string g_format(const Arg& a) {
  const auto* c = std::get_if<ConstValue>(&a);
  if (c == nullptr) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", as_double(*c));
  return buf;
}

// a source file's path as the trace names it: relative to the checkout this library was built from
std::string source_path(const char* file) {
  std::string_view f(file);
#ifdef TG_SOURCE_DIR
  constexpr std::string_view root = TG_SOURCE_DIR "/";
  if (f.substr(0, root.size()) == root) f.remove_prefix(root.size());
#endif
  return std::string(f);
}

// tinygrad's word_wrap: lines of at most 80 characters, unless a newline comes first
std::string word_wrap(const std::string& x, size_t wrap = 80) {
  std::string out;
  size_t i = 0;
  while (x.size() - i > wrap && x.find('\n', i) >= i + wrap) {
    out += x.substr(i, wrap) + "\n";
    i += wrap;
  }
  return out + x.substr(i);
}

std::string label_of(const UOp& u, const std::string& view_text, const std::string& arg) {
  std::string argst = u.op() == Ops::VIEW && !view_text.empty() ? view_text : arg;
  std::erase(argst, ':');
  std::string label = std::string(op_name(u.op()));
  if (!is_none(u.arg())) label += "\n" + word_wrap(argst);
  if (u.dtype() != dtypes::void_) label += "\n" + u.dtype().repr();
  return label;
}

class Writer {
 public:
  static Writer& get() {
    static Writer* w = new Writer();  // never destroyed: contexts may close during static destruction
    return *w;
  }
  std::mutex mu;

  bool open() {
    if (f_ != nullptr) return true;
    if (failed_) return false;
    path_ = VIZ_TRACE;
    if (path_.empty()) {
      std::string dir = TMPDIR;
      path_ = cat(dir, "/tinygrad_viz_", ::getpid(), ".trace");
    }
    f_ = std::fopen(path_.c_str(), "w");
    if (f_ == nullptr) {
      failed_ = true;
      std::cerr << "VIZ: cannot write the trace to " << path_ << ": " << std::strerror(errno) << "\n";
      return false;
    }
    std::fputs("{\"tinygrad_viz_trace\":1}\n", f_);
    std::atexit(at_exit);
    return true;
  }
  void line(const json::Value& v) {
    std::string s = v.dump();
    s += '\n';
    std::fwrite(s.data(), 1, s.size(), f_);
  }
  void flush() {
    if (f_ != nullptr) std::fflush(f_);
  }
  const std::string& path() const { return path_; }

  int64_t new_ctx() { return next_ctx_++; }
  int64_t new_step() { return next_step_++; }

  // the trace's number for a node (and its graph), writing the records of nodes not written before
  int64_t intern(const UOp& root) {
    std::vector<const UOpNode*> stack{root.get()};
    while (!stack.empty()) {
      const UOpNode* n = stack.back();
      if (cached(n) >= 0) {
        stack.pop_back();
        continue;
      }
      bool ready = true;
      for (const UOp& s : n->src)
        if (cached(s.get()) < 0) ready = false, stack.push_back(s.get());
      if (!ready) continue;
      stack.pop_back();
      add(UOp::borrow(n));
    }
    return cached(root.get());
  }

  int64_t rule(const char* file, int line_no, const UPat& pat) {
    auto it = rules_.find(pat.get());
    if (it != rules_.end()) return it->second.second;
    int64_t id = static_cast<int64_t>(rules_.size());
    rules_.emplace(pat.get(), std::make_pair(pat, id));  // holds the pattern, so its address is never reused
    line(json::Object{{"rule", id}, {"file", source_path(file)}, {"line", line_no}, {"pat", pat.repr()}});
    return id;
  }

 private:
  // a node seen before: its number, when its hash and its sources' numbers still agree (a dead node's address may
  // be reused by another node); else -1
  int64_t cached(const UOpNode* n) const {
    auto it = seen_.find(n);
    if (it == seen_.end() || it->second.first != n->hash) return -1;
    const std::vector<int64_t>& want = src_ids_[static_cast<size_t>(it->second.second)];
    if (want.size() != n->src.size()) return -1;
    for (size_t i = 0; i < want.size(); i++) {
      auto c = seen_.find(n->src[i].get());
      if (c == seen_.end() || c->second.first != n->src[i].get()->hash || c->second.second != want[i]) return -1;
    }
    return it->second.second;
  }
  void add(const UOp& u) {
    std::vector<int64_t> src;
    for (const UOp& s : u.src()) src.push_back(seen_.at(s.get()).second);
    json::Value ref;  // a KERNEL's ast: its number in the trace (the ref of the kernel's context), given first
    if (const auto* o = std::get_if<ObjectArg>(&u.arg()); o != nullptr && *o != nullptr)
      if (const UOp* ast = (*o)->kernel_ast()) ref = intern(*ast);
    std::string head = repr_head(u), key = head;
    for (int64_t s : src) key += "," + std::to_string(s);
    auto [it, fresh] = nodes_.try_emplace(key, static_cast<int64_t>(src_ids_.size()));
    int64_t id = it->second;
    if (fresh) {
      std::string shape;
      try {
        shape = shape_hook.load(std::memory_order_acquire)(u);
      } catch (const std::exception&) {
        shape = "<ISSUE GETTING SHAPE>";
      }
      std::string view_text, node_shape = shape;
      if (u.op() == Ops::VIEW) view_text = shape, node_shape.clear();
      json::Array srcs(src.begin(), src.end());
      const std::string arg = arg_str(u.arg());
      line(json::Object{
          {"n", json::Array{id, std::string(op_name(u.op())), head, label_of(u, view_text, arg), node_shape,
                            std::move(srcs), arg, g_format(u.arg()), ref, dtypes::is_float(u.dtype()),
                            is_none(u.tag()) ? json::Value() : json::Value(arg_str(u.tag()))}}});
      src_ids_.push_back(src);
    }
    seen_[u.get()] = {u.get()->hash, id};
  }

  static void at_exit();

  FILE* f_ = nullptr;
  bool failed_ = false;
  std::string path_;
  int64_t next_ctx_ = 0, next_step_ = 0;
  std::unordered_map<std::string, int64_t> nodes_;                         // head + source numbers -> number
  std::vector<std::vector<int64_t>> src_ids_;                              // number -> its sources' numbers
  std::unordered_map<const UOpNode*, std::pair<uint64_t, int64_t>> seen_;  // node -> (hash, number)
  std::unordered_map<const UPatNode*, std::pair<UPat, int64_t>> rules_;
};

std::mutex profile_mu;
std::string profile_file;
std::string profile_path() {
  std::lock_guard lock(profile_mu);
  return profile_file;
}

// the tinygrad-viz program: $TINYGRAD_VIZ, the build's, the installed one, or the one on PATH
std::string viz_program() {
  if (std::string p = TINYGRAD_VIZ; !p.empty()) return p;
  std::vector<std::string> candidates;
#ifdef TG_VIZ_PROGRAM
  candidates.push_back(TG_VIZ_PROGRAM);
#endif
#ifdef TG_VIZ_INSTALLED
  candidates.push_back(TG_VIZ_INSTALLED);
#endif
  for (const std::string& p : candidates)
    if (::access(p.c_str(), X_OK) == 0) return p;
  return "tinygrad-viz";
}

void Writer::at_exit() {
  Writer& w = get();
  std::string path;
  {
    std::lock_guard lock(w.mu);
    if (w.f_ == nullptr) return;
    std::fclose(w.f_);
    w.f_ = nullptr;
    path = w.path_;
  }
  std::string prog = viz_program();
  const bool serve = VIZ > 0 && ::isatty(0) && ::isatty(1) && CI.value().empty();
  if (!serve) {
    std::cout << std::flush;
    std::cerr << "VIZ: trace written to " << path << " (view it with: " << prog << " " << path << ")\n";
    return;
  }
  std::cout << std::flush;
  std::vector<std::string> args{prog, path};
  if (std::string p = profile_path(); !p.empty()) args.insert(args.end(), {"--profile", p});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, prog.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    std::cerr << "VIZ: cannot start " << prog << " (set TINYGRAD_VIZ to its path); the trace is " << path << "\n";
    return;
  }
  // the server stops on Ctrl-C; the program keeps its own exit code
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old, nullptr);
}

}  // namespace

bool enabled() {
  static const bool on = VIZ != 0;
  return on;
}

void set_profile_path(const std::string& path) {
  std::lock_guard lock(profile_mu);
  profile_file = path;
}

void set_shape_str_hook(ShapeStrHook hook) { shape_hook.store(hook, std::memory_order_release); }

std::string trace_path() {
  if (!enabled()) return "";
  Writer& w = Writer::get();
  std::lock_guard lock(w.mu);
  return w.open() ? w.path() : "";
}

void flush() {
  if (!enabled()) return;
  Writer& w = Writer::get();
  std::lock_guard lock(w.mu);
  w.flush();
}

int next_count(const std::string& fn) {
  static std::mutex mu;
  static std::unordered_map<std::string, int> counts;
  std::lock_guard lock(mu);
  return ++counts[fn];
}

TrackedContext::TrackedContext(const std::string& name) {
  if (!enabled()) return;
  Writer& w = Writer::get();
  std::lock_guard lock(w.mu);
  if (!w.open()) return;
  id_ = w.new_ctx();
  w.line(json::Object{{"ctx", id_}, {"name", name}});
  w.flush();
  current_ctx = id_;
  tracking_on = true;
}

TrackedContext::~TrackedContext() {
  if (id_ < 0) return;
  Writer& w = Writer::get();
  std::lock_guard lock(w.mu);
  w.flush();
}

void TrackedContext::set_name(const std::string& name) {
  if (id_ < 0) return;
  Writer& w = Writer::get();
  std::lock_guard lock(w.mu);
  w.line(json::Object{{"ctx", id_}, {"name", name}});
}

void TrackedContext::set_kernel(const std::string& code, const UOp& ast) {
  if (id_ < 0) return;
  Writer& w = Writer::get();
  std::lock_guard lock(w.mu);
  int64_t ref = w.intern(ast);
  w.line(json::Object{{"ctx", id_}, {"kernel_code", code}, {"ref", ref}});
}

StepScope::StepScope(const UOp& sink, const char* name, bool bottom_up, const char* file, int line) : saved_(current) {
  current = nullptr;
  if (name == nullptr || current_ctx < 0) return;
  Writer& w = Writer::get();
  std::lock_guard lock(w.mu);
  step_ = new Step{w.new_step()};
  int64_t sink_id = w.intern(sink);
  w.line(json::Object{{"step", step_->id},
                      {"ctx", current_ctx.load()},
                      {"name", name},
                      {"file", source_path(file)},
                      {"line", line},
                      {"depth", depth},
                      {"bottom_up", bottom_up},
                      {"sink", sink_id}});
  current = step_;
  depth++;
}

StepScope::~StepScope() {
  current = saved_;
  if (step_ == nullptr) return;
  depth--;
  delete step_;
  Writer& w = Writer::get();
  std::lock_guard lock(w.mu);
  w.flush();
}

void record_match(Step* s, const UOp& before, const UOp& after, const char* file, int line, const UPat& pat) {
  Writer& w = Writer::get();
  std::lock_guard lock(w.mu);
  int64_t b = w.intern(before), a = w.intern(after), r = w.rule(file, line, pat);
  w.line(json::Object{{"m", json::Array{s->id, b, a, r}}});
}

void snapshot(const UOp& sink, const char* name, const char* file, int line) {
  if (!tracking()) return;
  StepScope step(sink, name, false, file, line);
}

}  // namespace tg::trace
