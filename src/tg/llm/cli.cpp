#include "tg/llm/cli.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "tg/helpers/json.h"
#include "tg/helpers/utf8.h"
#include "tg/llm/chat.h"
#include "tg/llm/generator.h"
#ifdef TG_LLM_SERVER
#include "tg/llm/server.h"
#endif

namespace tg::llm {

namespace {

const char* kUsage =
    "usage: tinygrad-llm --model M.gguf [--prompt TEXT | --chat | --serve] [-n N] [--temperature T] [--top-k K]\n"
    "                    [--top-p P] [--min-p P] [--repeat-penalty R] [--seed S] [--stop TEXT]... [--context C]\n"
    "                    [--device D] [--dtype float32|float16|bfloat16] [--json] [--warmup] [--system TEXT]\n"
    "                    [--chat-template NAME]\n"
    "                    [--host H] [--port P] [--max-queue N]\n"
    "  --prompt: complete TEXT (the default mode); --json prints one JSON object instead of the streamed text\n"
    "  --chat: each line of stdin is a user message, each reply is streamed (EOF or /exit ends it)\n"
    "  --serve: an OpenAI-compatible HTTP server (/v1/chat/completions, /v1/completions, /v1/models, /health)\n"
    "  --warmup: generate a few tokens first, untimed (compiles and captures the kernels), then the timed run\n"
    "  --dtype: the activations' and the KV cache's type (default float32; norms and softmax stay float32)\n";

struct Args {
  std::string model, prompt, device, system, chat_template, host = "127.0.0.1";
  DType activations = dtypes::float32;
  int64_t n = 32, context = 0, port = 8080, max_queue = 64;
  bool json = false, warmup = false, chat = false, serve = false, n_given = false;
  SamplingParams sampling;
  std::vector<std::string> stop;
};

// a bad argument: cli_main prints it with the usage and returns 2
struct UsageError {
  std::string why;
};
[[noreturn]] void usage(const std::string& why) { throw UsageError{why}; }
struct Help {};

Args parse(const std::vector<std::string>& argv) {
  Args a;
  const size_t argc = argv.size();
  for (size_t i = 0; i < argc; i++) {
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
    else if (k == "--dtype") {
      std::string v = value();
      if (v == "float32" || v == "f32")
        a.activations = dtypes::float32;
      else if (v == "float16" || v == "f16" || v == "half")
        a.activations = dtypes::float16;
      else if (v == "bfloat16" || v == "bf16")
        a.activations = dtypes::bfloat16;
      else
        usage("--dtype is float32, float16 or bfloat16, got '" + v + "'");
    } else if (k == "-n")
      a.n = number(to_i), a.n_given = true;
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
    else if (k == "--stop")
      a.stop.push_back(value());
    else if (k == "--system")
      a.system = value();
    else if (k == "--chat-template")
      a.chat_template = value();
    else if (k == "--host")
      a.host = value();
    else if (k == "--port")
      a.port = number(to_i);
    else if (k == "--max-queue")
      a.max_queue = number(to_i);
    else if (k == "--warmup")
      a.warmup = true;
    else if (k == "--json")
      a.json = true;
    else if (k == "--chat")
      a.chat = true;
    else if (k == "--serve")
      a.serve = true;
    else if (k == "-h" || k == "--help")
      throw Help{};
    else
      usage("unknown argument '" + k + "'");
  }
  if (a.model.empty()) usage("--model is required");
  if (a.n < 0) usage("-n must be >= 0");
  if (a.chat && a.serve) usage("--chat and --serve are two modes: choose one");
  if (a.port < 0 || a.port > 65535) usage("--port must be 0..65535");
  if (a.max_queue < 0) usage("--max-queue must be >= 0");
  return a;
}

// text for the terminal: a byte no character can hold shows as U+FFFD
void print(std::string_view text) { std::cout << tg::replace_invalid_utf8(text) << std::flush; }

int complete(Generator& g, const Args& a) {
  GenerationParams params{.max_tokens = a.n, .sampling = a.sampling, .stop = a.stop};
  std::vector<int64_t> prompt = g.tokenizer().encode(a.prompt, true);
  if (a.warmup) {  // the same kernels, compiled and captured; then the timed run computes the whole prompt again
    g.generate(prompt, {.max_tokens = std::min<int64_t>(a.n, 3), .sampling = a.sampling});
    g.forget_cache();
  }
  Generation r = g.generate(prompt, params, [&](std::string_view text) {
    if (!a.json) print(text);
    return true;
  });
  if (a.json) {
    tg::json::Array p, t;
    for (int64_t x : r.prompt_tokens) p.push_back(x);
    for (int64_t x : r.tokens) t.push_back(x);
    std::cout << tg::json::Value(tg::json::Object{{"prompt_tokens", p},
                                                  {"tokens", t},
                                                  {"text", tg::replace_invalid_utf8(r.text)},
                                                  {"finish_reason", r.finish_reason},
                                                  {"prefill_tok_s", r.prefill_tok_s()},
                                                  {"decode_tok_s", r.decode_tok_s()}})
                     .dump()
              << "\n";
  } else {
    std::cout << std::endl;
    std::fprintf(stderr, "prefill: %zu tokens, %.2f tok/s; decode: %zu tokens, %.2f tok/s\n", r.prompt_tokens.size(),
                 r.prefill_tok_s(), r.tokens.size(), r.decode_tok_s());
  }
  return 0;
}

// each line of stdin a user message; the conversation so far is the prompt of each reply (its prefix stays cached)
int chat(Generator& g, const Args& a) {
  const std::string format = g.chat_format(a.chat_template);
  std::vector<ChatMessage> messages;
  if (!a.system.empty()) messages.push_back({"system", a.system});
  const bool tty = ::isatty(STDIN_FILENO) != 0;
  std::string line;
  for (;;) {
    if (tty) std::cerr << "> " << std::flush;
    if (!std::getline(std::cin, line) || line == "/exit") break;
    if (line.empty()) continue;
    messages.push_back({"user", line});
    std::vector<int64_t> prompt = g.chat_prompt(format, messages);
    GenerationParams params{.max_tokens = a.n_given ? a.n : g.context(), .sampling = a.sampling, .stop = a.stop};
    params.max_tokens = std::min(params.max_tokens, g.context() - static_cast<int64_t>(prompt.size()));
    if (params.max_tokens <= 0) {
      std::cerr << "tinygrad-llm: the conversation (" << prompt.size() << " tokens) fills the context of "
                << g.context() << " tokens\n";
      messages.pop_back();
      continue;
    }
    Generation r = g.generate(prompt, params, [](std::string_view t) {
      print(t);
      return true;
    });
    std::cout << std::endl;
    std::fprintf(stderr, "(%zu tokens, %.2f tok/s)\n", r.tokens.size(), r.decode_tok_s());
    messages.push_back({"assistant", r.text});
  }
  return 0;
}

#ifdef TG_LLM_SERVER
int g_stop_pipe[2] = {-1, -1};
extern "C" void stop_signal(int) {
  const char stop = 1;
  (void)!::write(g_stop_pipe[1], &stop, 1);  // async-signal-safe
}
#endif

int serve(Generator& g, const Args& a) {
#ifdef TG_LLM_SERVER
  ServerOptions opt;
  opt.host = a.host, opt.port = static_cast<int>(a.port), opt.chat_template = a.chat_template;
  opt.max_queue = a.max_queue;
  // SIGINT and SIGTERM stop the server: a handler (whichever thread takes the signal: the device runtimes' threads
  // too) writes to a pipe, a thread reads it and stops the server; the old handlers come back after
  if (::pipe(g_stop_pipe) != 0) {
    std::cerr << "tinygrad-llm: can't make a pipe for the stop signals\n";
    return 1;
  }
  struct sigaction on_stop {
  }, old_int{}, old_term{};
  on_stop.sa_handler = stop_signal;
  sigemptyset(&on_stop.sa_mask);
  Server server(g, opt);
  if (!server.bind()) {
    ::close(g_stop_pipe[0]), ::close(g_stop_pipe[1]);
    std::cerr << "tinygrad-llm: " << server.error() << "\n";
    return 1;
  }
  sigaction(SIGINT, &on_stop, &old_int);
  sigaction(SIGTERM, &on_stop, &old_term);
  std::thread stopper([&] {
    char c = 0;
    while (::read(g_stop_pipe[0], &c, 1) < 0 && errno == EINTR) {
    }
    if (c == 1) server.stop();  // 0: the server stopped by itself
  });
  std::cerr << "tinygrad-llm: serving on http://" << a.host << ":" << server.port() << " (context " << g.context()
            << ")" << std::endl;
  server.listen();
  const char done = 0;
  (void)!::write(g_stop_pipe[1], &done, 1);
  stopper.join();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  ::close(g_stop_pipe[0]), ::close(g_stop_pipe[1]);
  return 0;
#else
  (void)g, (void)a;
  std::cerr << "tinygrad-llm: --serve is unavailable: this build has no cpp-httplib and nlohmann-json "
               "(libcpp-httplib-dev nlohmann-json3-dev; bash tools/setup.sh --deps-only, then rebuild)\n";
  return 1;
#endif
}

}  // namespace

int cli_main(const std::vector<std::string>& argv) {
  Args a;
  try {
    a = parse(argv);
  } catch (const UsageError& e) {
    std::cerr << "tinygrad-llm: " << e.why << "\n" << kUsage;
    return 2;
  } catch (const Help&) {
    std::cout << kUsage;
    return 0;
  }
  try {
    Generator g(nn::gguf_load(a.model, a.device.empty() ? std::nullopt : std::optional(a.device)), a.context,
                a.activations);
    if (a.serve) return serve(g, a);
    if (a.chat) return chat(g, a);
    return complete(g, a);
  } catch (const std::exception& e) {
    std::cerr << "tinygrad-llm: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace tg::llm
