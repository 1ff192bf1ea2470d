// tg::json: the strict parser, and the writer against what python's json.dumps(v, separators=(',', ':')) writes
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tg/helpers/helpers.h"
#include "tg/helpers/json.h"

using namespace tg;

namespace {

// parse must fail with a message containing `part`
void expect_bad(const std::string& text, const std::string& part) {
  try {
    json::parse(text);
    ADD_FAILURE() << "parsed " << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << text << ": " << e.what();
  }
}

}  // namespace

TEST(Json, ParsesValues) {
  json::Value v = json::parse(" {\"a\" : [1, -2.5, 1E2, true, false, null, \"x\"], \"b\": {}, \"c\": [] } \n");
  ASSERT_TRUE(v.is_object());
  const json::Array& a = v.find("a")->as_array();
  ASSERT_EQ(a.size(), 7u);
  EXPECT_TRUE(a[0].is_int());
  EXPECT_EQ(a[0].as_int(), 1);
  EXPECT_EQ(a[1].as_double(), -2.5);
  EXPECT_TRUE(a[2].is_number() && !a[2].is_int());  // an exponent makes a float, as python's json
  EXPECT_EQ(a[2].as_double(), 100.0);
  EXPECT_EQ(a[3].as_bool(), true);
  EXPECT_EQ(a[4].as_bool(), false);
  EXPECT_TRUE(a[5].is_null());
  EXPECT_EQ(a[6].as_string(), "x");
  EXPECT_TRUE(v.find("b")->as_object().empty());
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_EQ(a[0].find("x"), nullptr);  // not an object
  // keys stay in document order
  json::Value o = json::parse(R"({"z":1,"a":2,"m":3})");
  std::vector<std::string> keys;
  for (const auto& kv : o.as_object()) keys.push_back(kv.first);
  EXPECT_EQ(keys, (std::vector<std::string>{"z", "a", "m"}));
  // ints: the whole int64 range; beyond it a float, as python's int would be
  EXPECT_EQ(json::parse("9223372036854775807").as_int(), INT64_MAX);
  EXPECT_EQ(json::parse("-9223372036854775808").as_int(), INT64_MIN);
  EXPECT_FALSE(json::parse("9223372036854775808").is_int());
  EXPECT_EQ(json::parse("9223372036854775808").as_double(), 9223372036854775808.0);
  EXPECT_EQ(json::parse("-0").as_int(), 0);
  EXPECT_TRUE(std::signbit(json::parse("-0.0").as_double()));
  // a kind asked for as another is an Error naming both
  EXPECT_THROW(json::parse("1").as_string(), Error);
  EXPECT_THROW(json::parse("\"1\"").as_int(), Error);
}

