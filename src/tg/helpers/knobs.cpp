#include "tg/helpers/knobs.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "tg/helpers/helpers.h"

namespace tg {

namespace {

#define TG_COUNT_DEVICE(name) +1
constexpr size_t kDeviceKnobs = 0 TG_DEVICE_KNOBS(TG_COUNT_DEVICE);
#undef TG_COUNT_DEVICE

constexpr std::array<KnobInfo, knob_id::count + kDeviceKnobs> kTable = {{
#define TG_KNOB_INT(name, dflt, flags, meaning) {#name, KnobKind::Int, #dflt, flags, meaning},
#define TG_KNOB_STR(name, dflt, flags, meaning) {#name, KnobKind::Str, dflt, flags, meaning},
#define TG_KNOB_DEV(name) {name, KnobKind::Str, "", 0, "1: the default device is " name},
    TG_KNOBS(TG_KNOB_INT, TG_KNOB_STR) TG_DEVICE_KNOBS(TG_KNOB_DEV)
#undef TG_KNOB_INT
#undef TG_KNOB_STR
#undef TG_KNOB_DEV
}};

// "50'000'000" -> 50000000: an int knob's default as written in the table
int64_t parse_default(std::string_view text) {
  int64_t v = 0;
  bool neg = !text.empty() && text[0] == '-';
  for (char c : text.substr(neg ? 1 : 0))
    if (c != '\'') v = v * 10 + (c - '0');
  return neg ? -v : v;
}

// an int knob's text as tinygrad's int(): decimal, optional sign; anything else is a ValueError naming it
int64_t parse_int(std::string_view name, const std::string& text) {
  char* end = nullptr;
  long long r = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0') throw ValueError(cat("env var ", name, "=", text, " is not an integer"));
  return r;
}

}  // namespace

struct KnobSnapshot {
  std::array<int64_t, kTable.size()> ints{};
  std::array<std::string, kTable.size()> texts;
  std::array<bool, kTable.size()> set{};
  std::string code_key, kernelize_key;

