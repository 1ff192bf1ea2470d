// The ClangRenderer's 8-bit dot-product helper (cpu_dot4.cpp): each int32 lane the sum of four uint8 x int8
// products, in the body the target's ISA macros pick: vpdpbusd (AVX512-VNNI, AVX-VNNI), pmaddubsw + pmaddwd (AVX2,
// when the unsigned side keeps the pair sums within 16 bits: the `n` helpers) or plain C. Each body is compiled for a
// -march that selects it (and checked for its instruction in the assembly), and run where this CPU can. The sum helpers
// (the slices of one dot accumulated in the instruction) the same way.
#include <cpuid.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "tg/helpers/helpers.h"
#include "tg/renderer/cstyle.h"

namespace tg {
namespace {

bool have_clang() { return std::system("command -v clang >/dev/null 2>&1") == 0; }

struct Ran {
  int status;
  std::string output;
};
Ran sh(const std::string& cmd) {  // cmd's paths are this test's own temp files
  Ran r{-1, ""};
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  for (size_t k; (k = std::fread(buf, 1, sizeof(buf), p)) > 0;) r.output.append(buf, k);
  r.status = ::pclose(p);
  return r;
}

bool host_has(const std::string& f) {  // from CPUID (clang 14's __builtin_cpu_supports lacks avxvnni)
  if (f.empty()) return true;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (f == "avx2") return __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((b >> 5) & 1);
  if (f == "avx512vnni") return __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((c >> 11) & 1) && ((b >> 16) & 1);
  if (f == "avxvnni") return __get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 4) & 1);
  return false;
}

// a C program: the helper, a and b filled over their ranges, every lane checked against the scalar sum
std::string program(const std::string& name, int64_t n) {
  ClangRenderer r;
  const int64_t amax = name.back() == 'n' ? 127 : 255;
  std::string src = "#include <stdio.h>\n";
  for (DType dt : {dtypes::int32.vec(static_cast<int>(n)), dtypes::uint8.vec(static_cast<int>(4 * n)),
                   dtypes::int8.vec(static_cast<int>(4 * n))})
    src += r.render_vector_prefix(dt) + "\n";
  src += r.render_dot4(name, n) + "\n";
  const std::string i32 = r.render_dtype(dtypes::int32.vec(static_cast<int>(n))),
                    u8 = r.render_dtype(dtypes::uint8.vec(static_cast<int>(4 * n))),
                    s8 = r.render_dtype(dtypes::int8.vec(static_cast<int>(4 * n)));
  src += cat("int main(void) {\n  int bad = 0;\n  for (int t = 0; t < 64; t++) {\n    ", u8, " a; ", s8, " b;\n",
             "    for (int i = 0; i < ", 4 * n, "; i++) {\n", "      a[i] = (unsigned char)((i * 37 + t * 101) % ",
             amax + 1, ");\n", "      b[i] = (signed char)((i * 53 + t * 29) % 256 - 128);\n", "    }\n",
             "    if (t == 0) for (int i = 0; i < ", 4 * n, "; i++) a[i] = ", amax, ", b[i] = -128;  // the extremes\n",
             "    ", i32, " r = ", name, "(a, b);\n", "    for (int j = 0; j < ", n, "; j++) {\n",
             "      int want = 0;\n", "      for (int k = 0; k < 4; k++) want += (int)a[4*j+k] * (int)b[4*j+k];\n",
             "      if (r[j] != want) { if (bad++ < 4) printf(\"lane %d: %d, want %d\\n\", j, r[j], want); }\n",
             "    }\n  }\n  return bad != 0;\n}\n");
  return src;
}

