#pragma once
// the Python exception a tg::Error's kind becomes (python/src/module.cpp raises it), for messages in tests
#include "tg/helpers/helpers.h"

namespace tg::test {

inline const char* kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::Runtime: return "RuntimeError";
    case ErrorKind::Index: return "IndexError";
    case ErrorKind::Value: return "ValueError";
    case ErrorKind::Type: return "TypeError";
    case ErrorKind::Assertion: return "AssertionError";
    case ErrorKind::NotImplemented: return "NotImplementedError";
  }
  return "?";
}

}  // namespace tg::test
