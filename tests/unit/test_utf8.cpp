// UTF-8 (helpers/utf8.h), strict as RFC 3629: what the JSON and GGUF readers accept, U+FFFD for what can't be shown,
// and the whole-character prefix a token stream prints
#include <gtest/gtest.h>

#include "tg/helpers/utf8.h"

using namespace tg;

TEST(Utf8, InvalidSequencesBecomeReplacementCharacters) {
  EXPECT_EQ(replace_invalid_utf8("caf\xc3\xa9"), "café");
  EXPECT_EQ(replace_invalid_utf8("a\xc3"), "a\xef\xbf\xbd");                                // a character cut short
  EXPECT_EQ(replace_invalid_utf8("\xff\x80z"), "\xef\xbf\xbd\xef\xbf\xbdz");                // bytes that start nothing
  EXPECT_EQ(replace_invalid_utf8("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");                  // an overlong '/'
  EXPECT_EQ(replace_invalid_utf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
}

TEST(Utf8, DecodeAndValidate) {
  size_t i = 0;
  EXPECT_EQ(decode_utf8("\xe2\x96\x81x", i), 0x2581);
  EXPECT_EQ(i, 3u);
  i = 0;
  EXPECT_EQ(decode_utf8("\xe2\x96", i), -1);  // truncated: i stays
  EXPECT_EQ(i, 0u);
  EXPECT_TRUE(is_valid_utf8("plain, café, 日本語, 😀"));
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_EQ(utf8_char_len(0xF0), 4u);
  EXPECT_EQ(utf8_char_len(0x80), 1u);  // a byte that leads nothing: one, as llama.cpp splits
}

TEST(Utf8, WholePrefixHoldsBackACharacterStillComing) {
  EXPECT_EQ(utf8_whole_prefix(""), 0u);
  EXPECT_EQ(utf8_whole_prefix("ab"), 2u);
  EXPECT_EQ(utf8_whole_prefix("a\xf0\x9f\x98"), 1u);      // three of the emoji's four bytes: wait for the fourth
  EXPECT_EQ(utf8_whole_prefix("a\xf0\x9f\x98\x80"), 5u);  // all four
  EXPECT_EQ(utf8_whole_prefix("\xc3"), 0u);
  EXPECT_EQ(utf8_whole_prefix("a\x80"), 2u);  // a stray byte comes out (as U+FFFD)
}
