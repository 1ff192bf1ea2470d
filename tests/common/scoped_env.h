#pragma once
// shared by the test folders: a knob set (or given its default back, for nullptr) for a scope: a tg::Context
#include "tg/helpers/knobs.h"

namespace tg::test {

struct ScopedEnv {
  Context ctx;
  ScopedEnv(std::string_view name, const char* value) : ctx{{name, KnobValue(value)}} {}
};

}  // namespace tg::test
