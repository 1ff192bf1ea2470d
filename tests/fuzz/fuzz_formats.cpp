// libFuzzer targets for the weight-file readers: one binary per format (TG_FUZZ_GGUF, TG_FUZZ_SAFETENSORS,
// TG_FUZZ_TORCH_LOAD, TG_FUZZ_ONNX). A reader may reject its input only with a tg::Error; any other exception, a crash,
// a hang or a sanitizer report is a finding (libFuzzer saves the input; it becomes a regression test). The readers' own
// sources are compiled into the target with coverage (tests/CMakeLists.txt), the rest of the library is linked as it
// is.
//   tests/fuzz/run_fuzz.sh build-asan/tests/fuzz_gguf 3600     # an hour by hand; CI runs each for 20 s
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "tg/helpers/helpers.h"
#include "tg/nn/gguf.h"
#include "tg/nn/state.h"
#include "tg/onnx/onnx.h"
#include "tg/tensor/tensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  try {
#if defined(TG_FUZZ_GGUF)
    tg::nn::GGUFHeader h = tg::nn::gguf_parse_header(bytes, "fuzz");
    for (const auto& t : h.tensors)  // what gguf_load does with each tensor, lazily: build its dequantization
      if (t.numel() <= (1 << 16)) {
        tg::Tensor file(std::vector<uint8_t>(bytes.begin(), bytes.end()), tg::Shape{static_cast<int64_t>(size)},
                        {.device = "NULL"});
        auto start = static_cast<int64_t>(h.data_start + t.offset);
        (void)tg::nn::ggml_data_to_tensor(file.shrink({{start, start + t.nbytes}}), t.numel(), t.type).shape();
      }
#elif defined(TG_FUZZ_SAFETENSORS)
    (void)tg::nn::state::safe_parse_header(bytes, "fuzz");
#elif defined(TG_FUZZ_TORCH_LOAD)
    // the bytes in host memory (PYTHON: NULL would read back zeros), the tensors made on NULL (nothing runs)
    tg::Tensor file(std::vector<uint8_t>(bytes.begin(), bytes.end()), tg::Shape{static_cast<int64_t>(size)},
                    {.device = "PYTHON"});
    (void)tg::nn::state::torch_load(file, "NULL");
#elif defined(TG_FUZZ_ONNX)
    // the model read, then the runner built on NULL: every initializer and attribute tensor parsed, every node's op
    // looked up (nothing runs)
    tg::onnx::OnnxRunner runner(tg::onnx::onnx_load_bytes(bytes), {.device = "NULL"});
#else
#error "define the format to fuzz"
#endif
  } catch (const tg::Error&) {  // a clear rejection: what bad input must get
  }
  return 0;
}
