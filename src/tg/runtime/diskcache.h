#pragma once
// runtime: the on-disk cache of compiled kernels (tinygrad's diskcache_get/diskcache_put, which use sqlite).
// One file per entry under cache_dir()/<table>/, named by a 128-bit hash of the key. An entry holds a header
// (magic, key and value lengths, checksum), the full key and the value, so a hash collision, a torn write or a
// flipped byte reads as a miss, never as a wrong binary. Writes go to a temp file that is renamed into place,
// so concurrent processes see either the old entry or the new one.
#include <optional>
#include <string>

namespace tg {

// $XDG_CACHE_HOME/tinygrad.cpp, default ~/.cache/tinygrad.cpp (read on every call, so tests can redirect it)
std::string cache_dir();
// the path an entry lives at (whether or not it exists)
std::string diskcache_path(const std::string& table, const std::string& key);
// the value stored under key, or nullopt when absent, unreadable or corrupt. CACHELEVEL=0 turns get and put off.
std::optional<std::string> diskcache_get(const std::string& table, const std::string& key);
// store value under key; best effort: a cache that cannot be written is skipped silently (DEBUG>=1 says why)
void diskcache_put(const std::string& table, const std::string& key, const std::string& value);

}  // namespace tg
