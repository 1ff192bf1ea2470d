#pragma once
// llm: the tokenizer a GGUF file carries (tokenizer.ggml.*), as llama.cpp's llama-vocab.cpp tokenizes; token ids equal
// llama.cpp's for the same file (tests/llm/test_tokenizer.cpp).
// - SentencePiece (model "llama": Llama 1/2, TinyLlama, Mistral): a space prefix, spaces as U+2581, then the
//   vocabulary's pieces merged greedily by score (highest first, leftmost on a tie), as llm_tokenizer_spm; a character
//   no piece covers falls back to its bytes (<0x..> tokens).
// - byte-level BPE (model "gpt2": GPT-2, Llama 3, Qwen2): the text cut into words by the pre-tokenizer that
//   tokenizer.ggml.pre names (pretokenize.h), each word's bytes written in GPT-2's printable alphabet
//   (bytes_to_unicode), then merged pair by pair, the lowest rank of tokenizer.ggml.merges first (leftmost on a tie),
//   as llm_tokenizer_bpe. Llama 3's ("llama-bpe") takes a word that is a token whole, before any merge.
// Before either, the special tokens (user-defined ones always, control ones when parse_special) are cut out of the
// text and kept whole, longest first (llama.cpp's tokenizer_st_partition).
//
//   llm::Tokenizer tok = llm::Tokenizer::from_gguf(file.kv);
//   std::vector<int64_t> ids = tok.encode("Hello world", /*add_special=*/true);  // BOS first if the file says so
//   std::string text = tok.decode(ids);
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tg/llm/pretokenize.h"
#include "tg/nn/gguf.h"

namespace tg::llm {

class Tokenizer {
 public:
  // from the metadata; a missing key or a model other than those supported is a ValueError naming it
  static Tokenizer from_gguf(const nn::GGUFMetadata& kv);

  // add_special: BOS first and EOS last where the file asks for them (tokenizer.ggml.add_bos_token, default true for
  // SentencePiece and Llama 3's pre-tokenizer, false for other BPE ones; add_eos_token, default false), as llama.cpp's
  // add_special. parse_special: a control (or unknown) token's text, e.g. "<|endoftext|>", is that token, not its
  // characters.
  std::vector<int64_t> encode(std::string_view text, bool add_special = false, bool parse_special = false) const;
  // control tokens (BOS, EOS) are left out; no clean-up of spaces (llama.cpp's clean_spaces turns " ." into "."
  // for some BPE files), so decode(encode(text)) is text
  std::string decode(const std::vector<int64_t>& ids) const;
  // one token's bytes (a byte token: that byte; a byte-level BPE token: its bytes, maybe part of a character)
  std::string piece(int64_t id) const;
  bool is_control(int64_t id) const;  // a control token (BOS, EOS, a chat format's markers): decode leaves it out
  int64_t vocab_size() const { return static_cast<int64_t>(pieces_.size()); }
  int64_t bos() const { return bos_; }
  int64_t eos() const { return eos_; }
  bool add_bos() const { return add_bos_; }

 private:
  enum TokenType : int32_t { NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6 };
  void encode_spm(std::string_view text, bool space_prefix, std::vector<int64_t>& out) const;
  void encode_bpe(std::string_view text, std::vector<int64_t>& out) const;
  int64_t token_of(const std::string& piece) const;  // the token whose text is piece, or -1

  bool bpe_ = false;  // byte-level BPE, else SentencePiece
  PreTokenizer pre_ = PreTokenizer::DEFAULT;
  bool ignore_merges_ = false;                      // a word that is a token is that token (Llama 3)
  std::unordered_map<std::string, int32_t> ranks_;  // BPE: "left right" -> its merge's rank
  std::vector<int64_t> specials_;                   // control, user-defined and unknown tokens, longest first
  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::vector<int32_t> types_;
  std::unordered_map<std::string, int64_t> ids_;
  int64_t byte_ids_[256];  // the <0xXX> token of each byte, or -1
  int64_t bos_ = -1, eos_ = -1, unk_ = 0;
  bool add_space_prefix_ = true, add_bos_ = true, add_eos_ = false;
};

}  // namespace tg::llm
