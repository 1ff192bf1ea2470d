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

// the first nbytes of the regular file open at fd, mapped into memory (prot and flags as mmap's: MAP_SHARED for DISK,
// MAP_PRIVATE for a copy-on-write buffer in host memory), with read-ahead advised. A file shorter than nbytes is
// extended where `extend`, else an Error that ends with `short_note`. fd is closed either way; an Error starts with
// `what` and says why the file can't be mapped.
void* map_file(int fd, size_t nbytes, int prot, int flags, bool extend, const std::string& what,
               const std::string& short_note = "");

}  // namespace tg
