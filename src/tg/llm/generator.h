#pragma once
// llm: a GGUF model ready to generate text: the file (its weights stay mapped), its tokenizer, the transformer, and
// the generation loop the program, the chat and the server share: sampling, max tokens, end-of-generation tokens, stop
// strings, text streamed in whole UTF-8 characters that never shows the start of a stop string before it is known
// not to be one, and the KV cache of the previous generation reused for the prompt's common prefix (a chat's history).
//
//   llm::Generator g(nn::gguf_load("model.gguf"));
//   llm::Generation r = g.generate(g.tokenizer().encode("Once upon a time", true), {.max_tokens = 32},
//                                  [](std::string_view text) { std::cout << text << std::flush; return true; });
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tg/llm/chat.h"
#include "tg/llm/model.h"
#include "tg/llm/tokenizer.h"
#include "tg/nn/gguf.h"

namespace tg::llm {

struct GenerationParams {
  int64_t max_tokens = 128;
  SamplingParams sampling{};
  std::vector<std::string> stop{};  // the text ends before the first of these it contains
  bool ignore_eos = false;          // end-of-generation tokens don't end it
};

struct Generation {
  std::vector<int64_t> prompt_tokens, tokens;  // tokens: the generated ones, the end-of-generation token included
  std::string text;                            // the generated text, up to a stop string
  std::string finish_reason;  // "stop": an end-of-generation token or a stop string; "length": max tokens or the
                              // context; "cancelled": the callback said so
  int64_t cached_tokens = 0;  // prompt tokens whose keys and values the previous generation left in the cache
  double prefill_s = 0, decode_s = 0;
  double prefill_tok_s() const;  // the prompt tokens computed (not cached) per second
  double decode_tok_s() const;   // the tokens after the first per second
};

class Generator {
 public:
  // max_context 0: the file's context length; activations: the model's (Transformer)
  explicit Generator(nn::GGUFFile file, int64_t max_context = 0, DType activations = dtypes::float32);

  const nn::GGUFFile& file() const { return file_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  Transformer& model() { return model_; }
  int64_t context() const { return model_.config().context; }
  // the tokens that end a generation: EOS, EOT and the end-of-turn tokens of the chat formats
  const std::vector<int64_t>& eog_tokens() const { return eog_; }
  bool is_eog(int64_t id) const;
  void forget_cache() { cached_.clear(); }  // the next prompt is computed whole
  // the chat format to use: `name` (checked), or the file's when it is empty (chat.h)
  std::string chat_format(const std::string& name = "") const;
  // the prompt of the assistant's next turn: the messages in the format, BOS first where the file asks for it, the
  // format's markers read as special tokens
  std::vector<int64_t> chat_prompt(const std::string& format, const std::vector<ChatMessage>& messages) const;

  // up to max_tokens tokens after the prompt (ids; a prompt longer than the context, or empty, is a ValueError).
  // on_text receives the text as it becomes final; when it returns false the generation stops ("cancelled").
  Generation generate(const std::vector<int64_t>& prompt, const GenerationParams& params,
                      const std::function<bool(std::string_view)>& on_text = {});

 private:
  nn::GGUFFile file_;
  Tokenizer tokenizer_;
  Transformer model_;
  std::vector<int64_t> eog_;
  std::vector<int64_t> cached_;  // the tokens whose keys and values the caches hold, from position 0
};

}  // namespace tg::llm
