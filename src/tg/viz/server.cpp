#include "tg/viz/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tg/helpers/helpers.h"
#include "tg/viz/assets.h"
#include "tg/viz/trace_file.h"

namespace tg::viz {

const Asset* find_asset(std::string_view path) {
  if (path == "/") path = "/index.html";
  if (path == "/profiler") path = "/profiler.html";
  for (const Asset& a : assets())
    if (a.path == path) return &a;
  return nullptr;
}

std::optional<json::Value> load_profile(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(cat("VIZ: cannot open the profile ", path));
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    json::Value v = json::parse(text);
    if (v.find("traceEvents") == nullptr) throw Error(cat("VIZ: the profile ", path, " has no traceEvents"));
    return v;
  }
  // the array form, one event a line (what PROFILE=1 writes): every whole event, whether or not the array was closed
  json::Array events;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    size_t b = l.find('{'), e = l.rfind('}');
    if (b == std::string::npos || e == std::string::npos || e < b) continue;
    try {
      json::Value v = json::parse(l.substr(b, e - b + 1));
      if (v.is_object() && !v.as_object().empty()) events.push_back(std::move(v));
    } catch (const Error&) {
      // a line cut short by a kill
    }
  }
  return json::Value(json::Object{{"traceEvents", std::move(events)}});
}

namespace {

volatile std::sig_atomic_t stop_requested = 0;
extern "C" void on_stop(int) { stop_requested = 1; }

std::string content_type(std::string_view path) {
  auto ends = [&](std::string_view e) { return path.size() >= e.size() && path.substr(path.size() - e.size()) == e; };
  if (ends(".html")) return "text/html";
  if (ends(".js")) return "application/javascript";
  if (ends(".css")) return "text/css";
  if (ends(".json")) return "application/json";
  if (ends(".png")) return "image/png";
  if (ends(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void respond(int fd, int status, const std::string& type, std::string_view body) {
  const char* reason = status == 200 ? "OK" : status == 404 ? "Not Found" : "Bad Request";
  send_all(fd, cat("HTTP/1.0 ", status, " ", reason, "\r\nServer: tinygrad-viz\r\nContent-Type: ", type,
                   "\r\nContent-Length: ", body.size(), "\r\nCache-Control: no-cache\r\n\r\n"));
  send_all(fd, body);
}

// ctx=N&idx=M: both numbers, or nullopt
std::optional<std::pair<size_t, size_t>> parse_query(std::string_view q) {
  std::optional<size_t> ctx, idx;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view kv = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    size_t n = std::stoul(std::string(v));
    if (k == "ctx") ctx = n;
    if (k == "idx") idx = n;
  }
  if (!ctx || !idx) return std::nullopt;
  return std::make_pair(*ctx, *idx);
}

class Server {
 public:
  explicit Server(const ServeOpts& o) : opts_(o) {
    if (!o.trace.empty()) trace_ = Trace::load(o.trace);
    ctxs_ = trace_ ? trace_->metadata().dump() : "[]";
    if (auto p = load_profile(o.profile)) profile_ = p->dump();
  }

  void handle(int fd) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos && req.size() < 65536) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      req.append(buf, static_cast<size_t>(n));
    }
    size_t sp1 = req.find(' '), sp2 = sp1 == std::string::npos ? sp1 : req.find(' ', sp1 + 1);
    if (sp2 == std::string::npos || req.compare(0, sp1, "GET") != 0) return respond(fd, 400, "text/plain", "");
    std::string target = req.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t qm = target.find('?');
    std::string path = target.substr(0, qm), query = qm == std::string::npos ? "" : target.substr(qm + 1);
    if (path.find("..") != std::string::npos) return respond(fd, 404, "text/html", "");
    if (path == "/ctxs") {
      if (query.empty()) return respond(fd, 200, "application/json", ctxs_);
      auto q = parse_query(query);
      if (!q || !trace_) return respond(fd, 404, "text/plain", "no such step");
      try {
        (void)trace_->step(q->first, q->second);
      } catch (const Error& e) {
        return respond(fd, 404, "text/plain", e.what());
      }
      if (!send_all(fd,
                    "HTTP/1.0 200 OK\r\nServer: tinygrad-viz\r\nContent-Type: text/event-stream\r\n"
                    "Cache-Control: no-cache\r\n\r\n"))
        return;
      // each graph goes out as it is made; a browser that went away stops the rest
      bool open = true;
      trace_->details(q->first, q->second,
                      [&](json::Value ev) { return open = send_all(fd, "data: " + ev.dump() + "\n\n"); });
      if (open) send_all(fd, "data: END\n\n");
      return;
    }
    if (path == "/get_profile") {
      if (!profile_) return respond(fd, 404, "text/html", "");
      return respond(fd, 200, "application/json", *profile_);
    }
    if (const Asset* a = find_asset(path)) return respond(fd, 200, content_type(a->path), a->data);
    respond(fd, 404, "text/html", "");
  }

