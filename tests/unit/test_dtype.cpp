// dtypes against the reference's printed tables (tests/data/enums/dtypes_list.out, uop_repr/repr_cases.out R10)
#include <gtest/gtest.h>
#include <tinygrad/tinygrad.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

using namespace tg;

namespace {

std::vector<std::string> read_lines(const std::string& rel) {
  std::ifstream f(std::string(TG_TEST_DATA) + "/" + rel);
  EXPECT_TRUE(f.good()) << "missing test data " << rel;
  std::vector<std::string> out;
  for (std::string line; std::getline(f, line);) out.push_back(line);
  return out;
}
// the lines after the "# <title>" header, up to the next "#" line
std::vector<std::string> section(const std::vector<std::string>& lines, const std::string& title) {
  std::vector<std::string> out;
  bool in = false;
  for (auto& l : lines) {
    if (l.rfind("#", 0) == 0) {
      if (in) break;
      in = l.find(title) != std::string::npos;
    } else if (in) {
      out.push_back(l);
    }
  }
  EXPECT_FALSE(out.empty()) << "no section " << title;
  return out;
}
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, sep);) out.push_back(x);
  return out;
}
std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string w; ss >> w;) out.push_back(w);
  return out;
}
// "dtypes.half" or "half" -> the dtype
DType parse_dtype(std::string s) {
  if (s.rfind("dtypes.", 0) == 0) s = s.substr(7);
  return dtypes::from_name(s);
}

}  // namespace

// *** the DTYPES_DICT table: repr | C name | itemsize | priority | fmt | min | max ***

TEST(DType, TableFromReference) {
  auto rows = section(read_lines("enums/dtypes_list.out"), "DTYPES_DICT");
  ASSERT_EQ(rows.size(), 27u);  // 15 dtypes, 11 aliases, void
  for (auto& row : rows) {
    SCOPED_TRACE(row);
    auto cols = split(row, '|');
    auto head = words(cols[0]);
    DType d = dtypes::from_name(head[0]);
    EXPECT_EQ(d.repr(), head[1]);
    EXPECT_EQ(cat(d), head[1]);  // str == repr
    EXPECT_EQ(d.name(), trim(cols[1]));
    EXPECT_EQ(d.itemsize(), std::stoi(cols[2]));
    EXPECT_EQ(d.priority(), std::stoi(cols[3]));
    if (cols.size() < 5) continue;  // void prints no fmt/min/max
    std::string fmt = trim(cols[4]);
    EXPECT_EQ(d.fmt() == 0 ? "None" : std::string(1, d.fmt()), fmt);
    EXPECT_EQ(const_repr(dtypes::min(d)), trim(cols[5]));
    EXPECT_EQ(const_repr(dtypes::max(d)), trim(cols[6]));  // ulong's 2**64-1 too: a uint64_t ConstValue
  }
}

TEST(DType, DefaultsAndGroups) {
  auto lines = read_lines("enums/dtypes_list.out");
  auto reprs = [](const std::vector<DType>& ds) {
    std::vector<std::string> r;
    for (DType d : ds) r.push_back(d.repr());
    return "(" + join(r, ", ") + ")";
  };
  auto find = [&](const std::string& prefix) -> std::string {
    for (auto& l : lines)
      if (l.rfind(prefix, 0) == 0) return l.substr(prefix.size());
    ADD_FAILURE() << "no line " << prefix;
    return "";
  };
  EXPECT_EQ(cat(dtypes::default_float, " ", dtypes::default_int), find("# default_float / default_int: "));
  EXPECT_EQ(reprs(dtypes::floats), find("# dtypes.floats: "));
  EXPECT_EQ(reprs(dtypes::ints), find("# dtypes.ints: "));
  EXPECT_EQ(reprs(dtypes::all), find("# dtypes.all: "));
}

// *** promotion: the full 15x15 matrix, cell by cell ***

