#include "tg/llm/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <condition_variable>
#include <ctime>
#include <deque>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "tg/helpers/helpers.h"
#include "tg/helpers/utf8.h"
#include "tg/llm/chat.h"

namespace tg::llm {

namespace {

using nlohmann::json;

// an answer other than 200: its status and OpenAI's error object
struct HttpError {
  int status;
  std::string message, type = "invalid_request_error", code{};
};

std::string type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

[[noreturn]] void bad_field(const std::string& key, const char* want, const json& got) {
  throw HttpError{400, cat("'", key, "' must be ", want, ", not ", type_name(got)), "invalid_request_error",
                  "invalid_type"};
}

// a field of the request: absent or null is nullopt; another type than the one asked for is a 400 naming it
const json* field(const json& body, const std::string& key) {
  auto it = body.find(key);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}
std::optional<double> number_field(const json& body, const std::string& key, double lo, double hi) {
  const json* v = field(body, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) bad_field(key, "a number", *v);
  auto x = v->get<double>();
  if (!(x >= lo && x <= hi))
    throw HttpError{400, cat("'", key, "' is ", x, ", outside ", lo, "..", hi), "invalid_request_error",
                    "invalid_value"};
  return x;
}
std::optional<int64_t> int_field(const json& body, const std::string& key, int64_t lo) {
  const json* v = field(body, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_integer() && !v->is_number_unsigned()) bad_field(key, "an integer", *v);
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    throw HttpError{400, cat("'", key, "' is too large"), "invalid_request_error", "invalid_value"};
  auto x = v->get<int64_t>();
  if (x < lo)
    throw HttpError{400, cat("'", key, "' is ", x, ", less than ", lo), "invalid_request_error", "invalid_value"};
  return x;
}
std::optional<bool> bool_field(const json& body, const std::string& key) {
  const json* v = field(body, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) bad_field(key, "a boolean", *v);
  return v->get<bool>();
}
std::optional<std::string> string_field(const json& body, const std::string& key) {
  const json* v = field(body, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) bad_field(key, "a string", *v);
  return v->get<std::string>();
}

// requests wait here for the model, first come first served; the turn is given up when its holder goes
class Queue {
 public:
  explicit Queue(int64_t max_waiting) : max_(max_waiting) {}
  class Turn {
   public:
    Turn(Queue& q, uint64_t id) : q_(q), id_(id) {}
    ~Turn() {
      std::lock_guard lock(q_.m_);
      std::erase(q_.q_, id_);
      q_.cv_.notify_all();
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;
    void wait() {
      std::unique_lock lock(q_.m_);
      q_.cv_.wait(lock, [&] { return q_.q_.front() == id_; });
    }

   private:
    Queue& q_;
    uint64_t id_;
  };
  // a place in the queue, or nullptr when max_waiting requests wait already
  std::shared_ptr<Turn> enter() {
    std::lock_guard lock(m_);
    if (static_cast<int64_t>(q_.size()) > max_) return nullptr;
    q_.push_back(next_);
    return std::make_shared<Turn>(*this, next_++);
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<uint64_t> q_;  // the first one generates, the others wait
  uint64_t next_ = 0;
  int64_t max_;
};

// one completion request, parsed and checked before it waits for the model
struct Request {
  bool chat = false, stream = false, include_usage = false;
  std::vector<int64_t> prompt;
  GenerationParams params;
};

}  // namespace

struct Server::Impl {
  Generator& gen;
  ServerOptions opt;
  httplib::Server svr;
  Queue queue;
  std::string name, format, error;
  int port = -1;
  socket_t listening = INVALID_SOCKET;  // the socket bind() made (httplib hands it to its options)
  std::atomic<uint64_t> requests{0};
  int64_t created = std::time(nullptr);

  Impl(Generator& g, ServerOptions o) : gen(g), opt(std::move(o)), queue(opt.max_queue) {
    name = opt.model_name;
    if (name.empty()) {
      const nn::GGUFValue* v = nn::gguf_find(gen.file().kv, "general.name");
      name = v != nullptr && v->type == nn::GGUFValue::Type::STRING ? v->as_string() : "tinygrad";
    }
    format = gen.chat_format(opt.chat_template);
    routes();
  }

