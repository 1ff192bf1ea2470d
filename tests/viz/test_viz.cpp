// VIZ: the rewrite trace (uop/trace.h) recorded by real programs (viz_record, in fresh processes: VIZ is read
// once), read back (viz/trace_file.h) and served (tinygrad-viz), against what the reference's VIZ serves for the
// tutorial's t+3+4 (tests/data/viz, copied from the reference's golden/viz)
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tg/helpers/helpers.h"
#include "tg/viz/server.h"
#include "tg/viz/trace_file.h"

namespace {

namespace fs = std::filesystem;
using tg::json::Value;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// runs a shell command, returning its exit code and stdout+stderr
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int st = ::pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / tg::cat("tg_viz_test_", ::getpid());
  fs::create_directories(d);
  return d;
}

// the traces of one test run, removed at its end
struct TempDirCleanup : ::testing::Environment {
  void TearDown() override { fs::remove_all(temp_dir()); }
};
const auto* const cleanup = ::testing::AddGlobalTestEnvironment(new TempDirCleanup);

// records a viz_record mode into a trace file (once per mode and environment)
fs::path record(const std::string& mode, const std::string& env = "") {
  fs::path out =
      temp_dir() / (mode + (env.empty() ? "" : "_" + std::to_string(std::hash<std::string>{}(env))) + ".trace");
  if (!fs::exists(out)) {
    auto [rc, log] = run(tg::cat(env, " ", TG_VIZ_RECORD, " ", mode, " ", out.string()));
    EXPECT_EQ(rc, 0) << log;
  }
  return out;
}

// the reference's server-sent events: "data: <json>" lines up to "data: END"
std::vector<Value> sse_events(const std::string& text) {
  std::vector<Value> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("data: ", 0) == 0 && l != "data: END") out.push_back(tg::json::parse(l.substr(6)));
  return out;
}

// an event with its node ids renumbered in the order the graph lists them (ids differ between the two programs)
struct Normal {
  std::vector<std::string> nodes;  // label | sources | colour
  std::string uop;
  std::vector<std::string> changed, diff;
  bool operator==(const Normal&) const = default;
};
Normal normalize(const Value& ev) {
  std::map<std::string, std::string> ids;
  for (const auto& [k, v] : ev.find("graph")->as_object()) ids[k] = tg::cat("#", ids.size());
  auto id = [&](const Value& v) {
    std::string k = v.is_string() ? v.as_string() : std::to_string(v.as_int());
    return ids.count(k) ? ids[k] : "?" + k;
  };
  Normal n;
  for (const auto& [k, v] : ev.find("graph")->as_object()) {
    std::string s = v.find("label")->as_string() + " |";
    for (const Value& x : v.find("src")->as_array()) s += " " + id(x);
    n.nodes.push_back(s + " | " + v.find("color")->as_string());
  }
  n.uop = ev.find("uop")->as_string();
  if (!ev.find("changed_nodes")->is_null())
    for (const Value& x : ev.find("changed_nodes")->as_array()) n.changed.push_back(id(x));
  if (!ev.find("diff")->is_null())
    for (const Value& x : ev.find("diff")->as_array()) n.diff.push_back(x.as_string());
  return n;
}

void expect_same_events(const std::vector<Value>& ours, const std::string& golden_file) {
  std::vector<Value> ref = sse_events(read_file(fs::path(TG_TEST_DATA) / "viz" / golden_file));
  ASSERT_EQ(ours.size(), ref.size()) << golden_file;
  for (size_t i = 0; i < ref.size(); i++) {
    Normal a = normalize(ours[i]), b = normalize(ref[i]);
    EXPECT_EQ(a.nodes, b.nodes) << golden_file << " event " << i;
    EXPECT_EQ(a.uop, b.uop) << golden_file << " event " << i;
    EXPECT_EQ(a.changed, b.changed) << golden_file << " event " << i;
    EXPECT_EQ(a.diff, b.diff) << golden_file << " event " << i;
  }
}

