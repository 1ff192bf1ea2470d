#pragma once
// runtime: the CUDA device (tinygrad's ops_cuda.py). CUDA C from the CUDARenderer, compiled by NVRTC into a cubin for
// the device's own architecture (asked from the driver: sm_90 on an H200), loaded and launched through the driver
// API on the device's primary context. libcuda and libnvrtc are opened at run time: the library builds and loads
// without them, and the device then says why it can't open. NVRTC alone is enough to compile (cuda_toolchain):
// CROSS_COMPILE=CUDA:sm_90 compiles every kernel for an H200 on a machine without a GPU.
#include <memory>
#include <string>

#include "tg/runtime/device.h"

namespace tg {

// source -> cubin for arch (sm_90), through NVRTC; a compile error is a CompileError with NVRTC's log
class NVRTCCompiler : public Compiler {
 public:
  explicit NVRTCCompiler(std::string arch);
  std::string compile(const std::string& src) override;
  const std::string arch;

 private:
  std::vector<std::string> options_;
};

std::unique_ptr<Compiled> open_cuda_device(const std::string& device);
Toolchain cuda_toolchain(const std::string& arch);  // the CUDARenderer and NVRTC for arch (default sm_90)

}  // namespace tg