  static void send_json(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(body.dump(), "application/json");
  }
  static void send_error(httplib::Response& res, const HttpError& e) {
    json err{{"message", e.message}, {"type", e.type}};
    err["code"] = e.code.empty() ? json(nullptr) : json(e.code);
    send_json(res, e.status, {{"error", err}});
  }

  Request parse(const httplib::Request& http, bool chat) const {
    json body;
    try {
      body = json::parse(http.body);
    } catch (const json::parse_error& e) {
      throw HttpError{400, cat("the body is not JSON: ", e.what()), "invalid_request_error", "invalid_json"};
    }
    if (!body.is_object()) bad_field("the body", "an object", body);
    if (std::optional<std::string> m = string_field(body, "model"); m && *m != name)
      throw HttpError{404,
                      cat("the model ", py_str_repr(*m), " does not exist (this server has ", py_str_repr(name), ")"),
                      "invalid_request_error", "model_not_found"};
    Request r;
    r.chat = chat;
    r.stream = bool_field(body, "stream").value_or(false);
    if (const json* so = field(body, "stream_options")) {
      if (!so->is_object()) bad_field("stream_options", "an object", *so);
      r.include_usage = bool_field(*so, "include_usage").value_or(false);
    }
    if (int_field(body, "n", 1).value_or(1) != 1)
      throw HttpError{400, "'n' must be 1: one choice per request", "invalid_request_error", "invalid_value"};
    for (const char* k : {"presence_penalty", "frequency_penalty"})
      if (number_field(body, k, -2, 2).value_or(0) != 0)
        throw HttpError{400, cat("'", k, "' is not supported (use repeat_penalty)"), "invalid_request_error",
                        "unsupported_parameter"};
    SamplingParams& s = r.params.sampling;
    s = opt.defaults;
    s.temperature = number_field(body, "temperature", 0, 2).value_or(s.temperature);
    s.top_p = number_field(body, "top_p", 0, 1).value_or(s.top_p);
    s.top_k = int_field(body, "top_k", 0).value_or(s.top_k);
    s.min_p = number_field(body, "min_p", 0, 1).value_or(s.min_p);
    s.repeat_penalty = number_field(body, "repeat_penalty", 1e-6, 100).value_or(s.repeat_penalty);
    if (std::optional<int64_t> seed = int_field(body, "seed", INT64_MIN)) s.seed = static_cast<uint64_t>(*seed);
    std::optional<int64_t> max_tokens = int_field(body, "max_completion_tokens", 0);
    if (!max_tokens) max_tokens = int_field(body, "max_tokens", 0);
    r.params.max_tokens = max_tokens.value_or(chat ? gen.context() : 16);  // OpenAI's defaults
    if (const json* stop = field(body, "stop")) {
      if (stop->is_string()) {
        r.params.stop.push_back(stop->get<std::string>());
      } else if (stop->is_array()) {
        for (const json& s2 : *stop) {
          if (!s2.is_string()) bad_field("stop", "a string or an array of strings", s2);
          r.params.stop.push_back(s2.get<std::string>());
        }
      } else {
        bad_field("stop", "a string or an array of strings", *stop);
      }
      std::erase(r.params.stop, "");
    }
    if (chat) {
      const json* ms = field(body, "messages");
      if (ms == nullptr) throw HttpError{400, "'messages' is missing", "invalid_request_error", "missing_field"};
      if (!ms->is_array() || ms->empty()) bad_field("messages", "a non-empty array", *ms);
      std::vector<ChatMessage> messages;
      for (const json& m : *ms) {
        if (!m.is_object()) bad_field("messages[]", "an object", m);
        std::optional<std::string> role = string_field(m, "role");
        if (!role) throw HttpError{400, "a message has no 'role'", "invalid_request_error", "missing_field"};
        if (*role == "developer") role = "system";  // OpenAI's newer name for it
        if (*role != "system" && *role != "user" && *role != "assistant")
          throw HttpError{400, cat("the role ", py_str_repr(*role), " is not one of 'system', 'user', 'assistant'"),
                          "invalid_request_error", "invalid_value"};
        std::string content;
        if (const json* c = field(m, "content")) {
          if (c->is_string()) {
            content = c->get<std::string>();
          } else if (c->is_array()) {  // content parts: text only
            for (const json& part : *c) {
              if (!part.is_object() || string_field(part, "type").value_or("") != "text")
                throw HttpError{400, "only text content parts are supported", "invalid_request_error", "invalid_value"};
              content += string_field(part, "text").value_or("");
            }
          } else {
            bad_field("content", "a string or an array of parts", *c);
          }
        }
        messages.push_back({*role, content});
      }
      r.prompt = gen.chat_prompt(format, messages);
    } else {
      const json* p = field(body, "prompt");
      if (p == nullptr) throw HttpError{400, "'prompt' is missing", "invalid_request_error", "missing_field"};
      if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) p = &(*p)[0];
      if (p->is_string()) {
        // as llama.cpp's server: BOS where the file asks for it, special tokens' texts parsed
        r.prompt = gen.tokenizer().encode(p->get<std::string>(), true, /*parse_special=*/true);
      } else if (p->is_array() && !p->empty() &&
                 std::all_of(p->begin(), p->end(), [](const json& x) { return x.is_number_integer(); })) {
        for (const json& x : *p) {
          auto id = x.get<int64_t>();
          if (id < 0 || id >= gen.tokenizer().vocab_size())
            throw HttpError{400, cat("token ", id, " is outside the vocabulary of ", gen.tokenizer().vocab_size()),
                            "invalid_request_error", "invalid_value"};
          r.prompt.push_back(id);
        }
      } else {
        bad_field("prompt", "a string, one string in an array, or an array of token ids", *p);
      }
    }
    const auto P = static_cast<int64_t>(r.prompt.size());
    if (P == 0) throw HttpError{400, "the prompt is empty", "invalid_request_error", "invalid_value"};
    if (P >= gen.context())
      throw HttpError{400,
                      cat("the prompt of ", P, " tokens leaves no room in the context of ", gen.context(), " tokens"),
                      "invalid_request_error", "context_length_exceeded"};
    return r;
  }

