#include "tg/runtime/ops_disk.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "tg/renderer/cstyle.h"

namespace tg {

namespace {

// the file behind one DISK device, mapped while any of its buffers is allocated
class DiskAllocator : public Allocator {
 public:
  explicit DiskAllocator(std::string device)
      : device_(std::move(device)), path_(device_.substr(device_.find(':') + 1)) {}
  ~DiskAllocator() override { close_file(); }

  void copyin(Opaque dest, const void* src, size_t nbytes) override {
    std::lock_guard lock(mu_);
    TG_CHECK(writable_, "can't write to ", device_, ": the file was opened read-only (", std::strerror(open_errno_),
             ")");
    std::memcpy(dest, src, nbytes);
  }
  void copyout(void* dest, Opaque src, size_t nbytes) override { std::memcpy(dest, src, nbytes); }
  bool supports_offset() const override { return true; }
  Opaque offset(Opaque buf, size_t, size_t offset) override { return static_cast<uint8_t*>(buf) + offset; }
  // the mapping is host memory: a copy to or from the host is one memcpy. A read-only file hands out no pointer, so
  // a write into it goes through copyin, which says why it can't.
  void* host_ptr(Opaque buf) const override { return writable_ ? buf : nullptr; }

 protected:
  Opaque alloc_impl(size_t nbytes, const BufferSpec&) override {
    std::lock_guard lock(mu_);
    // a larger size than the open mapping's maps the file again (it may have grown); the older mappings stay until
    // the last buffer is freed, as buffers point into them. All are MAP_SHARED views of one file: writes agree.
    if (count_ == 0 || nbytes > size_) open_file(nbytes);
    count_++;
    return base_;
  }
  void free_impl(Opaque, size_t, const BufferSpec&) override {
    std::lock_guard lock(mu_);
    if (--count_ == 0) close_file();
  }

 private:
  void open_file(size_t nbytes) {
    TG_CHECK(!path_.empty() && path_ != device_, "a DISK device names its file: \"DISK:/path/to/file\", got ",
             py_str_repr(device_));
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    writable_ = fd >= 0, open_errno_ = fd >= 0 ? 0 : errno;
    if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM))
      fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    TG_CHECK(fd >= 0, "can't open ", py_str_repr(path_), " for ", device_, ": ", std::strerror(errno));
    void* p = map_file(fd, nbytes, writable_ ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, writable_, device_,
                       ", and it is read-only");
    maps_.emplace_back(p, nbytes);
    base_ = p, size_ = nbytes;
  }
  void close_file() {
    for (auto [p, n] : maps_) ::munmap(p, n);
    maps_.clear();
    base_ = nullptr, size_ = 0;
  }

  std::mutex mu_;
  std::string device_, path_;
  std::vector<std::pair<void*, size_t>> maps_;  // every mapping made since the file was opened; base_ is the last
  void* base_ = nullptr;
  size_t size_ = 0;
  int64_t count_ = 0;
  bool writable_ = false;
  int open_errno_ = 0;
};

class DiskRenderer : public ClangRenderer {
 public:
  explicit DiskRenderer(const std::string& device) { this->device = device; }
};

}  // namespace

void* map_file(int fd, size_t nbytes, int prot, int flags, bool extend, const std::string& what,
               const std::string& short_note) {
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = cat("can't stat it: ", std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
  } else if (static_cast<uint64_t>(st.st_size) < nbytes) {
    if (!extend)
      why = cat("the file is ", st.st_size, " bytes, ", nbytes, " were asked for", short_note);
    else if (::ftruncate(fd, static_cast<off_t>(nbytes)) != 0)
      why = cat("can't extend it from ", st.st_size, " to ", nbytes, " bytes: ", std::strerror(errno));
  }
  void* p = MAP_FAILED;
  if (why.empty()) {
    p = ::mmap(nullptr, nbytes, prot, flags, fd, 0);
    if (p == MAP_FAILED) why = cat("can't map ", nbytes, " bytes of it: ", std::strerror(errno));
  }
  ::close(fd);  // the mapping keeps the file
  TG_CHECK(why.empty(), what, ": ", why);
  ::madvise(p, nbytes, MADV_WILLNEED);
  return p;
}

std::unique_ptr<Compiled> open_disk_device(const std::string& device) {
  auto ret = std::make_unique<Compiled>(
      device, std::make_shared<DiskAllocator>(device), std::make_shared<DiskRenderer>(device),
      std::make_shared<Compiler>(), [device](const std::string& name, const std::string&) -> std::unique_ptr<Program> {
        throw NotImplementedError(
            cat(device, " runs no kernels (", name, "): copy the tensor to a device first, e.g. t.to(\"CPU\")"));
      });
  ret->pick_by_default = false;
  return ret;
}

}  // namespace tg
