#pragma once
// llm: an OpenAI-compatible HTTP server for one Generator (the newest tinygrad's `python -m tinygrad.llm --serve`,
// llama.cpp's llama-server), on Debian's cpp-httplib and nlohmann-json:
//   POST /v1/chat/completions   messages -> the chat format (chat.h) -> a reply; streamed as server-sent events or not
//   POST /v1/completions        a prompt (text, or token ids) -> its continuation; the same
//   GET  /v1/models, GET /health
// Requests are served one generation at a time, first come first served (a fair queue: the model has one KV cache,
// and a chat's next turn reuses the prefix it left there); past max_queue waiting requests the server answers 503.
// Bad JSON, a known field of the wrong type and a prompt longer than the context are 400s, an unknown model a 404,
// each with an OpenAI-style {"error": {"message", "type", "code"}}. A client that disconnects mid-stream stops its
// generation. It binds 127.0.0.1 unless told otherwise.
//
// Built with the command line (cli.h) as the library tinygrad_llm_cli: the engine does not link an HTTP stack.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "tg/llm/generator.h"

namespace tg::llm {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;              // 0: any free port (port() says which)
  std::string model_name{};     // the id clients name; "" = the file's general.name, else "tinygrad"
  std::string chat_template{};  // "" = the file's (chat.h)
  int64_t max_queue = 64;       // requests waiting for the model beyond this are answered 503
  int threads = 16;             // HTTP worker threads
  SamplingParams defaults{.temperature = 0.8, .top_k = 40, .top_p = 0.95, .min_p = 0.05};
};

class Server {
 public:
  Server(Generator& generator, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // binds; false (with the reason in error()) when the address can't be bound
  bool bind();
  int port() const;
  const std::string& error() const;
  // serves until stop() is called (from another thread)
  void listen();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tg::llm
