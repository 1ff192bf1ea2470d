#pragma once
// shared by the test folders: skip a test whose dtype the device under test can't run (half on an OpenCL driver
// without cl_khr_fp16, such as PoCL)
#include <gtest/gtest.h>

#include "tg/runtime/device.h"

#define TG_SKIP_UNLESS_SUPPORTED(dt)                                                                                   \
  do {                                                                                                                 \
    if (!::tg::is_dtype_supported(dt)) GTEST_SKIP() << (dt) << " is not supported on " << ::tg::Device::DEFAULT.str(); \
  } while (0)