TEST(DType, LeastUpperDtypeFullMatrix) {
  auto rows = section(read_lines("enums/dtypes_list.out"), "full matrix");
  ASSERT_EQ(rows.size(), 16u);
  auto header = words(rows[0]);
  ASSERT_EQ(header.size(), 15u);
  int cells = 0;
  for (size_t r = 1; r < rows.size(); r++) {
    auto w = words(rows[r]);
    ASSERT_EQ(w.size(), 16u) << rows[r];
    for (size_t c = 0; c < 15; c++, cells++) {
      DType a = parse_dtype(w[0]), b = parse_dtype(header[c]);
      EXPECT_EQ(least_upper_dtype({a, b}), parse_dtype(w[c + 1])) << "least_upper_dtype(" << a << ", " << b << ")";
    }
  }
  EXPECT_EQ(cells, 225);
}

TEST(DType, CommonPairsAndUnaryTables) {
  auto lines = read_lines("enums/dtypes_list.out");
  for (auto& row : section(lines, "common pairs")) {  // "  dtypes.int + dtypes.float -> dtypes.float"
    auto w = words(row);
    EXPECT_EQ(least_upper_dtype({parse_dtype(w[0]), parse_dtype(w[2])}), parse_dtype(w[4])) << row;
  }
  for (auto& row : section(lines, "least_upper_float")) {
    auto w = words(row);
    EXPECT_EQ(least_upper_float(parse_dtype(w[0])), parse_dtype(w[2])) << row;
  }
  for (auto& row : section(lines, "sum_acc_dtype")) {
    auto w = words(row);
    EXPECT_EQ(sum_acc_dtype(parse_dtype(w[0])), parse_dtype(w[2])) << row;
  }
  for (auto& row : section(lines, "promo_lattice")) {  // every edge a -> b means least_upper(a, b) == b
    auto w = words(row);
    for (size_t i = 2; i < w.size(); i++) {
      std::string b = w[i];
      for (char ch : {'[', ']', ','}) b.erase(std::remove(b.begin(), b.end(), ch), b.end());
      EXPECT_EQ(least_upper_dtype({parse_dtype(w[0]), parse_dtype(b)}), parse_dtype(b)) << row;
    }
  }
}

// *** vec, ptr and image dtypes print as repr_cases.out R10: repr | str | name ***

TEST(DType, DerivedReprs) {
  std::vector<DType> cases = {dtypes::float32.vec(4),
                              dtypes::float32.ptr(),
                              dtypes::float32.ptr(16),
                              dtypes::float32.ptr(16, true),
                              dtypes::float32.ptr(16).vec(4),
                              dtypes::imagef({2, 4, 4}),
                              dtypes::half.vec(2),
                              dtypes::bool_,
                              dtypes::void_,
                              dtypes::uint8,
                              dtypes::int64,
                              dtypes::bfloat16,
                              dtypes::fp8e4m3};
  auto want = section(read_lines("uop_repr/repr_cases.out"), "R10");
  ASSERT_EQ(want.size(), cases.size());
  for (size_t i = 0; i < cases.size(); i++)
    EXPECT_EQ(cat(cases[i].repr(), " | ", cases[i], " | ", cases[i].name()), want[i]);
}

