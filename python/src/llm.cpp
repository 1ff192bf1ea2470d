// tinygrad._C.llm: the llm layer (src/tg/llm) for tinygrad.llm: a GGUF model with its tokenizer, generation and the
// one-token forward
#include "common.h"
#include "tg/llm/cli.h"
#include "tg/llm/model.h"
#include "tg/llm/tokenizer.h"

namespace tgpy {

namespace {

// a GGUF file's model: the file (its weights stay mapped), the tokenizer and the transformer
struct Model {
  tg::nn::GGUFFile file;
  tg::llm::Tokenizer tokenizer;
  tg::llm::Transformer transformer;
  Model(const std::string& path, std::optional<std::string> device, int64_t context, tg::DType dtype)
      : file(tg::nn::gguf_load(path, std::move(device))),
        tokenizer(tg::llm::Tokenizer::from_gguf(file.kv)),
        transformer(file, context, dtype) {}
};

}  // namespace

void bind_llm(py::module_& m) {
  py::module_ llm = m.def_submodule("llm", "tinygrad.llm: GGUF language models (src/tg/llm)");
  // tinygrad-llm's command line (python3 -m tinygrad.llm): its output goes to the process's stdout and stderr
  llm.def(
      "cli_main",
      [](const std::vector<std::string>& args) {
        py::module_::import("sys").attr("stdout").attr("flush")();
        py::gil_scoped_release release;
        return tg::llm::cli_main(args);
      },
      py::arg("args"));
  py::class_<tg::llm::Sampler>(llm, "Sampler")
      .def(py::init([](double temperature, int64_t top_k, double top_p, double min_p, double repeat_penalty,
                       int64_t repeat_last_n, uint64_t seed) {
             return tg::llm::Sampler({temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed});
           }),
           py::arg("temperature") = 0.0, py::arg("top_k") = 0, py::arg("top_p") = 1.0, py::arg("min_p") = 0.0,
           py::arg("repeat_penalty") = 1.0, py::arg("repeat_last_n") = 64, py::arg("seed") = 0)
      .def(
          "sample",
          [](tg::llm::Sampler& s, const std::vector<float>& logits, const std::vector<int64_t>& history) {
            return s.sample(logits, history);
          },
          py::arg("logits"), py::arg("history") = std::vector<int64_t>{});
  py::class_<Model>(llm, "Model")
      .def(py::init<const std::string&, std::optional<std::string>, int64_t, tg::DType>(), py::arg("path"),
           py::arg("device") = py::none(), py::arg("context") = 0, py::arg("dtype") = tg::dtypes::float32)
      .def(
          "encode",
          [](const Model& mo, const std::string& text, bool add_special, bool parse_special) {
            return mo.tokenizer.encode(text, add_special, parse_special);
          },
          py::arg("text"), py::arg("add_special") = true, py::arg("parse_special") = false)
      .def(
          "decode",
          [](const Model& mo, const std::vector<int64_t>& ids) {
            return py::bytes(mo.tokenizer.decode(ids)).attr("decode")("utf-8", "replace");
          },
          py::arg("ids"))
      .def(
          "decode_bytes",
          [](const Model& mo, const std::vector<int64_t>& ids) { return py::bytes(mo.tokenizer.decode(ids)); },
          py::arg("ids"))
      .def(
          "forward",
          [](Model& mo, const std::vector<int64_t>& tokens, int64_t start_pos) {
            return mo.transformer.forward(tokens, start_pos);
          },
          py::arg("tokens"), py::arg("start_pos"))
      .def(
          "generate",
          [](Model& mo, const std::vector<int64_t>& prompt, int64_t n, double temperature, int64_t top_k, double top_p,
             double min_p, double repeat_penalty, uint64_t seed) {
            tg::llm::SamplingParams sp{temperature, top_k, top_p, min_p, repeat_penalty, 64, seed};
            return mo.transformer.generate(prompt, n, sp, mo.tokenizer.eos());
          },
          py::arg("prompt"), py::arg("n"), py::arg("temperature") = 0.0, py::arg("top_k") = 0, py::arg("top_p") = 1.0,
          py::arg("min_p") = 0.0, py::arg("repeat_penalty") = 1.0, py::arg("seed") = 0)
      .def_property_readonly("vocab_size", [](const Model& mo) { return mo.tokenizer.vocab_size(); })
      .def_property_readonly("bos", [](const Model& mo) { return mo.tokenizer.bos(); })
      .def_property_readonly("eos", [](const Model& mo) { return mo.tokenizer.eos(); })
      .def_property_readonly("context", [](const Model& mo) { return mo.transformer.config().context; });
}

}  // namespace tgpy