  // knob i takes `text` (nullopt: its default)
  void assign(size_t i, const std::optional<std::string>& text) {
    const KnobInfo& k = kTable[i];
    // an empty value counts as unset, as tinygrad's getenv reads it
    set[i] = text.has_value() && !text->empty();
    texts[i] = set[i] ? *text : std::string(k.default_text);
    if (k.kind == KnobKind::Int) {
      ints[i] = set[i] ? parse_int(k.name, texts[i]) : parse_default(k.default_text);
      texts[i] = std::to_string(ints[i]);
    }
  }
  void make_keys() {
    code_key.clear(), kernelize_key.clear();
    for (size_t i = 0; i < kTable.size(); i++) {
      if (kTable[i].flags & knob_flag::CODE) code_key += cat(kTable[i].name, "=", texts[i], ";");
      if (kTable[i].flags & knob_flag::KERNELIZE) kernelize_key += cat(kTable[i].name, "=", texts[i], ";");
    }
  }
};

namespace {

// the process's knobs: the environment's, read at the first knob read, then whatever set_knob changed. Every
// version is kept (set_knob is rare), so a thread may go on reading the one it loaded.
std::mutex base_mu;
std::vector<Knobs>& base_versions() {
  static std::vector<Knobs> v;
  return v;
}
std::atomic<const KnobSnapshot*> base_ptr{nullptr};

const KnobSnapshot* load_base() {
  if (const KnobSnapshot* b = base_ptr.load(std::memory_order_acquire)) return b;
  std::lock_guard lock(base_mu);
  if (const KnobSnapshot* b = base_ptr.load(std::memory_order_acquire)) return b;
  auto s = std::make_shared<KnobSnapshot>();
  for (size_t i = 0; i < kTable.size(); i++) {
    const char* v = std::getenv(std::string(kTable[i].name).c_str());
    s->assign(i, v ? std::optional<std::string>(v) : std::nullopt);
  }
  s->make_keys();
  base_versions().push_back(s);
  base_ptr.store(s.get(), std::memory_order_release);
  return s.get();
}
Knobs base_shared() {
  load_base();
  std::lock_guard lock(base_mu);
  return base_versions().back();  // the newest version is the one base_ptr points at
}

// this thread's Context (or KnobScope) knobs; null: the process's
thread_local Knobs tls_knobs;
thread_local const KnobSnapshot* tls_ptr = nullptr;

const KnobSnapshot& cur() { return tls_ptr ? *tls_ptr : *load_base(); }

size_t index_of(std::string_view name) {
  const KnobInfo* k = find_knob(name);
  if (!k) throw ValueError(cat("no knob named ", name, " (src/tg/helpers/knobs.h declares them)"));
  return static_cast<size_t>(k - kTable.data());
}

// a copy of `from` with the settings applied; STARTUP knobs refuse
template <class Settings>
std::shared_ptr<KnobSnapshot> with_settings(const KnobSnapshot& from, const Settings& settings) {
  auto s = std::make_shared<KnobSnapshot>(from);
  for (const auto& [name, value] : settings) {
    size_t i = index_of(name);
    if (kTable[i].flags & knob_flag::STARTUP)
      throw ValueError(cat(name, " is read once when its part of the engine starts: set it in the environment"));
    s->assign(i, value.text);
  }
  s->make_keys();
  return s;
}

void install(Knobs k) {
  tls_ptr = k.get();
  tls_knobs = std::move(k);
}

}  // namespace

std::span<const KnobInfo> knob_table() { return kTable; }
const KnobInfo* find_knob(std::string_view name) {
  for (const KnobInfo& k : kTable)
    if (k.name == name) return &k;
  return nullptr;
}

int64_t IntKnob::value() const { return cur().ints[id]; }
bool IntKnob::is_set() const { return cur().set[id]; }
const std::string& StrKnob::value() const { return cur().texts[id]; }
bool StrKnob::is_set() const { return cur().set[id]; }

std::string knob_text(std::string_view name) { return cur().texts[index_of(name)]; }
int64_t knob_int(std::string_view name) {
  size_t i = index_of(name);
  if (kTable[i].kind != KnobKind::Int) throw TypeError(cat("knob ", name, " is a string, not an integer"));
  return cur().ints[i];
}
bool knob_is_set(std::string_view name) { return cur().set[index_of(name)]; }

Context::Context(std::initializer_list<std::pair<std::string_view, KnobValue>> settings)
    : mine_(with_settings(cur(), settings)), prev_(tls_knobs) {
  install(mine_);
}
Context::Context(const std::vector<std::pair<std::string, KnobValue>>& settings)
    : mine_(with_settings(cur(), settings)), prev_(tls_knobs) {
  install(mine_);
}
Context::~Context() { install(std::move(prev_)); }

Knobs current_knobs() { return tls_knobs ? tls_knobs : base_shared(); }
KnobScope::KnobScope(Knobs knobs) : prev_(tls_knobs) { install(std::move(knobs)); }
KnobScope::~KnobScope() { install(std::move(prev_)); }

void set_knob(std::string_view name, const KnobValue& value) {
  load_base();
  std::lock_guard lock(base_mu);  // one set_knob at a time, each from the newest version
  const KnobSnapshot* b = base_ptr.load(std::memory_order_acquire);
  std::shared_ptr<KnobSnapshot> s =
      with_settings(*b, std::vector<std::pair<std::string_view, KnobValue>>{{name, value}});
  base_versions().push_back(s);
  base_ptr.store(s.get(), std::memory_order_release);
}

const std::string& knobs_key(uint8_t flag) {
  return flag == knob_flag::KERNELIZE ? cur().kernelize_key : cur().code_key;
}

int64_t getenv(const char* name, int64_t default_value) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return default_value;
  return parse_int(name, v);
}
std::string getenv_str(const char* name, const std::string& default_value) {
  const char* v = std::getenv(name);
  return v == nullptr ? default_value : std::string(v);
}

}  // namespace tg
