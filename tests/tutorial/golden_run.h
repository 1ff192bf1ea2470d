#pragma once
// Helpers for the transcript tests (tests/tutorial, tests/debug): run a program in a fresh process with a clean
// tinygrad environment, and mask what varies between runs exactly as reference/golden/tools/normalize.py does.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tg::golden {

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot read " << path;
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// runs `program args` under `env -i`-like conditions: only PATH/HOME/XDG_CACHE_HOME pass, plus CPU=1 and `env`
// ("DEBUG=4 NOOPT=1"); stderr joins stdout when merge_stderr (in the order written: the program flushes)
inline std::string run(const std::string& program, const std::string& args, const std::string& env,
                       bool merge_stderr = false, int* rc = nullptr) {
  std::string cmd =
      "env -u DEBUG -u NOOPT -u BEAM -u TRACEMETA -u DEVECTORIZE -u CPU -u LLVM -u GPU -u CUDA -u "
      "METAL -u AMD -u NV -u PYTHON CPU=1 " +
      env + " '" + program + "' " + args + (merge_stderr ? " 2>&1" : "");
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr) << cmd;
  if (p == nullptr) return "";
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (rc != nullptr)
    *rc = code;
  else
    EXPECT_EQ(code, 0) << cmd << "\n" << out;
  return out;
}

// normalize.py: "pid:<digits>" -> "pid:<PID>"; in the DEBUG>=2 timing segment "tm ... GB/s)" every maximal run of
// [ 0-9.] that holds a digit becomes as many '#' (the widths are kept, the digits vary)
inline std::string normalize(const std::string& s) {
  static const std::regex pid(R"(pid:\d+)");
  static const std::regex tm(
      "tm (?:\x1b\\[\\d+m)?[ \\d.]+(?:us|ms|s )(?:\x1b\\[0m)?/[ \\d.]+ms \\([ \\d.]+GFLOPS[ \\d.]+"
      "\\|[ \\d.]+GB/s\\)");
  static const std::regex run(R"([ \d.]*\d[ \d.]*)");
  std::string out = std::regex_replace(s, pid, "pid:<PID>");
  std::string res;
  auto begin = std::sregex_iterator(out.begin(), out.end(), tm);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    res += out.substr(last, static_cast<size_t>(it->position()) - last);
    std::string seg = it->str(), masked;
    size_t l = 0;
    for (auto r = std::sregex_iterator(seg.begin(), seg.end(), run); r != std::sregex_iterator(); ++r) {
      masked += seg.substr(l, static_cast<size_t>(r->position()) - l) + std::string(r->length(), '#');
      l = static_cast<size_t>(r->position() + r->length());
    }
    res += masked + seg.substr(l);
    last = static_cast<size_t>(it->position() + it->length());
  }
  return res + out.substr(last);
}

// ESC as the text \x1b (the golden .vis.out form), for readable failure messages
inline std::string vis(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '\x1b' ? std::string("\\x1b") : std::string(1, c);
  return o;
}

// replaces every occurrence of `from` (which must occur) by `to`: the documented differences from a golden
inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  size_t pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << "the golden no longer holds " << from;
  for (; pos != std::string::npos; pos = s.find(from, pos + to.size())) s.replace(pos, from.size(), to);
  return s;
}

}  // namespace tg::golden
