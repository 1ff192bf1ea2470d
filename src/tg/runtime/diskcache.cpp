#include "tg/runtime/diskcache.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"

namespace tg {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'T', 'G', 'C', 'A', 'C', 'H', 'E', '1'};
struct Header {
  char magic[8];
  uint64_t key_len, value_len, checksum;  // checksum: fnv1a over key then value
};
static_assert(sizeof(Header) == 32);

uint64_t fnv1a_from(uint64_t h, std::string_view s) {
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}
uint64_t checksum(const std::string& key, const std::string& value) { return fnv1a_from(fnv1a(key), value); }

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool valid_table(const std::string& t) {
  if (t.empty()) return false;
  for (char c : t)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

std::string cache_dir() {
  std::string base = XDG_CACHE_HOME;
  if (base.empty()) base = HOME.value() + "/.cache";
  return base + "/tinygrad.cpp";
}

std::string diskcache_path(const std::string& table, const std::string& key) {
  TG_ASSERT(valid_table(table), "bad cache table name ", py_str_repr(table));
  // two differently seeded 64-bit hashes: 128 bits keep collisions (which still only read as misses) negligible
  uint64_t h1 = fnv1a(key), h2 = fnv1a_from(0x9e3779b97f4a7c15ull, key);
  return cat(cache_dir(), "/", table, "/", hex64(h1), hex64(h2), ".bin");
}

std::optional<std::string> diskcache_get(const std::string& table, const std::string& key) {
  if (CACHELEVEL < 1) return std::nullopt;
  std::ifstream f(diskcache_path(table, key), std::ios::binary);
  if (!f) return std::nullopt;
  std::string blob((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Header h;
  if (blob.size() < sizeof(h)) return std::nullopt;
  std::memcpy(&h, blob.data(), sizeof(h));
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  // lengths first: a truncated file (or garbage lengths) must not make us read past the blob
  if (h.key_len > blob.size() || h.value_len > blob.size() || sizeof(h) + h.key_len + h.value_len != blob.size())
    return std::nullopt;
  if (blob.compare(sizeof(h), h.key_len, key) != 0) return std::nullopt;  // another key with the same hash
  std::string value = blob.substr(sizeof(h) + h.key_len);
  if (checksum(key, value) != h.checksum) {
    if (DEBUG >= 1) std::cout << "diskcache: corrupt entry in " << table << ", recomputing" << std::endl;
    return std::nullopt;
  }
  return value;
}

void diskcache_put(const std::string& table, const std::string& key, const std::string& value) {
  if (CACHELEVEL < 1) return;
  static std::atomic<uint64_t> counter{0};
  fs::path path = diskcache_path(table, key);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  // unique per process and per call, so two writers never share a temp file
  fs::path tmp = cat(path.string(), ".tmp", ::getpid(), "_", counter++);
  Header h;
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.key_len = key.size(), h.value_len = value.size(), h.checksum = checksum(key, value);
  bool ok = false;
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (f) {
      f.write(reinterpret_cast<const char*>(&h), sizeof(h));
      f.write(key.data(), static_cast<std::streamsize>(key.size()));
      f.write(value.data(), static_cast<std::streamsize>(value.size()));
      f.flush();
      ok = static_cast<bool>(f);
    }
  }
  if (ok) fs::rename(tmp, path, ec);
  if (!ok || ec) {
    fs::remove(tmp, ec);
    if (DEBUG >= 1) std::cout << "diskcache: could not write " << path.string() << std::endl;
  }
}

}  // namespace tg
