#pragma once
// llm: chat formats. A GGUF carries its chat format as a Jinja template (tokenizer.chat_template); rather than a Jinja
// interpreter, the format is recognised by its markers (as llama.cpp's llm_chat_detect_template does) and written by
// code: chatml (Qwen, SmolLM, and the default without a template), llama3, llama2, mistral, zephyr (TinyLlama's chat
// models), phi3 and gemma. The result is text with the format's special tokens spelled out: encode it with special
// tokens parsed.
//
//   std::string t = llm::chat_template_of(file.kv);           // "chatml", "llama3", ...
//   std::string prompt = llm::apply_chat_template(t, {{"system", "Be brief."}, {"user", "Hi"}}, bos, eos);
#include <string>
#include <vector>

#include "tg/nn/gguf.h"

namespace tg::llm {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// the formats apply_chat_template writes
const std::vector<std::string>& chat_templates();
// the format of a file's tokenizer.chat_template ("chatml" when it has none or one not recognised)
std::string chat_template_of(const nn::GGUFMetadata& kv);
// the messages in the format, ending with the assistant's turn opened (add_generation_prompt) so that the model
// writes the reply; bos and eos: the tokenizer's texts of its BOS and EOS tokens. An unknown format or role is a
// ValueError naming it.
std::string apply_chat_template(const std::string& format, const std::vector<ChatMessage>& messages,
                                const std::string& bos, const std::string& eos, bool add_generation_prompt = true);

}  // namespace tg::llm