std::vector<std::string> step_names(const Value& ctx) {
  std::vector<std::string> out;
  for (const Value& s : ctx.find("steps")->as_array()) out.push_back(s.find("name")->as_string());
  return out;
}

TEST(VizTrace, T347ContextsAndStepsAreTheReferences) {
  tg::viz::Trace t = tg::viz::Trace::load(record("t347").string());
  Value ours = t.metadata();
  Value ref = tg::json::parse(read_file(fs::path(TG_TEST_DATA) / "viz" / "ctxs.json"));
  ASSERT_EQ(ours.as_array().size(), 2u);
  for (size_t c = 0; c < 2; c++) {
    EXPECT_EQ(ours.as_array()[c].find("name")->as_string(), ref.as_array()[c].find("name")->as_string());
    std::vector<std::string> want = step_names(ref.as_array()[c]);
    // the reference's views_to_indexed_uops has two named symbolic passes ("indexing sym @ 1/2"); ours is one unnamed
    std::erase_if(want, [](const std::string& s) { return s.rfind("indexing sym", 0) == 0; });
    EXPECT_EQ(step_names(ours.as_array()[c]), want) << "context " << c;
  }
  // nested rewrites are one deeper: create_ast's per-kernel steps, devectorize's index_buf_N
  for (const Value& s : ours.as_array()[0].find("steps")->as_array()) {
    const std::string& n = s.find("name")->as_string();
    bool nested = n == "replace globals" || n == "Main View Left" || n == "Main View Right" || n == "replace buffer";
    EXPECT_EQ(s.find("depth")->as_int(), nested ? 1 : 0) << n;
    EXPECT_EQ(s.find("loc")->as_array()[0].as_string().rfind("src/tg/", 0), 0u) << n;  // relative to the checkout
  }
  const Value& kernel = ours.as_array()[1];
  ASSERT_NE(kernel.find("kernel_code"), nullptr);
  EXPECT_NE(kernel.find("kernel_code")->as_string().find("void E_4(int* restrict data0, int* restrict data1) {"),
            std::string::npos);
  // the rewrites that matched: each step's match count is the reference's
  for (size_t c = 0; c < 2; c++) {
    std::vector<std::string> want, got;
    for (const Value& s : ref.as_array()[c].find("steps")->as_array())
      if (s.find("name")->as_string().rfind("indexing sym", 0) != 0)
        want.push_back(tg::cat(s.find("name")->as_string(), " ", s.find("match_count")->as_int()));
    for (const Value& s : ours.as_array()[c].find("steps")->as_array())
      got.push_back(tg::cat(s.find("name")->as_string(), " ", s.find("match_count")->as_int()));
    EXPECT_EQ(got, want) << "context " << c;
  }
}

TEST(VizTrace, StepEventsAreTheReferences) {
  tg::viz::Trace t = tg::viz::Trace::load(record("t347").string());
  expect_same_events(t.details(0, 0), "sse_ctx0_idx0.txt");  // merge_views: 8 rewrites
  expect_same_events(t.details(1, 2), "sse_ctx1_idx2.txt");  // lowerer: 6 rewrites
}

TEST(VizTrace, KernelNodesRefTheirKernelContext) {
  tg::viz::Trace t = tg::viz::Trace::load(record("t347").string());
  Value meta = t.metadata();
  int64_t kref = meta.as_array()[1].find("ref")->as_int();
  std::vector<int64_t> refs;
  size_t kernel_graph = 0;
  for (size_t i = 0; i < t.ctxs()[0].steps.size(); i++)
    if (meta.as_array()[0].find("steps")->as_array()[i].find("name")->as_string() == "View Kernel Graph")
      kernel_graph = i;
  ASSERT_GT(kernel_graph, 0u);
  std::vector<Value> events = t.details(0, kernel_graph);
  for (const auto& [k, v] : events[0].find("graph")->as_object())
    if (v.find("label")->as_string().rfind("KERNEL", 0) == 0 && !v.find("ref")->is_null())
      refs.push_back(v.find("ref")->as_int());
  EXPECT_EQ(refs.size(), 2u);  // the copy's kernel and E_4's
  EXPECT_NE(std::find(refs.begin(), refs.end(), kref), refs.end());
}

