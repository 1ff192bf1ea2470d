#pragma once
// llm: the tokenizer a GGUF file carries (tokenizer.ggml.*). SentencePiece ("llama": Llama 1/2, TinyLlama, Mistral):
// a space prefix, spaces as U+2581, then the vocabulary's pieces merged greedily by score (highest first, leftmost on
// a tie), as llama.cpp's llm_tokenizer_spm; a character no piece covers falls back to its bytes (<0x..> tokens).
// Token ids equal llama.cpp's for the same file (tests/llm/test_tokenizer.cpp).
//
//   llm::Tokenizer tok = llm::Tokenizer::from_gguf(file.kv);
//   std::vector<int64_t> ids = tok.encode("Hello world", /*add_bos=*/true);
//   std::string text = tok.decode(ids);
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tg/nn/gguf.h"

namespace tg::llm {

class Tokenizer {
 public:
  // from the metadata; a missing key or a model other than those supported is a ValueError naming it
  static Tokenizer from_gguf(const nn::GGUFMetadata& kv);

  std::vector<int64_t> encode(std::string_view text, bool add_bos = false) const;
  std::string decode(const std::vector<int64_t>& ids) const;  // control tokens (BOS, EOS) are left out
  std::string piece(int64_t id) const;                        // one token's text (a byte token: that byte)
  bool is_control(int64_t id) const;  // a control token (BOS, EOS, a chat format's markers): decode leaves it out
  int64_t vocab_size() const { return static_cast<int64_t>(pieces_.size()); }
  int64_t bos() const { return bos_; }
  int64_t eos() const { return eos_; }

 private:
  enum TokenType : int32_t { NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6 };
  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::vector<int32_t> types_;
  std::unordered_map<std::string, int64_t> ids_;
  int64_t byte_ids_[256];  // the <0xXX> token of each byte, or -1
  int64_t bos_ = -1, eos_ = -1, unk_ = 0;
  bool add_space_prefix_ = true;
};

}  // namespace tg::llm
