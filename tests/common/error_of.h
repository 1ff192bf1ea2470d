#pragma once
// shared by the test folders: the message of the tg::Error f throws, or "(no error)"
#include <functional>
#include <string>

#include "tg/helpers/helpers.h"

namespace tg::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace tg::test