  bool has_trace() const { return trace_.has_value(); }
  Trace& trace() { return *trace_; }
  const std::string& ctxs() const { return ctxs_; }
  const std::optional<std::string>& profile() const { return profile_; }

 private:
  ServeOpts opts_;
  std::optional<Trace> trace_;
  std::string ctxs_;
  std::optional<std::string> profile_;
};

}  // namespace

void serve(const ServeOpts& opts) {
  auto st = std::chrono::steady_clock::now();
  Server server(opts);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(cat("VIZ: socket: ", std::strerror(errno)));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(opts.port));
  if (::inet_pton(AF_INET, opts.host.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    throw Error(cat("VIZ: VIZ_HOST must be an IPv4 address, not '", opts.host, "'"));
  }
  if (opts.port <= 0 || opts.port > 65535) {
    ::close(fd);
    throw Error(cat("VIZ: PORT must be 1..65535, not ", opts.port));
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EADDRINUSE)
      throw Error(cat("VIZ: ", opts.host, ":", opts.port, " is in use; choose another with PORT="));
    throw Error(cat("VIZ: cannot listen on ", opts.host, ":", opts.port, ": ", std::strerror(err)));
  }
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - st).count();
  std::cout << "*** started viz on http://" << opts.host << ":" << opts.port << "\n"
            << "*** ready in " << static_cast<int64_t>(ms) << "ms" << std::endl;
  while (!stop_requested) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, 200);
    if (r <= 0) continue;
    int c = ::accept(fd, nullptr, nullptr);
    if (c < 0) continue;
    timeval tv{5, 0};
    ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    try {
      server.handle(c);
    } catch (const std::exception& e) {
      std::cerr << "VIZ: " << e.what() << "\n";
    }
    ::close(c);
  }
  ::close(fd);
  std::cout << "*** viz is shutting down" << std::endl;
}

void export_static(const ServeOpts& opts, const std::string& dir) {
  namespace fs = std::filesystem;
  Server server(opts);
  auto write = [&](const fs::path& p, std::string_view data) {
    fs::create_directories(p.parent_path());
    std::ofstream f(p, std::ios::binary);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!f) throw Error(cat("VIZ: cannot write ", p.string()));
  };
  const fs::path root(dir);
  json::Object vendor;  // the vendor scripts' text: a page from file:// can't fetch it for its layout worker
  for (const Asset& a : assets()) {
    write(root / std::string(a.path.substr(1)), a.data);
    if (a.path.rfind("/vendor/", 0) == 0) vendor.push_back({std::string(a.path), std::string(a.data)});
  }
  write(root / "data" / "vendor_src.js", "tgVizData(\"vendor_src\", " + json::Value(std::move(vendor)).dump() + ");\n");
  write(root / "data" / "ctxs.js", "tgVizData(\"ctxs\", " + server.ctxs() + ");\n");
  write(root / "data" / "profile.js",
        "tgVizData(\"profile\", " + (server.profile() ? *server.profile() : std::string("null")) + ");\n");
  if (!server.has_trace()) return;
  Trace& t = server.trace();
  for (size_t c = 0; c < t.ctxs().size(); c++)
    for (size_t i = 0; i < t.ctxs()[c].steps.size(); i++) {
      json::Array events;
      for (json::Value& ev : t.details(c, i)) events.push_back(std::move(ev));
      std::string key = cat("ctx_", c, "_", i);
      write(root / "data" / (key + ".js"),
            "tgVizData(\"" + key + "\", " + json::Value(std::move(events)).dump() + ");\n");
    }
}

}  // namespace tg::viz