TEST(VizTrace, TwoRunsWriteTheSameBytes) {
  fs::path a = record("t347"), b = record("t347", "TG_UNUSED=1");
  EXPECT_EQ(read_file(a), read_file(b));
  fs::path c = record("big"), d = record("big", "TG_UNUSED=1");
  EXPECT_EQ(read_file(c), read_file(d));
}

TEST(VizTrace, AContextSurvivesAnException) {
  tg::viz::Trace t = tg::viz::Trace::load(record("throw").string());
  Value meta = t.metadata();
  ASSERT_EQ(meta.as_array().size(), 1u);
  EXPECT_EQ(meta.as_array()[0].find("name")->as_string(), "throws");
  EXPECT_EQ(step_names(meta.as_array()[0]), (std::vector<std::string>{"throwing rewrite", "after the throw"}));
  const auto& steps = meta.as_array()[0].find("steps")->as_array();
  EXPECT_EQ(steps[0].find("match_count")->as_int(), 1);  // a * 1 -> a, before the SINK's rule threw
  EXPECT_EQ(steps[1].find("depth")->as_int(), 0);        // the thrown step ended
  EXPECT_EQ(steps[1].find("match_count")->as_int(), 1);
}

TEST(VizTrace, BigGraphIsOneStepWithItsRewrites) {
  tg::viz::Trace t = tg::viz::Trace::load(record("big").string());
  std::vector<Value> ev = t.details(0, 0);
  ASSERT_EQ(ev.size(), 5u);  // the input and four "x * 1 -> x"
  EXPECT_GT(ev[0].find("graph")->as_object().size(), 9000u);
  for (size_t i = 1; i < ev.size(); i++) {
    EXPECT_FALSE(ev[i].find("changed_nodes")->as_array().empty());
    EXPECT_EQ(ev[i].find("graph")->as_object().size(), ev[i - 1].find("graph")->as_object().size() - 1);
  }
}

TEST(VizTrace, AKilledProgramLeavesAReadableTrace) {
  std::string text = read_file(record("t347"));
  size_t cut = text.find("\"name\":\"lowerer\"");
  ASSERT_NE(cut, std::string::npos);
  fs::path p = temp_dir() / "cut.trace";
  std::ofstream(p, std::ios::binary) << text.substr(0, cut);  // half a line at the end
  tg::viz::Trace t = tg::viz::Trace::load(p.string());
  ASSERT_EQ(t.ctxs().size(), 2u);
  EXPECT_EQ(t.ctxs()[1].steps.size(), 2u);  // View Base AST, fixup optimized AST
  EXPECT_EQ(t.details(0, 0).size(), 9u);
  // a cut in the middle is an error naming the line
  std::ofstream(p, std::ios::binary) << text.substr(0, cut) << "\n" << text.substr(cut);
  EXPECT_THROW(tg::viz::Trace::load(p.string()), tg::Error);
  std::ofstream(p, std::ios::binary) << "not a trace\n";
  EXPECT_THROW(tg::viz::Trace::load(p.string()), tg::Error);
  EXPECT_THROW(tg::viz::Trace::load((temp_dir() / "missing.trace").string()), tg::Error);
}

TEST(VizTrace, StepsOutOfRangeAreErrors) {
  tg::viz::Trace t = tg::viz::Trace::load(record("t347").string());
  EXPECT_THROW(t.details(2, 0), tg::Error);
  EXPECT_THROW(t.details(1, 99), tg::Error);
}