TEST(DType, DerivedProperties) {
  DType f4 = dtypes::float32.vec(4), p = dtypes::float32.ptr(16), pv = p.vec(4), l = dtypes::half.ptr(8, true);
  EXPECT_EQ(f4.count(), 4);
  EXPECT_EQ(f4.itemsize(), 16);
  EXPECT_EQ(f4.scalar(), dtypes::float32);
  EXPECT_EQ(f4.vcount(), 4);
  EXPECT_EQ(f4, dtypes::float32.vec(4));  // interned: == is identity
  EXPECT_EQ(p.base(), dtypes::float32);
  EXPECT_TRUE(p.is_ptr());
  EXPECT_EQ(p.size(), 16);
  EXPECT_EQ(p.nbytes(), 64);
  EXPECT_EQ(dtypes::float32.ptr().nbytes(), 0);  // unsized
  EXPECT_EQ(pv.vcount(), 4);
  EXPECT_EQ(pv.count(), 1);  // a vector of pointers: count is the pointee's
  EXPECT_EQ(pv.scalar(), p);
  EXPECT_TRUE(l.local());
  EXPECT_EQ(dtypes::void_.vec(4), dtypes::void_);  // void doesn't vectorize
  EXPECT_EQ(dtypes::int32.vec(1), dtypes::int32);
  EXPECT_THROW(f4.vec(2), Error);  // can't vectorize a vector
  EXPECT_THROW(p.ptr(), Error);    // nor point to a pointer
  EXPECT_THROW(dtypes::int32.nbytes(), Error);
  DType img = dtypes::imagef({2, 4, 4});
  EXPECT_TRUE(img.is_image());
  EXPECT_TRUE(dtypes::is_float(img));
  EXPECT_EQ(img.size(), 32);
  EXPECT_EQ(img.ptr(), img);
  EXPECT_EQ(dtypes::imageh({1, 2, 4}).repr(), "dtypes.imageh((1, 2, 4))");
  EXPECT_TRUE(dtypes::is_int(dtypes::int8.vec(4)));
  EXPECT_TRUE(dtypes::is_unsigned(dtypes::uint16.vec(2)));
  EXPECT_TRUE(dtypes::is_bool(dtypes::bool_.vec(2)));
  EXPECT_THROW(dtypes::from_name("float17"), Error);
}

// *** truncate: ints wrap, floats round to the width (values printed by the reference's truncate table) ***

struct TruncateCase {
  DType dtype;
  ConstValue in;
  std::string want;  // python repr of truncate[dtype](in)
};

TEST(DType, Truncate) {
  std::vector<TruncateCase> cases = {
      {dtypes::bool_, int64_t(2), "True"},
      {dtypes::bool_, 0.0, "False"},
      {dtypes::int8, int64_t(127), "127"},
      {dtypes::int8, int64_t(128), "-128"},
      {dtypes::int8, int64_t(200), "-56"},
      {dtypes::int8, int64_t(-129), "127"},
      {dtypes::uint8, int64_t(256), "0"},
      {dtypes::uint8, int64_t(-1), "255"},
      {dtypes::uint8, int64_t(300), "44"},
      {dtypes::int16, int64_t(32768), "-32768"},
      {dtypes::int16, int64_t(-32769), "32767"},
      {dtypes::uint16, int64_t(65536), "0"},
      {dtypes::uint16, int64_t(-1), "65535"},
      {dtypes::int32, int64_t(2147483648), "-2147483648"},
      {dtypes::int32, int64_t(-2147483649), "2147483647"},
      {dtypes::uint32, int64_t(4294967296), "0"},
      {dtypes::uint32, int64_t(-1), "4294967295"},
      {dtypes::int64, INT64_MAX, "9223372036854775807"},
      {dtypes::int64, INT64_MIN, "-9223372036854775808"},
      {dtypes::uint64, int64_t(-1), "18446744073709551615"},
      {dtypes::uint64, INT64_MIN, "9223372036854775808"},
      {dtypes::uint64, UINT64_MAX, "18446744073709551615"},
      {dtypes::int64, UINT64_MAX, "-1"},
      {dtypes::uint32, UINT64_MAX, "4294967295"},
      {dtypes::int32.vec(4), int64_t(2147483648), "-2147483648"},  // truncation is by the scalar
      {dtypes::half, 0.1, "0.0999755859375"},
      {dtypes::half, 65519.0, "65504.0"},
      {dtypes::half, 65520.0, "inf"},
      {dtypes::half, -65520.0, "-inf"},
      {dtypes::half, 1e-8, "0.0"},
      {dtypes::half, 3e-8, "5.960464477539063e-08"},
      {dtypes::half, 2049.0, "2048.0"},  // round half to even
      {dtypes::half, int64_t(3), "3.0"},
      {dtypes::bfloat16, 0.1, "0.099609375"},
      {dtypes::bfloat16, 1.00390625, "1.0"},
      {dtypes::bfloat16, 3.4e38, "inf"},
      {dtypes::bfloat16, -1e39, "-inf"},
      {dtypes::fp8e4m3, 0.1, "0.1015625"},
      {dtypes::fp8e4m3, 500.0, "448.0"},
      {dtypes::fp8e4m3, 448.0, "448.0"},
      {dtypes::fp8e4m3, 1e-4, "0.0"},
      {dtypes::fp8e5m2, 0.1, "0.09375"},
      {dtypes::fp8e5m2, 60000.0, "57344.0"},
      {dtypes::fp8e5m2, 1e6, "57344.0"},
      {dtypes::float32, 0.1, "0.10000000149011612"},
      {dtypes::float32, 1e39, "inf"},
      {dtypes::float64, 0.1, "0.1"},
  };
  for (auto& c : cases)
    EXPECT_EQ(const_repr(truncate(c.in, c.dtype)), c.want) << "truncate " << c.dtype << " " << const_repr(c.in);
  EXPECT_TRUE(std::isnan(std::get<double>(truncate(NAN, dtypes::half))));
}