// the same for a sum helper (`__tg_dot4_64ns16`: c plus the n / m slices of the 64-lane dot, in m lanes), whose dot
// helper is its generic body's
std::string sum_program(const std::string& name, int64_t n, int64_t m) {
  ClangRenderer r;
  const std::string base = name.substr(0, name.rfind('s'));
  const int64_t amax = base.back() == 'n' ? 127 : 255;
  std::string src = "#include <stdio.h>\n";
  for (DType dt : {dtypes::int32.vec(static_cast<int>(n)), dtypes::int32.vec(static_cast<int>(m)),
                   dtypes::uint8.vec(static_cast<int>(4 * n)), dtypes::int8.vec(static_cast<int>(4 * n))})
    src += r.render_vector_prefix(dt) + "\n";
  src += r.render_dot4(base, n) + "\n" + r.render_dot4_sum(name, n, m) + "\n";
  const std::string i32 = r.render_dtype(dtypes::int32.vec(static_cast<int>(m))),
                    u8 = r.render_dtype(dtypes::uint8.vec(static_cast<int>(4 * n))),
                    s8 = r.render_dtype(dtypes::int8.vec(static_cast<int>(4 * n)));
  src += cat(
      "int main(void) {\n  int bad = 0;\n  for (int t = 0; t < 64; t++) {\n    ", u8, " a; ", s8, " b; ", i32, " c;\n",
      "    for (int i = 0; i < ", 4 * n, "; i++) {\n", "      a[i] = (unsigned char)((i * 37 + t * 101) % ", amax + 1,
      ");\n", "      b[i] = (signed char)((i * 53 + t * 29) % 256 - 128);\n", "    }\n", "    for (int j = 0; j < ", m,
      "; j++) c[j] = (j * 7919 + t * 13) % 20001 - 10000;\n", "    if (t == 0) for (int i = 0; i < ", 4 * n,
      "; i++) a[i] = ", amax, ", b[i] = -128;  // the extremes\n", "    ", i32, " r = ", name, "(a, b, c);\n",
      "    for (int j = 0; j < ", m, "; j++) {\n", "      int want = c[j];\n", "      for (int q = 0; q < ", n / m,
      "; q++)\n", "        for (int k = 0; k < 4; k++) want += (int)a[4*(q*", m, "+j)+k] * (int)b[4*(q*", m,
      "+j)+k];\n", "      if (r[j] != want) { if (bad++ < 4) printf(\"lane %d: %d, want %d\\n\", j, r[j], want); }\n",
      "    }\n  }\n  return bad != 0;\n}\n");
  return src;
}

struct Target {
  const char* march;
  const char* feature;      // the host's, to run it ("" every x86-64 host)
  const char* instruction;  // in the assembly of a helper that may use it
  bool narrow_only;         // only the `n` helpers use it
};

TEST(CpuDot4, EveryIsasBodyComputesTheDotProducts) {
  if (!have_clang()) GTEST_SKIP() << "no clang";
  const std::vector<Target> targets{{"x86-64-v2", "", "", false},
                                    {"x86-64-v3", "avx2", "vpmaddubsw", true},
                                    {"alderlake", "avxvnni", "vpdpbusd", false},
                                    {"icelake-server", "avx512vnni", "vpdpbusd", false}};
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("tg_dot4_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // (name, n, m): a dot helper's n lanes, or (m > 0) a sum helper's m of n
  for (auto [name, n, m] : std::vector<std::tuple<std::string, int64_t, int64_t>>{{"__tg_dot4_16n", 16, 0},
                                                                                  {"__tg_dot4_16", 16, 0},
                                                                                  {"__tg_dot4_8n", 8, 0},
                                                                                  {"__tg_dot4_64n", 64, 0},
                                                                                  {"__tg_dot4_3n", 3, 0},
                                                                                  {"__tg_dot4_128ns16", 128, 16},
                                                                                  {"__tg_dot4_64s32", 64, 32},
                                                                                  {"__tg_dot4_32ns8", 32, 8},
                                                                                  {"__tg_dot4_12ns4", 12, 4}}) {
    const std::string c = (dir / (name + ".c")).string();
    std::ofstream(c) << (m > 0 ? sum_program(name, n, m) : program(name, n));
    for (const Target& t : targets) {
      SCOPED_TRACE(cat(name, " -march=", t.march));
      const std::string exe = (dir / (name + "_" + t.march)).string();
      Ran asm_ = sh(cat("clang -O2 -march=", t.march, " -S -o - ", c));
      ASSERT_EQ(asm_.status, 0) << asm_.output.substr(0, 2000);
      // the instruction where the body is this ISA's: whole chunks of its width, and a narrow helper where it asks
      const int64_t bytes = std::string(t.march) == "icelake-server" ? 64 : 32;
      const bool chunks = (4 * n) % bytes == 0 && (m == 0 || (4 * m) % bytes == 0);
      const bool narrow = (m > 0 ? name.substr(0, name.rfind('s')) : name).back() == 'n';
      if (*t.instruction && chunks && (!t.narrow_only || narrow)) {
        EXPECT_NE(asm_.output.find(t.instruction), std::string::npos);
      }
      if (!host_has(t.feature)) continue;
      Ran cc = sh(cat("clang -O2 -march=", t.march, " -o ", exe, " ", c));
      ASSERT_EQ(cc.status, 0) << cc.output.substr(0, 2000);
      Ran run = sh(exe);
      EXPECT_EQ(run.status, 0) << run.output;
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tg
