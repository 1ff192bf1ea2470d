#pragma once
// shared by the test folders: sets (or unsets, for nullptr) an env var for a scope, then restores it
#include <cstdlib>
#include <optional>
#include <string>

namespace tg::test {

struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    value ? ::setenv(name.c_str(), value, 1) : ::unsetenv(name.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() { old ? ::setenv(name.c_str(), old->c_str(), 1) : ::unsetenv(name.c_str()); }
};

}  // namespace tg::test
