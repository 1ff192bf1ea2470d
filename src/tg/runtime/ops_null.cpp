#include "tg/runtime/ops_null.h"

#include <cstring>

#include "tg/renderer/cstyle.h"

namespace tg {

namespace {

class NullAllocator : public Allocator {
 public:
  void copyin(Opaque, const void*, size_t) override {}
  void copyout(void* dest, Opaque, size_t nbytes) override { std::memset(dest, 0, nbytes); }
  bool supports_offset() const override { return true; }
  Opaque offset(Opaque buf, size_t, size_t) override { return buf; }
  bool transfer(Opaque, Opaque, size_t, Allocator&) override { return true; }

 protected:
  // a handle that is never dereferenced: nothing is behind it
  Opaque alloc_impl(size_t, const BufferSpec&) override { return &token_; }
  void free_impl(Opaque, size_t, const BufferSpec&) override {}

 private:
  static inline char token_ = 0;
};

class NullProgram : public Program {
 protected:
  std::optional<double> call(std::span<const Opaque>, std::span<const int64_t>, bool wait, Dims,
                             std::optional<Dims>) override {
    return wait ? std::optional<double>(1e-4) : std::nullopt;  // as the reference: 100 us, whatever it was
  }
};

class NullRenderer : public ClangRenderer {
 public:
  NullRenderer() { device = "NULL"; }
};

}  // namespace

std::unique_ptr<Compiled> open_null_device(const std::string& device) {
  return std::make_unique<Compiled>(device, std::make_shared<NullAllocator>(), std::make_shared<NullRenderer>(),
                                    std::make_shared<Compiler>(),
                                    [](const std::string&, const std::string&) -> std::unique_ptr<Program> {
                                      return std::make_unique<NullProgram>();
                                    });
}

}  // namespace tg
