#include "tg/runtime/profile.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <unordered_map>

#include "tg/helpers/helpers.h"
#include "tg/helpers/json.h"
#include "tg/helpers/knobs.h"
#include "tg/uop/trace.h"

namespace tg {

namespace {

struct Profile {
  std::mutex mu;
  FILE* f = nullptr;
  bool failed = false;
  std::string path;
  std::unordered_map<std::string, int64_t> pids;  // device -> its process number in the trace
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  static Profile& get() {
    static Profile* p = new Profile();  // never destroyed: kernels may run during static destruction
    return *p;
  }
  void line(const json::Value& v) {
    std::string s = v.dump() + ",\n";
    std::fwrite(s.data(), 1, s.size(), f);
  }
  bool open() {
    if (f != nullptr) return true;
    if (failed) return false;
    path =
        PROFILE_TRACE.is_set() ? PROFILE_TRACE.value() : cat(TMPDIR.value(), "/tinygrad_profile_", ::getpid(), ".json");
    f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
      failed = true;
      std::cerr << "PROFILE: cannot write " << path << "\n";
      return false;
    }
    std::fputs("[\n", f);
    trace::set_profile_path(path);
    std::atexit([] {
      Profile& p = get();
      std::lock_guard lock(p.mu);
      if (p.f == nullptr) return;
      std::fputs("{}]\n", p.f);
      std::fclose(p.f);
      p.f = nullptr;
      std::cerr << "PROFILE: trace written to " << p.path << " (open it in Perfetto, chrome://tracing or tinygrad-viz "
                << "--profile " << p.path << ")\n";
    });
    return true;
  }
  int64_t pid(const std::string& device) {
    auto [it, fresh] = pids.try_emplace(device, static_cast<int64_t>(pids.size()));
    if (fresh) {
      line(json::Object{
          {"name", "process_name"}, {"ph", "M"}, {"pid", it->second}, {"args", json::Object{{"name", device}}}});
      for (int64_t tid : {0, 1})
        line(json::Object{{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", it->second},
                          {"tid", tid},
                          {"args", json::Object{{"name", tid == 0 ? "COMPUTE" : "COPY"}}}});
    }
    return it->second;
  }
};

}  // namespace

bool profile_enabled() {
  static const bool on = PROFILE != 0;
  return on;
}

double profile_now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - Profile::get().start).count();
}

void profile_range(const std::string& device, const std::string& name, double st_us, double dur_us, bool is_copy) {
  Profile& p = Profile::get();
  std::lock_guard lock(p.mu);
  if (!p.open()) return;
  int64_t pid = p.pid(device);
  p.line(json::Object{
      {"name", name}, {"ph", "X"}, {"ts", st_us}, {"dur", dur_us}, {"pid", pid}, {"tid", is_copy ? 1 : 0}});
  std::fflush(p.f);  // a program killed later still leaves every event so far
}

}  // namespace tg
