// runtime: the Device registry, Buffer, the CPU device's compiler, disk cache and programs
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "error_of.h"
#include "scoped_env.h"
#include "tg/renderer/cstyle.h"
#include "tg/runtime/device.h"
#include "tg/runtime/diskcache.h"
#include "tg/runtime/ops_cpu.h"

using namespace tg;
using tg::test::ScopedEnv;
namespace fs = std::filesystem;

namespace {

using test::error_of;

// what the C renderer emits: the kernel, then its tg_entry_ shim
const std::string kAddSrc = R"(
void E_4(float* restrict data0, const float* restrict data1, const float* restrict data2) {
  for (int i = 0; i < 4; i++) data0[i] = data1[i] + data2[i];
}
void tg_entry_E_4(void** bufs, const long long* vars) {
  (void)vars;
  E_4((float*)bufs[0], (const float*)bufs[1], (const float*)bufs[2]);
}
)";

// a fresh XDG_CACHE_HOME per test, so cache hits and misses are ours alone
class Runtime : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "tg_rt_cacheXXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    xdg_.emplace("XDG_CACHE_HOME", dir_.c_str());
    nocache_.emplace("DISABLE_COMPILER_CACHE", nullptr);
  }
  void TearDown() override {
    xdg_.reset(), nocache_.reset();
    fs::remove_all(dir_);
  }
  std::string dir_;
  std::optional<ScopedEnv> xdg_, nocache_;
};

// run the add kernel from lib on 4 floats
void check_add(const std::string& lib) {
  Buffer a("CPU", 4, dtypes::float32, true), b("CPU", 4, dtypes::float32, true), out("CPU", 4, dtypes::float32, true);
  std::vector<float> av{1, 2, 3, 4}, bv{10, 20, 30, 0.5f}, res(4);
  a.copyin(av.data(), 16), b.copyin(bv.data(), 16);
  CPUProgram prg("E_4", lib);
  std::vector<Opaque> bufs{out.opaque(), a.opaque(), b.opaque()};
  std::optional<double> t = prg(bufs, {}, true);
  ASSERT_TRUE(t.has_value());
  EXPECT_GE(*t, 0.0);
  out.copyout(res.data(), 16);
  EXPECT_EQ(res, (std::vector<float>{11, 22, 33, 4.5f}));
}

}  // namespace

// *** devices ***

TEST(Device, Canonicalize) {
  const std::vector<std::pair<std::string, std::string>> cases{{"cpu", "CPU"},     {"CPU", "CPU"},
                                                               {"CUDA:0", "CUDA"}, {"cuda:1", "CUDA:1"},
                                                               {"gpu", "GPU"},     {"disk:/tmp/a", "DISK:/tmp/a"}};
  for (const auto& [in, expected] : cases) EXPECT_EQ(Device::canonicalize(in), expected) << "input: " << in;
}

TEST(Device, DefaultFromEnv) {
  std::vector<std::pair<std::string, KnobValue>> none{{"DEV", nullptr}};  // no device flags but ours, for the scope
  for (const auto& d : Device::known_devices())
    if (d != "DISK" && d != "NPY") none.emplace_back(d, nullptr);
  Context clear(none);
  {
    ScopedEnv cpu("CPU", "1");
    Device::DEFAULT.reset();
    EXPECT_EQ(Device::DEFAULT.str(), "CPU");
    ScopedEnv py("PYTHON", "1");  // a device need not be usable to be chosen by env, but two is an error
    Device::DEFAULT.reset();
    EXPECT_EQ(error_of([] { (void)Device::DEFAULT.str(); }), "multiple devices set in env: ['CPU', 'PYTHON']");
  }
  {
    ScopedEnv py("PYTHON", "1");
    Device::DEFAULT.reset();
    EXPECT_EQ(Device::DEFAULT.str(), "PYTHON");
  }
  // none set: the first of ALL_DEVICES that opens; PYTHON is not among them
  Device::DEFAULT.reset();
  EXPECT_EQ(Device::DEFAULT.str(), "CPU");
  EXPECT_EQ(Device::canonicalize(), "CPU");
  Device::DEFAULT = "python";
  EXPECT_TRUE(Device::DEFAULT == "PYTHON");
  EXPECT_EQ(&Device::get(), &Device::get("PYTHON"));
  Device::DEFAULT.reset();
}