TEST(DType, AsConst) {
  std::vector<TruncateCase> cases = {
      {dtypes::int32, 2.7, "2"},
      {dtypes::int32, -2.7, "-2"},  // int() truncates toward zero
      {dtypes::int32, true, "1"},
      {dtypes::float32, true, "1.0"},
      {dtypes::float32, int64_t(3), "3.0"},
      {dtypes::half, 0.1, "0.1"},  // no truncation, as the reference
      {dtypes::uint8, int64_t(300), "300"},
      {dtypes::uint64, 1e19, "10000000000000000000"},  // int(1e19): above INT64_MAX, exact
      {dtypes::uint64, int64_t(-1), "-1"},             // not truncated
      {dtypes::bool_, int64_t(3), "True"},
      {dtypes::bool_, 0.0, "False"},
      {dtypes::float32.vec(4), int64_t(3), "3.0"},  // a vector dtype uses its scalar
  };
  for (auto& c : cases)
    EXPECT_EQ(const_repr(dtypes::as_const(c.in, c.dtype)), c.want) << "as_const " << c.dtype << " " << const_repr(c.in);
  EXPECT_THROW(dtypes::as_const(INFINITY, dtypes::int32), Error);
}

TEST(DType, ConstHelpers) {
  EXPECT_TRUE(const_eq_numeric(int64_t(1), 1.0));
  EXPECT_TRUE(const_eq_numeric(true, int64_t(1)));
  EXPECT_FALSE(const_eq_numeric(0.5, int64_t(0)));
  EXPECT_EQ(const_repr(2.0), "2.0");
  EXPECT_EQ(const_repr(1e-10), "1e-10");
  EXPECT_EQ(const_repr(-INFINITY), "-inf");
  EXPECT_EQ(const_repr(NAN), "nan");
  EXPECT_EQ(const_repr(false), "False");
  EXPECT_EQ(dtypes::finfo(dtypes::half), std::make_pair(5, 10));
  EXPECT_EQ(dtypes::finfo(dtypes::bfloat16), std::make_pair(8, 7));
  EXPECT_THROW(dtypes::finfo(dtypes::int32), Error);
}

TEST(DType, Ordering) {
  // tinygrad orders by (priority, itemsize, name, fmt, count)
  EXPECT_TRUE(dtypes::bool_ < dtypes::int8);
  EXPECT_TRUE(dtypes::float32 < dtypes::float64);
  EXPECT_TRUE(dtypes::float32 < dtypes::float32.vec(2));
  EXPECT_FALSE(dtypes::float32 < dtypes::float32);
}
