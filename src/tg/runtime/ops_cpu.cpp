#include "tg/runtime/ops_cpu.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "tg/helpers/knobs.h"
#include "tg/renderer/cstyle.h"
#include "tg/runtime/cpu_kernelize.h"
#include "tg/runtime/threadpool.h"

extern char** environ;

namespace tg {

namespace {

// *** small posix helpers ***

std::string find_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  std::stringstream path(PATH.value());
  for (std::string dir; std::getline(path, dir, ':');) {
    std::string p = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> ret;
  std::istringstream in(s);
  for (std::string w; in >> w;) ret.push_back(w);
  return ret;
}

std::string tmp_dir() { return TMPDIR; }

// a fresh file named <tmp>/tg_<stem>XXXXXX<suffix>, removed with this object
struct TempFile {
  std::string path;
  int fd = -1;
  TempFile(const std::string& stem, const std::string& suffix) {
    std::string templ = cat(tmp_dir(), "/tg_", stem, "XXXXXX", suffix);
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    fd = ::mkstemps(buf.data(), static_cast<int>(suffix.size()));
    TG_CHECK(fd >= 0, "can't create a temp file ", templ, ": ", std::strerror(errno));
    path = buf.data();
  }
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    ::unlink(path.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

void write_all(int fd, const std::string& data, const std::string& what) {
  for (size_t done = 0; done < data.size();) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    TG_CHECK(n > 0, "can't write ", what, ": ", std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

struct RunResult {
  int status;          // exit code, or 128+signal
  std::string output;  // stdout and stderr together
  bool timed_out;      // killed at the deadline
};

// run argv (no shell: nothing in the paths is interpreted), stdin from /dev/null, in a process group of its own so
// that the kill after `seconds` takes the program's children too
RunResult run_process(const std::vector<std::string>& argv, int seconds) {
  int pipefd[2];
  TG_CHECK(::pipe2(pipefd, O_CLOEXEC) == 0, "pipe failed: ", std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid;
  int err = ::posix_spawnp(&pid, cargv[0], &fa, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(pipefd[1]);
  if (err != 0) {
    ::close(pipefd[0]);
    throw CompileError(
        cat("can't run the C compiler ", py_str_repr(argv[0]), ": ", std::strerror(err), " (set CC to a C compiler)"));
  }
  RunResult ret{0, "", false};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(-pid, SIGKILL);
      ret.timed_out = true;
      break;
    }
    pollfd pfd{pipefd[0], POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    ssize_t n = ::read(pipefd[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    ret.output.append(buf, static_cast<size_t>(n));
  }
  ::close(pipefd[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  ret.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return ret;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  TG_CHECK(f, "can't read ", path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

// *** the target ISA ***

namespace {
std::vector<std::string> cc_words() {
  std::string cc = CC;
  if (cc.empty()) cc = find_executable("clang").empty() ? "cc" : "clang";
  std::vector<std::string> w = split_words(cc);
  TG_CHECK(!w.empty(), "CC is blank");
  return w;
}
bool host_has(const std::string& isa) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == "AVX-512") return __builtin_cpu_supports("avx512f");
  if (isa == "AVX2") return __builtin_cpu_supports("avx2");
  return isa == "SSE";
#else
  return isa == "NEON";
#endif
}
}  // namespace

CpuTarget cpu_target_for(const std::string& arch) {
  std::vector<std::string> argv = cc_words();
  argv.insert(argv.end(), {"-march=" + arch, "-dM", "-E", "-x", "c", "/dev/null"});
  RunResult r = run_process(argv, 60);
  if (r.status != 0)
    throw ValueError(cat("CPU_ARCH=", arch, ": the C compiler doesn't know this target (", join(argv, " "),
                         "): ", r.output.substr(0, 300)));
  auto has = [&](const char* macro) { return r.output.find(cat("#define ", macro, " ")) != std::string::npos; };
  CpuTarget t;
  t.arch = arch;
  if (has("__AVX512F__"))
    t.isa = "AVX-512", t.vector_bytes = 64, t.registers = 32, t.tile_lanes = 256;
  else if (has("__AVX2__"))
    t.isa = "AVX2", t.vector_bytes = 32, t.registers = 16, t.tile_lanes = 128;
  else if (has("__ARM_NEON"))
    t.isa = "NEON", t.vector_bytes = 16, t.registers = 32, t.tile_lanes = 128;
  else
    t.isa = "SSE", t.vector_bytes = 16, t.registers = 16, t.tile_lanes = 64;
  t.vnni = has("__AVX512VNNI__") || has("__AVXVNNI__");
  if (!host_has(t.isa))
    throw ValueError(cat("CPU_ARCH=", arch, " compiles for ", t.isa, ", which this machine's CPU can't run"));
  return t;
}

const CpuTarget& cpu_target() {
  static const CpuTarget t = cpu_target_for(CPU_ARCH);
  return t;
}

// *** ClangCompiler ***

const std::vector<std::string>& ClangCompiler::flags() {
  static const std::vector<std::string> ret{"-shared",
                                            "-O2",
                                            "-march=" + cpu_target().arch,
                                            "-fPIC",
                                            "-ffreestanding",
                                            "-fno-math-errno",
                                            "-nostdlib",
                                            "-fno-ident",
                                            "-x",
                                            "c"};
  return ret;
}

ClangCompiler& ClangCompiler::vector_kernels() {
  static ClangCompiler cc({"-fno-slp-vectorize", "-mprefer-vector-width=512"});
  return cc;
}

ClangCompiler::ClangCompiler(std::vector<std::string> extra_flags)
    : Compiler("compile_clang"), extra_(std::move(extra_flags)) {
  cc_ = cc_words();
  const bool clang =
      std::any_of(cc_.begin(), cc_.end(), [](const std::string& w) { return w.find("clang") != std::string::npos; });
  // the compiler's runtime library (compiler-rt's builtins for clang, libgcc for gcc), linked statically: a target
  // without F16C (CPU_ARCH=x86-64-v2) converts half through its calls (__gnu_f2h_ieee ...), which no process has
  std::vector<std::string> q = cc_;
  q.push_back("-print-libgcc-file-name");
  if (clang) q.push_back("-rtlib=compiler-rt");
  try {  // a missing compiler is compile()'s to report
    if (RunResult r = run_process(q, 60); r.status == 0) {
      std::string lib = r.output.substr(0, r.output.find('\n'));
      if (!lib.empty() && ::access(lib.c_str(), R_OK) == 0) rtlib_ = lib;
    }
  } catch (const Error&) {
  }
  if (!clang)  // gcc spells clang's -fno-slp-vectorize differently
    for (std::string& f : extra_)
      if (f == "-fno-slp-vectorize") f = "-fno-tree-slp-vectorize";
  // the salt: the command, and the compiler binary's size and mtime, so an upgraded compiler misses the cache
  std::string salt = join(command(), " ") + " " + rtlib_;
  if (std::string exe = find_executable(cc_[0]); !exe.empty()) {
    struct stat st;
    if (::stat(exe.c_str(), &st) == 0) salt += cat(" @", exe, ":", st.st_size, ":", st.st_mtime);
  }
  cache_salt = salt;
}

std::vector<std::string> ClangCompiler::command() const {
  std::vector<std::string> ret = cc_;
  ret.insert(ret.end(), flags().begin(), flags().end());
  ret.insert(ret.end(), extra_.begin(), extra_.end());
  return ret;
}

std::string ClangCompiler::compile(const std::string& src) {
  TempFile c_file("kernel", ".c"), so_file("kernel", ".so");
  write_all(c_file.fd, src, c_file.path);
  std::vector<std::string> argv = command();
  argv.insert(argv.end(), {c_file.path, "-o", so_file.path});
  if (!rtlib_.empty()) argv.insert(argv.end(), {"-x", "none", rtlib_});  // -x none: an archive, not C
  invocations++;
  RunResult r = run_process(argv, timeout_seconds);
  if (r.timed_out)
    throw CompileError(cat("compile failed: ", join(argv, " "), " ran past ", timeout_seconds, " s and was killed (",
                           src.size(), " bytes of C)\n--- source, first 4000 bytes ---\n", src.substr(0, 4000)));
  if (r.status != 0)
    throw CompileError(
        cat("compile failed: ", join(argv, " "), " exited with ", r.status, "\n", r.output, "\n--- source ---\n", src));
  return read_file(so_file.path);
}

// *** CPUProgram ***

CPUProgram::CPUProgram(std::string name_, const std::string& lib, int max_threads)
    : HostProgram(std::move(name_), max_threads) {
  // memfd: nothing touches the disk and nothing is left behind if we crash; a temp file where memfd is missing
  std::string path;
  fd_ = ::memfd_create(cat("tg_", this->name).c_str(), MFD_CLOEXEC);
  if (fd_ >= 0) {
    write_all(fd_, lib, "the kernel's memfd");
    path = cat("/proc/self/fd/", fd_);
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (handle_ == nullptr) {  // no memfd, or no /proc
    if (fd_ >= 0) ::close(fd_), fd_ = -1;
    std::string templ = cat(tmp_dir(), "/tg_", this->name, "_XXXXXX.so");
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    int fd = ::mkstemps(buf.data(), 3);
    TG_CHECK(fd >= 0, "can't create a temp file ", templ, ": ", std::strerror(errno));
    path_ = buf.data();
    try {
      write_all(fd, lib, path_);
    } catch (const Error&) {
      ::close(fd), ::unlink(path_.c_str());
      throw;
    }
    ::close(fd);
    handle_ = ::dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      std::string err = ::dlerror();
      ::unlink(path_.c_str());
      throw Error(cat("can't load the kernel ", this->name, ": ", err));
    }
  }
  std::string entry = "tg_entry_" + this->name;
  void* sym = ::dlsym(handle_, entry.c_str());
  if (sym == nullptr) {
    release();  // the constructor throws, so the destructor will not run
    throw Error(cat("no ", entry, " in the compiled kernel: the source must define the entry shim"));
  }
  fxn_ = reinterpret_cast<Entry>(sym);
  if (void* t = ::dlsym(handle_, ("tg_entry_threads_" + this->name).c_str())) threaded_ = reinterpret_cast<Threaded>(t);
}

CPUProgram::~CPUProgram() { release(); }

void CPUProgram::release() {
  if (handle_ != nullptr) ::dlclose(handle_), handle_ = nullptr;
  if (fd_ >= 0) ::close(fd_), fd_ = -1;
  if (!path_.empty()) ::unlink(path_.c_str()), path_.clear();
}

int HostProgram::cores(Dims global_size) const {
  if (threaded_ == nullptr) return 1;
  return max_threads_ > 0 ? std::min(max_threads_, cpu_threads())
                          : static_cast<int>(std::clamp<int64_t>(global_size[0], 1, 1024));
}

// four shares a core: a core whose worker wakes late (microseconds on a VM) has the rest of its shares taken over
int HostProgram::share_count(int cores) const { return max_threads_ > 0 ? std::min(max_threads_, 4 * cores) : cores; }

// NOTE: the shim only reads both arrays; int64_t is long here, the same bits as long long, and the shim lives in
// another (dlopen'ed) object, so no aliasing assumption spans the call
static_assert(sizeof(long long) == sizeof(int64_t));
static void** shim_bufs(std::span<const Opaque> bufs) { return const_cast<void**>(bufs.data()); }
static const long long* shim_vals(std::span<const int64_t> vals) {
  return reinterpret_cast<const long long*>(vals.data());
}

std::optional<Program::Shares> HostProgram::shares(std::span<const Opaque> bufs, std::span<const int64_t> vals,
                                                   Dims global_size) {
  void** b = shim_bufs(bufs);
  const long long* v = shim_vals(vals);
  const int c = cores(global_size);
  if (c == 1) return Shares{1, 1, [b, v, f = fxn_](int) { f(b, v); }};
  threaded_runs++;
  const int n = share_count(c);
  return Shares{n, c, [b, v, n, t = threaded_](int share) { t(b, v, share, n); }};
}

std::optional<double> HostProgram::call(std::span<const Opaque> bufs, std::span<const int64_t> vals, bool wait,
                                        Dims global_size, std::optional<Dims>) {
  void** b = shim_bufs(bufs);
  const long long* v = shim_vals(vals);
  const int c = cores(global_size);
  auto run = [&] {
    if (c == 1) return fxn_(b, v);
    threaded_runs++;
    const int n = share_count(c);
    Threaded t = threaded_;
    parallel_for(
        n, [&](int share) { t(b, v, share, n); }, c);
  };
  if (!wait) {
    run();
    return std::nullopt;
  }
  auto st = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count();
}

// *** the device ***

namespace {

// Whether a kernel takes long enough that splitting it across cores beats the few microseconds it costs to wake
// them: its estimated single-core time (at a few GFLOP/s and ~10 GB/s) against ~20 us.
bool worth_threads(const Estimates& e) {
  return static_cast<double>(e.ops) / 3.0 + static_cast<double>(e.lds) / 10.0 >= 20000.0;
}

}  // namespace

ThreadSplit cpu_thread_split(const ProgramSpec& spec) {
  // a kernel big enough to pay for waking the other cores, with an outermost loop they can share
  if (!worth_threads(spec.estimates)) return {};
  std::optional<UOp> split = ClangRenderer::thread_split_range(spec.uops, spec.first_reduce);
  if (!split) return {};
  const int64_t trips = as_int(split->src(0).vmax());
  if (trips <= 1) return {};
  return ThreadSplit{split, static_cast<int>(std::min<int64_t>(trips, 1024))};
}

namespace {

class CPUDevice : public Compiled {
 public:
  CPUDevice(const std::string& device, const std::shared_ptr<ClangRenderer>& clang)
      : Compiled(
            device, MallocAllocator::instance(), clang, std::make_shared<ClangCompiler>(),
            [](const std::string& name, const std::string& lib) { return std::make_unique<CPUProgram>(name, lib); }),
        clang_(clang) {}

  BuiltProgram build(const ProgramSpec& spec) override {
    std::string src = spec.src;
    const ThreadSplit split = cpu_thread_split(spec);
    const int max_threads = split.max_threads;
    if (max_threads > 0) {
      std::lock_guard lock(clang_->mu);
      src = clang_->render_threaded(spec.uops, *split.range);
    }
    src += clang_->entry_shim(spec.name, spec.params, max_threads > 0);
    // a vector tile's kernel keeps its vector ALUs: vector_kernels() turns them into wide FMAs
    Compiler* c = compiler.get();
    if (spec.vector_alus && dynamic_cast<ClangCompiler*>(c) != nullptr) c = &ClangCompiler::vector_kernels();
    BuiltProgram ret;
    ret.lib = c->compile_cached(src);
    ret.program = std::make_unique<CPUProgram>(spec.name, ret.lib, max_threads);
    return ret;
  }

 private:
  std::shared_ptr<ClangRenderer> clang_;
};

}  // namespace

std::unique_ptr<Compiled> open_cpu_device(const std::string& device) {
  auto r = std::make_shared<ClangRenderer>();
  r->simd_lanes = cpu_target().tile_lanes;
  r->kernelize_matcher = &cpu_kernelize_matcher();
  r->threads = cpu_threads();
  r->loop_vectorizer = true;
  return std::make_unique<CPUDevice>(device, r);
}

}  // namespace tg