TEST(Device, UnknownDeviceListsAvailable) {
  // LLVM is there when its library loads (llvm-16-dev): then between CPU and PYTHON, in ALL_DEVICES order; GPU (an
  // OpenCL driver, PoCL in CI) before CPU
  std::vector<std::string> want{"CPU", "PYTHON", "NULL"};
  if (error_of([] { Device::get("LLVM"); }) == "(no error)") want.insert(want.begin() + 1, "LLVM");
  if (error_of([] { Device::get("GPU"); }) == "(no error)") want.insert(want.begin(), "GPU");  // an OpenCL driver
  EXPECT_EQ(Device::get_available_devices(), want);
  const std::string available = join(want, ", ");
  EXPECT_EQ(error_of([] { Device::get("FOO"); }), "unknown device 'FOO'; available: " + available);
  EXPECT_EQ(error_of([] { Device::get("metal"); }),
            "device 'METAL' is not available in this build; available: " + available);
}

TEST(Device, OpenedOnceAndAnnounced) {
  Compiled& cpu = Device::get("cpu");
  EXPECT_EQ(&cpu, &Device::get("CPU:0"));
  EXPECT_EQ(cpu.device, "CPU");
  // a fresh name per run (--gtest_repeat): a device stays open for the life of the process
  static int run = 0;
  std::string name = cat("TESTDEV", run++);
  int opens = 0;
  Device::register_device(cat("testdev", run - 1), [&opens](const std::string& dev) {
    opens++;
    return std::make_unique<Compiled>(dev, MallocAllocator::instance(), std::make_shared<ClangRenderer>(), nullptr,
                                      nullptr);
  });
  ScopedEnv debug("DEBUG", "1");
  testing::internal::CaptureStdout();
  Device::get(name);
  Device::get(cat("testdev", run - 1));
  EXPECT_EQ(testing::internal::GetCapturedStdout(), cat("opened device ", name, " from pid:", ::getpid(), "\n"));
  EXPECT_EQ(opens, 1);
  // a failing factory is an "unavailable" error naming the reason
  Device::register_device("BROKEN", [](const std::string&) -> std::unique_ptr<Compiled> { throw Error("no driver"); });
  std::string err = error_of([] { Device::get("BROKEN"); });
  EXPECT_EQ(err,
            "device 'BROKEN' is unavailable: no driver; available: " + join(Device::get_available_devices(), ", "));
}

// *** buffers ***

TEST(Buffer, AllocCopyRepr) {
  int64_t mem0 = GlobalCounters::mem_used;
  Buffer b("CPU", 4, dtypes::int32);
  EXPECT_EQ(b.repr(), "<buf real:False device:CPU size:4 dtype:dtypes.int>");
  EXPECT_FALSE(b.is_allocated());
  EXPECT_EQ(b.nbytes(), 16);
  b.allocate();
  EXPECT_EQ(b.repr(), "<buf real:True device:CPU size:4 dtype:dtypes.int>");
  EXPECT_EQ(GlobalCounters::mem_used - mem0, 16);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.opaque()) % 64, 0u);
  std::vector<int32_t> in{1, 2, 3, 4}, out(4);
  b.copyin(in.data(), 16).copyout(out.data(), 16);
  EXPECT_EQ(out, in);
  EXPECT_EQ(b.as_bytes().size(), 16u);

  Buffer v = b.view(2, dtypes::int32, 4);
  EXPECT_EQ(v.repr(), "<buf real:False device:CPU size:2 dtype:dtypes.int offset:4>");
  v.allocate();
  EXPECT_EQ(v.repr(), "<buf real:True device:CPU size:2 dtype:dtypes.int offset:4>");
  std::vector<int32_t> vout(2);
  v.copyout(vout.data(), 8);
  EXPECT_EQ(vout, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(v.base(), b);
  EXPECT_EQ(v.view(1, dtypes::int32, 4).offset(), 8);  // a view of a view is a view of the base
  EXPECT_EQ(GlobalCounters::mem_used - mem0, 16);      // views own no memory

  EXPECT_NE(error_of([&] { b.copyin(in.data(), 12); }).find("size mismatch"), std::string::npos);
  EXPECT_EQ(error_of([&] { b.allocate(); }), "can't allocate already allocated buffer");
  EXPECT_EQ(error_of([&] { Buffer("CPU", 4, dtypes::int32).copyin(in.data(), 16); }),
            "can't copyin to unallocated buffer");
  EXPECT_EQ(error_of([&] { b.view(1, dtypes::int32, 16); }), "offset must be less than nbytes: 16 vs 16");
}

