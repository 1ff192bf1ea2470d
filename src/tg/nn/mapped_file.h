#pragma once
// a whole file mapped read-only (an empty file maps nothing): safe_load and torch_load read through it
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <string>

#include "tg/helpers/helpers.h"

namespace tg::nn {

class MappedFile {
 public:
  // `what` starts the errors: "safetensors", "torch_load"
  MappedFile(const std::string& path, const char* what) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    TG_CHECK(fd >= 0, what, ": can't open ", py_str_repr(path), ": ", std::strerror(errno));
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0, regular = ok && S_ISREG(st.st_mode);
    int err = errno;
    if (ok && regular && st.st_size > 0) {
      size_ = static_cast<size_t>(st.st_size);
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      err = errno;
      if (p != MAP_FAILED) data_ = static_cast<const uint8_t*>(p);
    }
    ::close(fd);
    TG_CHECK(ok, what, ": can't stat ", py_str_repr(path), ": ", std::strerror(err));
    TG_CHECK(regular, what, ": ", py_str_repr(path), " is not a regular file");
    TG_CHECK(size_ == 0 || data_ != nullptr, what, ": can't map ", py_str_repr(path), " (", size_,
             " bytes): ", std::strerror(err));
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::span<const uint8_t> bytes() const { return {data_, size_}; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tg::nn
