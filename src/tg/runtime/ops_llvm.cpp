#include "tg/runtime/ops_llvm.h"

#include <dlfcn.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <vector>

#include "tg/helpers/knobs.h"
#include "tg/renderer/llvmir.h"
#include "tg/runtime/cpu_kernelize.h"
#include "tg/runtime/threadpool.h"

#if TG_HAVE_LLVM_HEADERS
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#endif

namespace tg {

#if TG_HAVE_LLVM_HEADERS && defined(__x86_64__)

namespace {

// the LLVM C API, loaded at run time (libLLVM-N.so), so the library links and runs without it
// clang-format off
#define TG_LLVM_FNS(X) \
  X(LLVMInitializeX86TargetInfo) \
  X(LLVMInitializeX86Target) \
  X(LLVMInitializeX86TargetMC) \
  X(LLVMInitializeX86AsmPrinter) \
  X(LLVMInitializeX86AsmParser) \
  X(LLVMGetDefaultTargetTriple) \
  X(LLVMGetTargetFromTriple) \
  X(LLVMGetHostCPUName) \
  X(LLVMGetHostCPUFeatures) \
  X(LLVMDisposeMessage) \
  X(LLVMCreateTargetMachine) \
  X(LLVMCreateTargetDataLayout) \
  X(LLVMSetModuleDataLayout) \
  X(LLVMSetTarget) \
  X(LLVMDisposeTargetData) \
  X(LLVMContextCreate) \
  X(LLVMContextDispose) \
  X(LLVMCreateMemoryBufferWithMemoryRangeCopy) \
  X(LLVMParseIRInContext) \
  X(LLVMVerifyModule) \
  X(LLVMDisposeModule) \
  X(LLVMCreatePassBuilderOptions) \
  X(LLVMDisposePassBuilderOptions) \
  X(LLVMRunPasses) \
  X(LLVMGetErrorMessage) \
  X(LLVMDisposeErrorMessage) \
  X(LLVMTargetMachineEmitToMemoryBuffer) \
  X(LLVMGetBufferStart) \
  X(LLVMGetBufferSize) \
  X(LLVMDisposeMemoryBuffer) \
  X(LLVMPrintModuleToString) \
  X(LLVMOrcCreateLLJIT) \
  X(LLVMOrcDisposeLLJIT) \
  X(LLVMOrcLLJITGetMainJITDylib) \
  X(LLVMOrcLLJITGetGlobalPrefix) \
  X(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess) \
  X(LLVMOrcJITDylibAddGenerator) \
  X(LLVMOrcLLJITAddObjectFile) \
  X(LLVMOrcLLJITLookup)
// clang-format on

struct LLVMApi {
#define TG_X(f) decltype(&::f) f = nullptr;
  TG_LLVM_FNS(TG_X)
#undef TG_X
  std::string library;  // the file it came from
};

// the first libLLVM that loads and has every function, newest first; an Error saying what was tried otherwise
const LLVMApi& llvm_api() {
  static const LLVMApi* api = []() -> const LLVMApi* {
    std::string tried;
    std::string env = LLVM_LIBRARY;
    std::vector<std::string> names;
    if (!env.empty()) names.push_back(env);
    names.push_back(cat("libLLVM-", TG_LLVM_MAJOR, ".so.1"));  // the headers' own version first
    for (int v = 19; v >= 15; v--)
      names.push_back(cat("libLLVM-", v, ".so.1")), names.push_back(cat("libLLVM-", v, ".so"));
    for (const std::string& n : names) {
      void* h = ::dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) continue;
      auto* a = new LLVMApi();
      bool ok = true;
#define TG_X(f)                                                           \
  if (ok && !(a->f = reinterpret_cast<decltype(&::f)>(::dlsym(h, #f)))) { \
    tried += cat(" ", n, " (no ", #f, ")");                               \
    ok = false;                                                           \
  }
      TG_LLVM_FNS(TG_X)
#undef TG_X
      if (!ok) {
        delete a;
        ::dlclose(h);
        continue;
      }
      a->library = n;
      return a;  // NOTE: never closed: programs hold code in it until the process ends
    }
    return nullptr;
  }();
  TG_CHECK(api != nullptr,
           "no usable libLLVM (tried libLLVM-15 .. 19; LLVM_LIBRARY names another): install llvm-16-dev");
  return *api;
}

std::string take_error(const LLVMApi& L, LLVMErrorRef e) {
  char* m = L.LLVMGetErrorMessage(e);
  std::string s = m;
  L.LLVMDisposeErrorMessage(m);
  return s;
}
std::string take_message(const LLVMApi& L, char* m) {
  std::string s = m ? m : "";
  if (m) L.LLVMDisposeMessage(m);
  return s;
}

// A target machine for the host. LLVM's codegen may run on several threads at once, each on its own target machine
// and context: compiles lease one from a pool (made on first need, kept for the next compile).
struct HostTarget {
  const LLVMApi& L;
  LLVMTargetMachineRef tm = nullptr;
  std::string triple, cpu, features;
  explicit HostTarget(const LLVMApi& api) : L(api) {
    static std::once_flag init;
    std::call_once(init, [&] {
      L.LLVMInitializeX86TargetInfo(), L.LLVMInitializeX86Target(), L.LLVMInitializeX86TargetMC();
      L.LLVMInitializeX86AsmPrinter(), L.LLVMInitializeX86AsmParser();
    });
    triple = take_message(L, L.LLVMGetDefaultTargetTriple());
    if (const CpuTarget& ct = cpu_target(); ct.arch != "native") {  // CPU_ARCH: LLVM knows the -march names too
      cpu = ct.arch;
    } else {
      cpu = take_message(L, L.LLVMGetHostCPUName());
      features = take_message(L, L.LLVMGetHostCPUFeatures());
    }
    LLVMTargetRef target = nullptr;
    char* err = nullptr;
    TG_CHECK(L.LLVMGetTargetFromTriple(triple.c_str(), &target, &err) == 0, "LLVM: no target for ", triple, ": ",
             take_message(L, err));
    tm = L.LLVMCreateTargetMachine(target, triple.c_str(), cpu.c_str(), features.c_str(), LLVMCodeGenLevelDefault,
                                   LLVMRelocPIC, LLVMCodeModelDefault);
    TG_CHECK(tm != nullptr, "LLVM: can't create a target machine for ", triple, " ", cpu);
  }
};

class TargetLease {
 public:
  TargetLease() {
    {
      std::lock_guard lock(mu());
      if (!pool().empty()) {
        t_ = pool().back().release();
        pool().pop_back();
      }
    }
    if (t_ == nullptr) t_ = new HostTarget(llvm_api());  // a few ms: not under the lock
  }
  ~TargetLease() {
    std::lock_guard lock(mu());
    pool().emplace_back(t_);
  }
  TargetLease(const TargetLease&) = delete;
  TargetLease& operator=(const TargetLease&) = delete;
  HostTarget* operator->() const { return t_; }

 private:
  // never freed: LLVM's own globals may go first at exit
  static std::vector<std::unique_ptr<HostTarget>>& pool() {
    static auto* p = new std::vector<std::unique_ptr<HostTarget>>();
    return *p;
  }
  static std::mutex& mu() {
    static std::mutex m;
    return m;
  }
  HostTarget* t_ = nullptr;
};

}  // namespace

// *** the compiler: IR -> optimized -> an object file (cached on disk, as clang's shared objects) ***

namespace {
// the first function the source defines (the kernel; its entry points come after it), for error messages
std::string kernel_name(const std::string& src) {
  const size_t at = src.find("define void @");
  if (at == std::string::npos) return "(no kernel)";
  const size_t start = at + 13, end = src.find('(', start);
  return src.substr(start, end == std::string::npos ? std::string::npos : end - start);
}
// The passes a kernel gets. Our kernels arrive shaped: tiled, unrolled and vectorized by the optimizer, loops with
// constant trips and preheaders. What they still need is the cleanup of what rendering leaves (CSE, combining, hoisting
// loop-invariant addresses, GVN) and, for kernels written in scalars, the SLP vectorizer. default<O2> adds loop
// unrolling, loop vectorization and induction-variable rewriting on top: measured on one MNIST train step's 180
// kernels (2-core Zen 3), it optimizes in 6.9 s where this takes 1.3 s, and its kernels run no faster (the step:
// 716-762 ms against 637-659 ms). LLVMOPT=0 runs none, LLVMOPT=2 default<O2> (the reference's pipeline).
const std::string& llvm_passes(bool slp) {
  static const std::string cleanup =
      "function(early-cse<>,instcombine,simplifycfg,loop-mssa(licm<allowspeculation>),gvn<>,instcombine,simplifycfg";
  static const std::string light = cleanup + ")", light_slp = cleanup + ",slp-vectorizer,instcombine)";
  static const std::string o2 = "default<O2>", none;
  static const int64_t level = LLVMOPT;  // read once, as the reference reads it (the cache key has it)
  return level <= 0 ? none : level >= 2 ? o2 : slp ? light_slp : light;
}

}  // namespace

LLVMCompiler::LLVMCompiler(bool slp) : Compiler("compile_llvm"), slp_(slp) {
  TargetLease t;
  cache_salt = cat(llvm_api().library, " ", t->triple, " ", t->cpu, " ", t->features, " ", llvm_passes(slp));
}

std::string LLVMCompiler::compile(const std::string& src) {
  TargetLease t;
  const LLVMApi& L = t->L;
  LLVMContextRef ctx = L.LLVMContextCreate();
  LLVMModuleRef mod = nullptr;
  char* err = nullptr;
  LLVMMemoryBufferRef buf = L.LLVMCreateMemoryBufferWithMemoryRangeCopy(src.data(), src.size(), "kernel");
  if (L.LLVMParseIRInContext(ctx, buf, &mod, &err) != 0) {  // takes the buffer
    std::string msg = take_message(L, err);
    L.LLVMContextDispose(ctx);
    throw CompileError(cat("LLVM: can't parse the kernel ", kernel_name(src), ": ", msg, "\n--- source ---\n", src));
  }
  auto fail = [&](const std::string& what) {
    L.LLVMDisposeModule(mod);
    L.LLVMContextDispose(ctx);
    throw CompileError(cat("LLVM: kernel ", kernel_name(src), ": ", what, "\n--- source ---\n", src));
  };
  const bool invalid = L.LLVMVerifyModule(mod, LLVMReturnStatusAction, &err) != 0;
  std::string why = take_message(L, err);  // NOTE: an (empty) message is made even when the module is valid
  if (invalid) fail("invalid kernel: " + why);
  L.LLVMSetTarget(mod, t->triple.c_str());
  LLVMTargetDataRef dl = L.LLVMCreateTargetDataLayout(t->tm);
  L.LLVMSetModuleDataLayout(mod, dl);
  L.LLVMDisposeTargetData(dl);
  if (const std::string& passes = llvm_passes(slp_); !passes.empty()) {
    LLVMPassBuilderOptionsRef pbo = L.LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = L.LLVMRunPasses(mod, passes.c_str(), t->tm, pbo);
    L.LLVMDisposePassBuilderOptions(pbo);
    if (e != nullptr) fail("optimizing: " + take_error(L, e));
  }
  if (DEBUG >= 7) std::cout << take_message(L, L.LLVMPrintModuleToString(mod)) << std::flush;
  LLVMMemoryBufferRef obj = nullptr;
  if (L.LLVMTargetMachineEmitToMemoryBuffer(t->tm, mod, LLVMObjectFile, &err, &obj) != 0)
    fail("codegen: " + take_message(L, err));
  std::string ret(L.LLVMGetBufferStart(obj), L.LLVMGetBufferSize(obj));
  L.LLVMDisposeMemoryBuffer(obj);
  L.LLVMDisposeModule(mod);
  L.LLVMContextDispose(ctx);
  return ret;
}

// *** the program: the object linked into this process by ORC's LLJIT ***

LLVMProgram::LLVMProgram(std::string name_, const std::string& lib, int max_threads)
    : HostProgram(std::move(name_), max_threads) {
  const LLVMApi& L = llvm_api();
  LLVMOrcLLJITRef jit = nullptr;
  if (LLVMErrorRef e = L.LLVMOrcCreateLLJIT(&jit, nullptr))
    throw Error(cat("LLVM: can't create a JIT: ", take_error(L, e)));
  jit_ = jit;
  try {
    LLVMOrcJITDylibRef jd = L.LLVMOrcLLJITGetMainJITDylib(jit);
    LLVMOrcDefinitionGeneratorRef gen = nullptr;  // libm and libc calls resolve in this process
    if (LLVMErrorRef e = L.LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
            &gen, L.LLVMOrcLLJITGetGlobalPrefix(jit), nullptr, nullptr))
      throw Error(cat("LLVM: ", take_error(L, e)));
    L.LLVMOrcJITDylibAddGenerator(jd, gen);
    LLVMMemoryBufferRef obj = L.LLVMCreateMemoryBufferWithMemoryRangeCopy(lib.data(), lib.size(), name.c_str());
    if (LLVMErrorRef e = L.LLVMOrcLLJITAddObjectFile(jit, jd, obj))
      throw Error(cat("LLVM: can't load the kernel ", name, ": ", take_error(L, e)));
    LLVMOrcExecutorAddress addr = 0;
    if (LLVMErrorRef e = L.LLVMOrcLLJITLookup(jit, &addr, cat("tg_entry_", name).c_str()))
      throw Error(cat("LLVM: no tg_entry_", name, " in the kernel: ", take_error(L, e)));
    fxn_ = reinterpret_cast<Entry>(static_cast<uintptr_t>(addr));
    if (max_threads > 0) {
      if (LLVMErrorRef e = L.LLVMOrcLLJITLookup(jit, &addr, cat("tg_entry_threads_", name).c_str()))
        throw Error(cat("LLVM: no tg_entry_threads_", name, " in the kernel: ", take_error(L, e)));
      threaded_ = reinterpret_cast<Threaded>(static_cast<uintptr_t>(addr));
    }
  } catch (...) {
    L.LLVMOrcDisposeLLJIT(jit);
    throw;
  }
}

LLVMProgram::~LLVMProgram() {
  if (jit_ != nullptr) llvm_api().LLVMOrcDisposeLLJIT(static_cast<LLVMOrcLLJITRef>(jit_));
}

// *** the device ***

namespace {

class LLVMDevice : public Compiled {
 public:
  LLVMDevice(const std::string& device, const std::shared_ptr<LLVMRenderer>& r)
      : Compiled(
            device, MallocAllocator::instance(), r, std::make_shared<LLVMCompiler>(true),
            [](const std::string& name, const std::string& lib) { return std::make_unique<LLVMProgram>(name, lib); }),
        llvm_(r) {}

  BuiltProgram build(const ProgramSpec& spec) override {
    std::string src = spec.src;
    const ThreadSplit split = cpu_thread_split(spec);
    if (split.max_threads > 0) {
      std::lock_guard lock(llvm_->mu);
      src = llvm_->render_threaded(spec.uops, *split.range);
    }
    src += llvm_->entry_shim(spec.name, spec.params, split.max_threads > 0);
    static LLVMCompiler no_slp(
        false);  // a vector tile's kernel is vectorized already (as ClangCompiler::vector_kernels)
    Compiler* c = spec.vector_alus && dynamic_cast<LLVMCompiler*>(compiler.get()) ? &no_slp : compiler.get();
    BuiltProgram ret;
    ret.lib = c->compile_cached(src);
    ret.program = std::make_unique<LLVMProgram>(spec.name, ret.lib, split.max_threads);
    return ret;
  }

 private:
  std::shared_ptr<LLVMRenderer> llvm_;
};

}  // namespace

std::unique_ptr<Compiled> open_llvm_device(const std::string& device) {
  llvm_api();  // throws when there is no LLVM to load: the device is unavailable
  auto r = std::make_shared<LLVMRenderer>();
  r->simd_lanes = cpu_target().tile_lanes;
  r->kernelize_matcher = &cpu_kernelize_matcher();
  r->threads = cpu_threads();
  return std::make_unique<LLVMDevice>(device, r);
}

#else

LLVMCompiler::LLVMCompiler(bool) { throw Error("LLVM: built without LLVM's headers (install llvm-16-dev)"); }
std::string LLVMCompiler::compile(const std::string&) { throw Error("LLVM: built without LLVM's headers"); }
LLVMProgram::LLVMProgram(std::string n, const std::string&, int m) : HostProgram(std::move(n), m) {
  throw Error("LLVM: built without LLVM's headers");
}
LLVMProgram::~LLVMProgram() = default;
std::unique_ptr<Compiled> open_llvm_device(const std::string&) {
  throw Error("built without LLVM's headers (install llvm-16-dev and reconfigure)");
}

#endif

}  // namespace tg
