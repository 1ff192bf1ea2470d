#pragma once
// runtime: the OpenCL device, GPU (tinygrad's ops_gpu.py; CL is another name for it). OpenCL C from the
// OpenCLRenderer, built by the driver (clBuildProgram) into its binary, which the disk cache keeps per device and
// driver version; buffers are cl_mem; kernels launch as NDRanges on one in-order, profiling command queue. libOpenCL
// (the ICD loader) is opened at run time: without it, or without a platform, the device is unavailable and says why.
// GPU:N is the N-th device of the first platform (GPUs first, else the platform's default devices). On a machine
// with no GPU, PoCL (OpenCL on the CPU) is such a platform: it runs every GPU code path (work-groups, local memory,
// barriers, the queue, copies).
#include <memory>
#include <string>

#include "tg/runtime/device.h"

namespace tg {

std::unique_ptr<Compiled> open_gpu_device(const std::string& device);
// whether choosing Device::DEFAULT may open GPU at all: not when every installed OpenCL driver is PoCL (it would be
// passed over anyway, and opening it starts its threads and its LLVM in every program)
bool gpu_may_be_default();

}  // namespace tg
