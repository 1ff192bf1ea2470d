#pragma once
// runtime: the LLVM device (tinygrad's ops_llvm.py): LLVM IR (renderer/llvmir.h) optimized and compiled in this
// process by LLVM's C API into an object file (disk-cached as the CPU's shared objects), linked into the process by
// ORC's LLJIT. No subprocess, no temporary file. libLLVM is loaded at run time (newest of 19 .. 15, or
// LLVM_LIBRARY): without it the device is unavailable and says why. Programs run as the CPU's do (ops_cpu.h): the
// same entry points, the same thread split, the same vector tiles.
#include <memory>
#include <string>

#include "tg/runtime/ops_cpu.h"

namespace tg {

class LLVMCompiler : public Compiler {
 public:
  explicit LLVMCompiler(bool slp = true);  // slp: the SLP vectorizer (off for kernels written with vector ALUs)
  std::string compile(const std::string& src) override;

 private:
  bool slp_;
};

class LLVMProgram : public HostProgram {
 public:
  LLVMProgram(std::string name, const std::string& lib, int max_threads = 0);  // lib: the object file
  ~LLVMProgram() override;
  LLVMProgram(const LLVMProgram&) = delete;
  LLVMProgram& operator=(const LLVMProgram&) = delete;

 private:
  void* jit_ = nullptr;  // the LLVMOrcLLJITRef that holds the code
};

std::unique_ptr<Compiled> open_llvm_device(const std::string& device);

}  // namespace tg
