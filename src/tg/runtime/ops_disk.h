#pragma once
// runtime: the DISK device (tinygrad's ops_disk.py). "DISK:/path/to/file" is one device per file: its buffers are
// byte ranges of the file mapped into memory (mmap, MAP_SHARED), so a view of a disk tensor (shrink, reshape,
// bitcast) costs nothing, a copy to another device reads only the bytes it covers, and a copy into it (`assign`,
// `.to("disk:...")`) writes the file. The file is opened with the first buffer and closed with the last; a missing
// file is created (and a short one extended) when it can be written, as the reference does. DISK runs no kernels: a
// computation on a disk tensor is a NotImplementedError telling to copy it to a device first.
#include <memory>
#include <string>

#include "tg/runtime/device.h"

namespace tg {

std::unique_ptr<Compiled> open_disk_device(const std::string& device);

}  // namespace tg