  json usage(const Generation& g) const {
    const auto p = static_cast<int64_t>(g.prompt_tokens.size()), c = static_cast<int64_t>(g.tokens.size());
    return {{"prompt_tokens", p}, {"completion_tokens", c}, {"total_tokens", p + c}};
  }
  // JSON holds UTF-8 only: a byte no character holds (a byte token of the model's) is sent as U+FFFD
  json choice(const Request& r, const std::string& raw, const json& finish, bool delta) const {
    const std::string text = replace_invalid_utf8(raw);
    json ch{{"index", 0}, {"finish_reason", finish}};
    if (!r.chat) {
      ch["text"] = text, ch["logprobs"] = nullptr;
    } else if (delta) {
      ch["delta"] = text.empty() && finish.is_null() ? json{{"role", "assistant"}, {"content", ""}}
                    : finish.is_null()               ? json{{"content", text}}
                                                     : json::object();
    } else {
      ch["message"] = {{"role", "assistant"}, {"content", text}};
    }
    return ch;
  }
  json envelope(const Request& r, const std::string& id, bool chunk) const {
    return {{"id", id},
            {"object", r.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
            {"created", std::time(nullptr)},
            {"model", name}};
  }
  static std::string finish_of(const Generation& g) { return g.finish_reason == "stop" ? "stop" : "length"; }

  // the generation, once this request's turn has come
  Generation run(Queue::Turn& turn, const Request& r, const std::function<bool(std::string_view)>& on_text) {
    turn.wait();
    return gen.generate(r.prompt, r.params, on_text);
  }

  void complete(const httplib::Request& http, httplib::Response& res, bool chat) {
    Request r = parse(http, chat);
    std::shared_ptr<Queue::Turn> turn = queue.enter();
    if (!turn)
      throw HttpError{503, cat("the server is busy: ", opt.max_queue, " requests wait already"), "server_error",
                      "overloaded"};
    const std::string id = cat(chat ? "chatcmpl-" : "cmpl-", requests++);
    if (!r.stream) {
      Generation g = run(*turn, r, {});
      json body = envelope(r, id, false);
      body["choices"] = json::array({choice(r, g.text, finish_of(g), false)});
      body["usage"] = usage(g);
      body["timings"] = {{"prompt_per_second", g.prefill_tok_s()}, {"predicted_per_second", g.decode_tok_s()}};
      send_json(res, 200, body);
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [this, r, id, turn](size_t, httplib::DataSink& sink) {
      auto event = [&](const json& data) {
        std::string s = cat("data: ", data.dump(), "\n\n");
        return sink.write(s.data(), s.size());
      };
      auto chunk = [&](const std::string& text, const json& finish) {
        json c = envelope(r, id, true);
        c["choices"] = json::array({choice(r, text, finish, true)});
        return event(c);
      };
      try {
        if (r.chat && !chunk("", nullptr)) return false;
        // each piece of text as it is final; a write that fails (the client went) stops the generation
        Generation g = run(*turn, r, [&](std::string_view text) { return chunk(std::string(text), nullptr); });
        if (g.finish_reason == "cancelled") {
          std::cerr << "tinygrad-llm: " << id << ": the client went; its generation stopped after " << g.tokens.size()
                    << " tokens\n";
          return false;
        }
        if (!chunk("", finish_of(g))) return false;
        if (r.include_usage) {
          json u = envelope(r, id, true);
          u["choices"] = json::array();
          u["usage"] = usage(g);
          if (!event(u)) return false;
        }
      } catch (const std::exception& e) {
        event({{"error", {{"message", e.what()}, {"type", "server_error"}, {"code", nullptr}}}});
      }
      const std::string done = "data: [DONE]\n\n";
      sink.write(done.data(), done.size());
      sink.done();
      return true;
    });
  }

  // each route answers its errors as OpenAI's error objects
  template <class F>
  httplib::Server::Handler guarded(F f) {
    return [f](const httplib::Request& req, httplib::Response& res) {
      try {
        f(req, res);
      } catch (const HttpError& e) {
        send_error(res, e);
      } catch (const ValueError& e) {
        send_error(res, {400, e.what()});
      } catch (const std::exception& e) {
        send_error(res, {500, e.what(), "server_error"});
      }
    };
  }

  void routes() {
    svr.Post("/v1/chat/completions", guarded([this](const auto& q, auto& s) { complete(q, s, true); }));
    svr.Post("/v1/completions", guarded([this](const auto& q, auto& s) { complete(q, s, false); }));
    svr.Get("/v1/models", guarded([this](const auto&, auto& s) {
              send_json(s, 200,
                        {{"object", "list"},
                         {"data", json::array({{{"id", name},
                                                {"object", "model"},
                                                {"created", created},
                                                {"owned_by", "tinygrad"},
                                                {"meta",
                                                 {{"n_ctx", gen.context()},
                                                  {"n_vocab", gen.tokenizer().vocab_size()},
                                                  {"chat_template", format}}}}})}});
            }));
    svr.Get("/health", guarded([](const auto&, auto& s) { send_json(s, 200, {{"status", "ok"}}); }));
    svr.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;  // a route's own error answer
      send_error(res, {res.status, cat("no route ", req.method, " ", req.path), "invalid_request_error",
                       res.status == 404 ? "not_found" : ""});
    });
    svr.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      std::cerr << "tinygrad-llm: " << req.method << " " << req.path << " " << res.status << "\n";
    });
    svr.new_task_queue = [n = opt.threads] { return new httplib::ThreadPool(static_cast<size_t>(std::max(n, 1))); };
    svr.set_keep_alive_timeout(2);
    svr.set_socket_options([this](socket_t sock) {
      httplib::default_socket_options(sock);
      listening = sock;
    });
  }
};

Server::Server(Generator& generator, ServerOptions options)
    : impl_(std::make_unique<Impl>(generator, std::move(options))) {}
Server::~Server() = default;

bool Server::bind() {
  Impl& s = *impl_;
  if (s.opt.port == 0) {
    s.port = s.svr.bind_to_any_port(s.opt.host);
  } else {
    s.port = s.svr.bind_to_port(s.opt.host, s.opt.port) ? s.opt.port : -1;
  }
  if (s.port < 0) {
    s.error = cat("can't bind ", s.opt.host, ":", s.opt.port);
    return false;
  }
  // Debian's httplib listens with a backlog of 5: a burst of clients overflowed it (connections reset under load).
  // listen() again on a listening socket sets the new backlog.
  if (::listen(s.listening, SOMAXCONN) != 0) s.error = cat("can't listen on ", s.opt.host, ":", s.port);
  return s.error.empty();
}
int Server::port() const { return impl_->port; }
const std::string& Server::error() const { return impl_->error; }
void Server::listen() { impl_->svr.listen_after_bind(); }
void Server::stop() { impl_->svr.stop(); }

}  // namespace tg::llm
