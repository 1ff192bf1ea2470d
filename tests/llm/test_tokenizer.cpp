// The GGUF tokenizer (llm/tokenizer.h), SentencePiece: ids equal llama.cpp's for the same file over texts with
// spaces, newlines, digits and characters no piece covers (byte fallback), decode gives the text back, bad metadata
// is a ValueError. The vocabulary is built here from a small corpus, as SentencePiece would: its characters, then
// frequent word pieces, scored by frequency.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "error_of.h"
#include "llm_util.h"
#include "tg/helpers/utf8.h"
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