TEST(Buffer, BigHostBuffersAlignedForHugePages) {
  // 4 MiB and more: 2 MiB aligned and advised onto huge pages (MADVISE_HUGEPAGE=0: 64-byte aligned as the rest)
  auto host = MallocAllocator::instance();
  const size_t big = (size_t(4) << 20) + 12, small = (size_t(4) << 20) - 64;
  std::vector<uint8_t> in(big), out(big);
  for (size_t i = 0; i < big; i++) in[i] = static_cast<uint8_t>(i * 7);
  for (const char* env : {"1", "0"}) {
    ScopedEnv e("MADVISE_HUGEPAGE", env);
    Opaque b = host->alloc(big, {.nolru = true}), s = host->alloc(small, {.nolru = true});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % (env[0] == '1' ? size_t(2) << 20 : 64), 0u) << env;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s) % 64, 0u) << env;
    host->copyin(b, in.data(), big);
    host->copyout(out.data(), b, big);
    EXPECT_EQ(out, in) << env;
    host->free(b, big, {.nolru = true});
    host->free(s, small, {.nolru = true});
  }
}

TEST(Buffer, FreedWithLastReference) {
  int64_t mem0 = GlobalCounters::mem_used;
  {
    Buffer a("CPU", 8, dtypes::float32, true);
    Buffer v = a.view(4, dtypes::float32, 16).ensure_allocated();
    {
      Buffer copy = a;
      EXPECT_EQ(copy, a);
    }
    a = Buffer();  // the view still holds the base
    EXPECT_TRUE(v.base().is_allocated());
    EXPECT_EQ(GlobalCounters::mem_used - mem0, 32);
  }
  EXPECT_EQ(GlobalCounters::mem_used - mem0, 0);
  Buffer b("PYTHON", 2, dtypes::float64, true);  // host memory on the PYTHON device too
  b.deallocate();
  EXPECT_FALSE(b.is_allocated());
  EXPECT_EQ(GlobalCounters::mem_used - mem0, 0);
}

TEST(Buffer, GlobalCountersReset) {
  GlobalCounters::kernel_count = 3, GlobalCounters::global_ops = 5, GlobalCounters::time_sum_s = 1.5;
  int64_t mem = GlobalCounters::mem_used;
  GlobalCounters::reset();
  EXPECT_EQ(GlobalCounters::kernel_count, 0);
  EXPECT_EQ(GlobalCounters::global_ops, 0);
  EXPECT_EQ(GlobalCounters::time_sum_s, 0.0);
  EXPECT_EQ(GlobalCounters::mem_used, mem);  // as tinygrad: not reset
}

// *** the CPU device ***

TEST_F(Runtime, CompileAndRunAdd) {
  Compiled& cpu = Device::get("CPU");
  check_add(cpu.compiler->compile_cached(kAddSrc));
  // and through the device's program factory
  auto prg = cpu.runtime("E_4", cpu.compiler->compile_cached(kAddSrc));
  EXPECT_NE(prg, nullptr);
}