TEST(Json, Strings) {
  EXPECT_EQ(json::parse(R"("a\"b\\c\/d\b\f\n\r\t")").as_string(), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(json::parse(R"("\u00e9\u00E9")").as_string(), "\xC3\xA9\xC3\xA9");
  EXPECT_EQ(json::parse(R"("\ud83d\ude00")").as_string(), "\xF0\x9F\x98\x80");  // a surrogate pair
  EXPECT_EQ(json::parse("\"h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"").as_string(),
            "h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(json::parse(R"("\u0000")").as_string(), std::string(1, '\0'));
}

TEST(Json, RejectsWhatIsNotStrictJson) {
  expect_bad("", "expected a value, got end of input at byte 0");
  expect_bad("   ", "expected a value, got end of input at byte 3");
  expect_bad("{", "expected a string key, got end of input at byte 1");
  expect_bad("{\"a\" 1}", "expected ':' after an object key, got '1' at byte 5");
  expect_bad("{\"a\":1,}", "expected a string key, got '}' at byte 7");
  expect_bad("[1,]", "expected a value, got ']' at byte 3");
  expect_bad("[1 2]", "expected ',' or ']' in an array, got '2' at byte 3");
  expect_bad("{\"a\":1 \"b\":2}", "expected ',' or '}' in an object");
  expect_bad("{a:1}", "expected a string key, got 'a'");
  expect_bad("{\"a\":1,\"a\":2}", "duplicate key 'a' at byte 7");
  expect_bad("1 2", "unexpected '2' after the value at byte 2");
  expect_bad("// c\n1", "expected a value, got '/'");
  expect_bad("NaN", "expected a value, got 'N'");
  expect_bad("Infinity", "expected a value, got 'I'");
  expect_bad("-Infinity", "expected a digit, got 'I'");
  expect_bad("tru", "invalid literal, expected true");
  expect_bad("nul", "invalid literal, expected null");
  expect_bad("01", "leading zero");
  expect_bad("-", "expected a digit, got end of input");
  expect_bad("1.", "expected a digit after '.'");
  expect_bad(".5", "expected a value, got '.'");
  expect_bad("1e", "expected a digit in the exponent");
  expect_bad("+1", "expected a value, got '+'");
  expect_bad("1e400", "out of the range of a double");
  expect_bad("\"abc", "unterminated string");
  expect_bad("\"a\nb\"", "unescaped control character byte 0x0a in a string at byte 2");
  expect_bad("\"\\x\"", "invalid escape \\'x'");
  expect_bad("\"\\u12g4\"", "invalid hex digit 'g'");
  expect_bad("\"\\u12", "truncated \\u escape");
  expect_bad("\"\\ud83d\"", "lone high surrogate");
  expect_bad("\"\\ud83d\\u0041\"", "lone high surrogate");
  expect_bad("\"\\ude00\"", "lone low surrogate");
  expect_bad("\"\xC3\"", "invalid UTF-8");              // truncated sequence
  expect_bad("\"\xC0\xAF\"", "invalid UTF-8");          // overlong '/'
  expect_bad("\"\xED\xA0\x80\"", "invalid UTF-8");      // an encoded surrogate
  expect_bad("\"\xF4\x90\x80\x80\"", "invalid UTF-8");  // beyond U+10FFFF
  expect_bad("\"\xFF\"", "invalid UTF-8");
  expect_bad("\x01", "expected a value, got byte 0x01");
  // nesting is bounded (the parser recurses once per level)
  EXPECT_NO_THROW(json::parse(std::string(json::max_depth, '[') + std::string(json::max_depth, ']')));
  expect_bad(std::string(json::max_depth + 1, '[') + std::string(json::max_depth + 1, ']'), "nested deeper than 128");
  expect_bad(std::string(100000, '['), "nested deeper than 128");
}

TEST(Json, DumpsAsPython) {
  // python: json.dumps({"a":[1,2.5,1e16,1e-05,0.1,-0.0,123456789012345678,True,None,"\x00\x1f\x7f\u00e9\U0001F600/"]},
  //                    separators=(",",":"))
  json::Value v = json::Object{{"a", json::Array{1, 2.5, 1e16, 1e-05, 0.1, -0.0, int64_t(123456789012345678), true,
                                                 nullptr, std::string("\x00\x1f\x7f\xC3\xA9\xF0\x9F\x98\x80/", 10)}}};
  EXPECT_EQ(
      v.dump(),
      R"({"a":[1,2.5,1e+16,1e-05,0.1,-0.0,123456789012345678,true,null,"\u0000\u001f\u007f\u00e9\ud83d\ude00/"]})");
  EXPECT_EQ(json::Value(1.0).dump(), "1.0");
  EXPECT_EQ(json::Value(5e-324).dump(), "5e-324");
  EXPECT_EQ(json::Value(INT64_MAX).dump(), "9223372036854775807");
  EXPECT_EQ(json::Value("q\"\\\b\f\n\r\t").dump(), R"("q\"\\\b\f\n\r\t")");
  EXPECT_EQ(json::Value(json::Object{}).dump(), "{}");
  EXPECT_EQ(json::Value(json::Array{}).dump(), "[]");
  // what it writes, it reads back
  EXPECT_EQ(json::parse(v.dump()), v);
  // no NaN or inf in strict JSON, no invalid UTF-8, no uint64 beyond int64
  EXPECT_THROW(json::Value(std::nan("")).dump(), Error);
  EXPECT_THROW(json::Value(INFINITY).dump(), Error);
  EXPECT_THROW(json::Value("\xC3").dump(), Error);
  EXPECT_THROW(json::Value(uint64_t(1) << 63), Error);
  EXPECT_EQ(json::Value(uint64_t(1) << 62).as_int(), int64_t(1) << 62);
}
