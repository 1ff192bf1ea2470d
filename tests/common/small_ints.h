#pragma once
// Operands whose products sum exactly in float32: small integers in a fixed pattern, and the host's matmul of them
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tg::test {

// n floats (i * step) % mod - mod / 2: integers in [-mod / 2, mod - 1 - mod / 2]
inline std::vector<float> small_ints(size_t n, int64_t step, int64_t mod) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<float>(static_cast<int64_t>(i) * step % mod - mod / 2);
  return v;
}

// (m, k) @ (k, n), row-major, summed in k's order
inline std::vector<float> host_matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k,
                                      int64_t n) {
  std::vector<float> out(static_cast<size_t>(m * n), 0.0f);
  for (int64_t i = 0; i < m; i++)
    for (int64_t r = 0; r < k; r++)
      for (int64_t j = 0; j < n; j++)
        out[static_cast<size_t>(i * n + j)] += a[static_cast<size_t>(i * k + r)] * b[static_cast<size_t>(r * n + j)];
  return out;
}

}  // namespace tg::test