TEST_F(Runtime, KernelWithVars) {
  const std::string src = R"(
void r_n(int* restrict data0, int n, int m) { int acc = 0; for (int i = 0; i < n; i++) acc += i * m; data0[0] = acc; }
void tg_entry_r_n(void** bufs, const long long* vars) { r_n((int*)bufs[0], (int)vars[0], (int)vars[1]); }
)";
  ClangCompiler cc;
  CPUProgram prg("r_n", cc.compile(src));
  Buffer out("CPU", 1, dtypes::int32, true);
  std::vector<Opaque> bufs{out.opaque()};
  std::vector<int64_t> vals{10, 3};
  EXPECT_FALSE(prg(bufs, vals).has_value());  // no wait: no timing
  int32_t r = 0;
  out.copyout(&r, 4);
  EXPECT_EQ(r, 135);
}

TEST_F(Runtime, MissingEntryShim) {
  ClangCompiler cc;
  std::string lib = cc.compile("void E_1(float* data0) { data0[0] = 1.0f; }\n");
  EXPECT_EQ(error_of([&] { CPUProgram("E_1", lib); }),
            "no tg_entry_E_1 in the compiled kernel: the source must define the entry shim");
  EXPECT_NE(error_of([&] { CPUProgram("E_1", "not an elf"); }).find("can't load the kernel E_1"), std::string::npos);
}

TEST_F(Runtime, CompileCacheHit) {
  ClangCompiler cc;
  int64_t n0 = ClangCompiler::invocations;
  std::string lib1 = cc.compile_cached(kAddSrc);
  EXPECT_EQ(ClangCompiler::invocations - n0, 1);
  EXPECT_TRUE(fs::exists(diskcache_path(cc.cachekey, cat(cc.cache_salt.size(), ":", cc.cache_salt, kAddSrc))));
  EXPECT_EQ(fs::path(diskcache_path("t", "k")).parent_path().parent_path(), fs::path(dir_) / "tinygrad.cpp");
  std::string lib2 = cc.compile_cached(kAddSrc);
  EXPECT_EQ(ClangCompiler::invocations - n0, 1);  // served from disk
  EXPECT_EQ(lib1, lib2);
  check_add(lib2);
  cc.compile_cached(kAddSrc + "\n// another source\n");
  EXPECT_EQ(ClangCompiler::invocations - n0, 2);
}

TEST_F(Runtime, CompileCacheCorruptEntryRecompiled) {
  ClangCompiler cc;
  int64_t n0 = ClangCompiler::invocations;
  cc.compile_cached(kAddSrc);
  std::string path = diskcache_path(cc.cachekey, cat(cc.cache_salt.size(), ":", cc.cache_salt, kAddSrc));
  ASSERT_TRUE(fs::exists(path));
  auto size = fs::file_size(path);
  {  // flip one byte in the middle of the stored binary
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size - 100));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x5a);
    f.seekp(static_cast<std::streamoff>(size - 100));
    f.write(&c, 1);
  }
  check_add(cc.compile_cached(kAddSrc));
  EXPECT_EQ(ClangCompiler::invocations - n0, 2);  // detected and recompiled (and rewritten)
  cc.compile_cached(kAddSrc);
  EXPECT_EQ(ClangCompiler::invocations - n0, 2);
  fs::resize_file(path, size / 2);  // truncated, as by a crash mid-write without the rename
  check_add(cc.compile_cached(kAddSrc));
  EXPECT_EQ(ClangCompiler::invocations - n0, 3);
  fs::resize_file(path, 10);  // shorter than the header
  check_add(cc.compile_cached(kAddSrc));
  EXPECT_EQ(ClangCompiler::invocations - n0, 4);
}