TEST(VizTrace, TheTraceKeepsNoUOpsAlive) {
  // the same program with VIZ on and off ends with the same number of live UOps (VIZ bypasses the kernelize cache,
  // whose templates hold UOps: off here too)
  auto [rc_on, on] = run(tg::cat("VIZ_COUNT_NODES=1 ", TG_VIZ_RECORD, " t347 ", (temp_dir() / "alive.trace").string()));
  auto [rc_off, off] = run(tg::cat("VIZ_COUNT_NODES=1 VIZ_OFF=1 SCACHE=0 ", TG_VIZ_RECORD, " t347 -"));
  ASSERT_EQ(rc_on, 0) << on;
  ASSERT_EQ(rc_off, 0) << off;
  auto count = [](const std::string& s) {
    size_t at = s.find("live uops ");
    return at == std::string::npos ? std::string("?") : s.substr(at, s.find('\n', at) - at);
  };
  EXPECT_NE(count(on), "?") << on;
  EXPECT_EQ(count(on), count(off));
}

TEST(VizTrace, ProfileHasEveryKernelAndCopy) {
  fs::path prof = temp_dir() / "t347.profile.json";
  auto [rc, log] = run(tg::cat("PROFILE=1 PROFILE_TRACE=", prof.string(), " ", TG_VIZ_RECORD, " t347 ",
                               (temp_dir() / "p.trace").string()));
  ASSERT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("PROFILE: trace written to " + prof.string()), std::string::npos) << log;
  std::optional<Value> p = tg::viz::load_profile(prof.string());
  ASSERT_TRUE(p);
  std::vector<std::string> names, processes;
  for (const Value& e : p->find("traceEvents")->as_array()) {
    if (e.find("ph") == nullptr) continue;
    if (e.find("ph")->as_string() == "X") {
      names.push_back(e.find("name")->as_string());
      EXPECT_GE(e.find("dur")->as_double(), 0.0);
    }
    if (e.find("name")->as_string() == "process_name") processes.push_back(e.find("args")->find("name")->as_string());
  }
  ASSERT_EQ(names.size(), 2u);  // the copy from PYTHON (host data), E_4; tolist reads the CPU buffer itself
  EXPECT_EQ(names[1], "E_4");
  EXPECT_NE(names[0].find("copy"), std::string::npos);
  EXPECT_NE(std::find(processes.begin(), processes.end(), "CPU"), processes.end());
}

TEST(VizDiff, IsDifflibs) {
  auto words = [](const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(tg::viz::unified_diff(words("a b c d e f g h i j"), words("a b X d e f g h i j")),
            (V{"--- \n", "+++ \n", "@@ -1,6 +1,6 @@\n", " a", " b", "-c", "+X", " d", " e", " f"}));
  EXPECT_EQ(tg::viz::unified_diff(words("a"), words("b")), (V{"--- \n", "+++ \n", "@@ -1 +1 @@\n", "-a", "+b"}));
  EXPECT_EQ(tg::viz::unified_diff(words("a b c"), words("a b c d")),
            (V{"--- \n", "+++ \n", "@@ -1,3 +1,4 @@\n", " a", " b", " c", "+d"}));
  EXPECT_EQ(tg::viz::unified_diff(words("1 2 3 4 5 6 7 8 9 10 11 12 13 14"), words("1 2 x 4 5 6 7 8 9 10 11 y 13 14")),
            (V{"--- \n", "+++ \n", "@@ -1,6 +1,6 @@\n", " 1", " 2", "-3", "+x", " 4", " 5", " 6", "@@ -9,6 +9,6 @@\n",
               " 9", " 10", " 11", "-12", "+y", " 13", " 14"}));
  EXPECT_TRUE(tg::viz::unified_diff(words("a b"), words("a b")).empty());
}

// *** the server ***

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// GET path from 127.0.0.1:port: (status, body)
std::pair<int, std::string> http_get(int port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return {-1, ""};
  }
  std::string req = "GET " + path + " HTTP/1.0\r\n\r\n", resp;
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  char buf[65536];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) resp.append(buf, static_cast<size_t>(n));
  ::close(fd);
  size_t body = resp.find("\r\n\r\n");
  if (resp.size() < 12 || body == std::string::npos) return {-1, resp};
  return {std::stoi(resp.substr(9, 3)), resp.substr(body + 4)};
}

