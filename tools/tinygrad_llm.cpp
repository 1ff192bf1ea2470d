// tinygrad-llm: a GGUF language model's completion of a prompt (src/tg/llm), streamed as it is generated, then the
// prefill and decode speeds; --json prints one JSON object instead.
//   tinygrad-llm --model M.gguf --prompt "Once upon a time" -n 64 [--temperature 0.8 --top-k 40 --top-p 0.95
//                [--min-p 0.05] [--repeat-penalty 1.1] [--seed 42]] [--context 2048] [--device CPU] [--json]
// Exit status 2 for bad arguments, 1 for a model that can't run (the message names why).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "tg/helpers/json.h"
#include "tg/helpers/utf8.h"
#include "tg/llm/llama.h"
#include "tg/llm/tokenizer.h"

namespace {

const char* kUsage =
    "usage: tinygrad-llm --model M.gguf [--prompt TEXT] [-n N] [--temperature T] [--top-k K] [--top-p P] [--min-p P]\n"
    "                    [--repeat-penalty R] [--seed S] [--context C] [--device D] [--json] [--warmup]\n"
    "  --warmup: generate a few tokens first, untimed (compiles and captures the kernels), then the timed run\n";

struct Args {
  std::string model, prompt, device;
  int64_t n = 32, context = 0;
  bool json = false, warmup = false;
  tg::llm::SamplingParams sampling;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "tinygrad-llm: " << why << "\n" << kUsage;
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; i++) {
    std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(k + " needs a value");
      return argv[++i];
    };
    auto number = [&](auto parse_fn) {
      std::string v = value();
      try {
        size_t used = 0;
        auto x = parse_fn(v, &used);
        if (used != v.size()) throw std::invalid_argument(v);
        return x;
      } catch (const std::exception&) {
        usage(k + " takes a number, got '" + v + "'");
      }
    };
    auto to_i = [](const std::string& s, size_t* u) { return std::stoll(s, u); };
    auto to_d = [](const std::string& s, size_t* u) { return std::stod(s, u); };
    if (k == "--model")
      a.model = value();
    else if (k == "--prompt")
      a.prompt = value();
    else if (k == "--device")
      a.device = value();
    else if (k == "-n")
      a.n = number(to_i);
    else if (k == "--context")
      a.context = number(to_i);
    else if (k == "--temperature")
      a.sampling.temperature = number(to_d);
    else if (k == "--top-k")
      a.sampling.top_k = number(to_i);
    else if (k == "--top-p")
      a.sampling.top_p = number(to_d);
    else if (k == "--min-p")
      a.sampling.min_p = number(to_d);
    else if (k == "--repeat-penalty")
      a.sampling.repeat_penalty = number(to_d);
    else if (k == "--seed")
      a.sampling.seed = static_cast<uint64_t>(number(to_i));
    else if (k == "--warmup")
      a.warmup = true;
    else if (k == "--json")
      a.json = true;
    else if (k == "-h" || k == "--help")
      std::cout << kUsage, std::exit(0);
    else
      usage("unknown argument '" + k + "'");
  }
  if (a.model.empty()) usage("--model is required");
  if (a.n < 0) usage("-n must be >= 0");
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  using clock = std::chrono::steady_clock;
  try {
    tg::nn::GGUFFile file = tg::nn::gguf_load(a.model, a.device.empty() ? std::nullopt : std::optional(a.device));
    tg::llm::Tokenizer tok = tg::llm::Tokenizer::from_gguf(file.kv);
    tg::llm::Transformer model(file, a.context);
    tg::llm::Sampler sampler(a.sampling);
    std::vector<int64_t> prompt = tok.encode(a.prompt, true), out;
    if (a.warmup) model.generate(prompt, std::min<int64_t>(a.n, 3), a.sampling);  // the same kernels, then replayed
    auto t0 = clock::now();
    tg::Tensor logits = model.forward(prompt, 0);
    std::vector<float> l = logits.tolist<float>();
    auto t1 = clock::now();
    std::string text;
    size_t printed = 0;
    std::vector<int64_t> history = prompt;
    for (int64_t i = 0; i < a.n; i++) {
      int64_t next = sampler.sample(l, history);
      out.push_back(next), history.push_back(next);
      if (next == tok.eos()) break;
      text = tok.decode(out);
      if (!a.json) {
        size_t upto = tg::utf8_whole_prefix(text);
        if (upto > printed) {  // whole characters only; a byte no character can hold shows as U+FFFD
          std::cout << tg::replace_invalid_utf8(text.substr(printed, upto - printed)) << std::flush;
          printed = upto;
        }
      }
      if (i + 1 == a.n || static_cast<int64_t>(history.size()) >= model.config().context) break;
      l = model.forward({next}, static_cast<int64_t>(history.size()) - 1).tolist<float>();
    }
    auto t2 = clock::now();
    double prefill_s = std::chrono::duration<double>(t1 - t0).count();
    double decode_s = std::chrono::duration<double>(t2 - t1).count();
    double prefill_tok_s = static_cast<double>(prompt.size()) / prefill_s;
    double decode_tok_s = out.empty() ? 0.0 : static_cast<double>(out.size()) / decode_s;
    if (a.json) {
      tg::json::Array p, t;
      for (int64_t x : prompt) p.push_back(x);
      for (int64_t x : out) t.push_back(x);
      std::cout << tg::json::Value(tg::json::Object{{"prompt_tokens", p},
                                                    {"tokens", t},
                                                    {"text", tg::replace_invalid_utf8(tok.decode(out))},
                                                    {"prefill_tok_s", prefill_tok_s},
                                                    {"decode_tok_s", decode_tok_s}})
                       .dump()
                << "\n";
    } else {
      std::cout << tg::replace_invalid_utf8(text.substr(printed)) << std::endl;
      std::fprintf(stderr, "prefill: %zu tokens, %.2f tok/s; decode: %zu tokens, %.2f tok/s\n", prompt.size(),
                   prefill_tok_s, out.size(), decode_tok_s);
    }
  } catch (const std::exception& e) {
    std::cerr << "tinygrad-llm: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