TEST_F(Runtime, DisableCompilerCache) {
  ClangCompiler cc;
  ScopedEnv off("DISABLE_COMPILER_CACHE", "1");
  int64_t n0 = ClangCompiler::invocations;
  cc.compile_cached(kAddSrc);
  cc.compile_cached(kAddSrc);
  EXPECT_EQ(ClangCompiler::invocations - n0, 2);
  EXPECT_FALSE(fs::exists(fs::path(dir_) / "tinygrad.cpp" / cc.cachekey));  // nothing written either
}

TEST_F(Runtime, CompileErrorCarriesMessageAndSource) {
  ClangCompiler cc;
  const std::string src = "void E_1(float* data0) { data0[0] = this_is_not_defined; }\n";
  try {
    cc.compile_cached(src);
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("this_is_not_defined"), std::string::npos) << msg;
    EXPECT_NE(msg.find("error"), std::string::npos) << msg;  // clang and gcc both say "error: ..."
    EXPECT_NE(msg.find(src), std::string::npos) << msg;
  }
  EXPECT_FALSE(fs::exists(fs::path(dir_) / "tinygrad.cpp" / cc.cachekey));  // failures are not cached
}

TEST_F(Runtime, CompilerFromCC) {
  {
    ScopedEnv env("CC", "cc");
    ClangCompiler cc;
    EXPECT_EQ(cc.command().front(), "cc");
    check_add(cc.compile(kAddSrc));
  }
  {
    ScopedEnv env("CC", "/nonexistent/tg-cc");
    ClangCompiler cc;
    std::string err = error_of([&] { cc.compile(kAddSrc); });
    EXPECT_NE(err.find("can't run the C compiler '/nonexistent/tg-cc'"), std::string::npos) << err;
  }
}

// a compiler stuck past its time is killed with its children (its process group) and named in a CompileError
TEST_F(Runtime, StuckCompilerIsKilledWithItsChildren) {
  fs::path script = fs::path(dir_) / "stuck-cc", pidfile = fs::path(dir_) / "child.pid";
  {
    std::ofstream f(script);  // answers the constructor's runtime-library question at once, then hangs in a child
    f << "#!/bin/sh\ncase \"$*\" in *-print-libgcc-file-name*) exit 1;; esac\nsleep 60 &\necho $! > "
      << pidfile.string() << "\nwait\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  ClangCompiler::flags();  // the target (-march) is asked of the real compiler first, once per process
  ScopedEnv env("CC", script.c_str());
  ClangCompiler cc;
  cc.timeout_seconds = 1;
  auto t0 = std::chrono::steady_clock::now();
  std::string err = error_of([&] { cc.compile(kAddSrc); });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));  // not the child's 60 s
  EXPECT_NE(err.find("ran past 1 s and was killed"), std::string::npos) << err;
  EXPECT_NE(err.find(script.string()), std::string::npos) << err;
  std::ifstream pf(pidfile);
  pid_t child = 0;
  ASSERT_TRUE(pf >> child) << "the script did not start its child";
  bool gone = false;  // killed: gone, or a zombie until init reaps it
  for (int i = 0; i < 100 && !gone; i++) {
    std::ifstream stat(cat("/proc/", child, "/stat"));
    std::string pid_s, comm, state;
    gone = !(stat >> pid_s >> comm >> state) || state == "Z";
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "the compiler's child " << child << " outlived the kill";
}

TEST_F(Runtime, DiskCacheRoundTrip) {
  EXPECT_FALSE(diskcache_get("test_table", "key").has_value());
  std::string value("bin\0ary", 7);
  diskcache_put("test_table", "key", value);
  EXPECT_EQ(diskcache_get("test_table", "key"), value);
  EXPECT_FALSE(diskcache_get("test_table", "key2").has_value());
  diskcache_put("test_table", "key", "");
  EXPECT_EQ(diskcache_get("test_table", "key"), "");
  ScopedEnv off("CACHELEVEL", "0");  // tinygrad's switch for every disk cache
  EXPECT_FALSE(diskcache_get("test_table", "key").has_value());
  diskcache_put("test_table", "key3", "v");
  EXPECT_FALSE(fs::exists(diskcache_path("test_table", "key3")));
}