struct ServerProcess {
  pid_t pid = -1;
  int port = 0;
  explicit ServerProcess(const std::string& trace, const std::string& extra_env = "") {
    port = free_port();
    pid = ::fork();
    if (pid == 0) {
      ::setenv("PORT", std::to_string(port).c_str(), 1);
      if (!extra_env.empty()) ::setenv("VIZ_HOST", extra_env.c_str(), 1);
      std::freopen("/dev/null", "w", stdout);
      ::execl(TG_VIZ_SERVER, TG_VIZ_SERVER, trace.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 100 && http_get(port, "/ctxs").first != 200; i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  int stop() {
    int st = 0;
    if (pid <= 0) return -1;
    ::kill(pid, SIGTERM);
    ::waitpid(pid, &st, 0);
    pid = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  ~ServerProcess() { stop(); }
};

TEST(VizServer, ServesTheReferencesEndpoints) {
  fs::path trace = record("t347");
  ServerProcess s(trace.string());
  auto [st, ctxs] = http_get(s.port, "/ctxs");
  ASSERT_EQ(st, 200);
  EXPECT_EQ(ctxs, tg::viz::Trace::load(trace.string()).metadata().dump());
  auto [st2, stream] = http_get(s.port, "/ctxs?ctx=1&idx=2");
  ASSERT_EQ(st2, 200);
  EXPECT_EQ(stream.substr(stream.size() - 11), "data: END\n\n");
  expect_same_events(sse_events(stream), "sse_ctx1_idx2.txt");
  auto [st3, page] = http_get(s.port, "/");
  EXPECT_EQ(st3, 200);
  EXPECT_NE(page.find("<html"), std::string::npos);
  for (const char* bad :
       {"/nonexistent", "/js/../index.html", "/ctxs?ctx=9&idx=0", "/ctxs?ctx=x&idx=0", "/get_profile"})
    EXPECT_EQ(http_get(s.port, bad).first, 404) << bad;
  // 127.0.0.1 only: the socket's local address in /proc/net/tcp
  std::string tcp = read_file("/proc/net/tcp");
  char want[32];
  std::snprintf(want, sizeof want, "0100007F:%04X", s.port);
  EXPECT_NE(tcp.find(want), std::string::npos);
  char any[32];
  std::snprintf(any, sizeof any, "00000000:%04X", s.port);
  EXPECT_EQ(tcp.find(any), std::string::npos);
  EXPECT_EQ(s.stop(), 0);  // SIGTERM: a clean exit
}

TEST(VizServer, ABusyPortIsAClearError) {
  fs::path trace = record("t347");
  ServerProcess s(trace.string());
  auto [rc, log] = run(tg::cat("PORT=", s.port, " ", TG_VIZ_SERVER, " ", trace.string()));
  EXPECT_EQ(rc, 1);
  EXPECT_NE(log.find(tg::cat("127.0.0.1:", s.port, " is in use")), std::string::npos) << log;
  auto [rc2, log2] = run(tg::cat(TG_VIZ_SERVER, " ", (temp_dir() / "missing.trace").string()));
  EXPECT_EQ(rc2, 1);
  EXPECT_NE(log2.find("cannot open"), std::string::npos) << log2;
}

TEST(VizServer, ExportOpensWithoutAServer) {
  fs::path trace = record("t347"), dir = temp_dir() / "export";
  auto [rc, log] = run(tg::cat(TG_VIZ_SERVER, " export ", trace.string(), " ", dir.string()));
  ASSERT_EQ(rc, 0) << log;
  EXPECT_TRUE(fs::exists(dir / "index.html"));
  std::string ctxs = read_file(dir / "data" / "ctxs.js");
  EXPECT_EQ(ctxs, "tgVizData(\"ctxs\", " + tg::viz::Trace::load(trace.string()).metadata().dump() + ");\n");
  std::string step = read_file(dir / "data" / "ctx_1_2.js");
  ASSERT_EQ(step.rfind("tgVizData(\"ctx_1_2\", ", 0), 0u);
  Value events = tg::json::parse(step.substr(21, step.size() - 21 - 3));
  expect_same_events(events.as_array(), "sse_ctx1_idx2.txt");
}

}  // namespace
