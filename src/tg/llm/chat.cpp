#include "tg/llm/chat.h"

#include <algorithm>

#include "tg/helpers/helpers.h"

namespace tg::llm {

namespace {

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// formats without a system role: the system text goes before the first user message
std::vector<ChatMessage> fold_system(const std::vector<ChatMessage>& messages, const std::string& sep) {
  std::vector<ChatMessage> out;
  std::string system;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      system += (system.empty() ? "" : sep) + m.content;
    } else if (m.role == "user" && !system.empty()) {
      out.push_back({m.role, system + sep + m.content});
      system.clear();
    } else {
      out.push_back(m);
    }
  }
  if (!system.empty()) out.push_back({"user", system});
  return out;
}

}  // namespace

const std::vector<std::string>& chat_templates() {
  static const std::vector<std::string> names{"chatml", "llama3", "llama2", "mistral", "zephyr", "phi3", "gemma"};
  return names;
}

std::string chat_template_of(const nn::GGUFMetadata& kv) {
  const nn::GGUFValue* v = nn::gguf_find(kv, "tokenizer.chat_template");
  if (v == nullptr || v->type != nn::GGUFValue::Type::STRING) return "chatml";
  const std::string& t = v->as_string();
  if (contains(t, "<|im_start|>")) return "chatml";
  if (contains(t, "<|start_header_id|>") && contains(t, "<|end_header_id|>")) return "llama3";
  if (contains(t, "[INST]")) return contains(t, "<<SYS>>") ? "llama2" : "mistral";
  if (contains(t, "<|assistant|>") && contains(t, "<|end|>")) return "phi3";
  if (contains(t, "<|user|>")) return "zephyr";
  if (contains(t, "<start_of_turn>")) return "gemma";
  return "chatml";
}

std::string apply_chat_template(const std::string& format, const std::vector<ChatMessage>& messages,
                                const std::string& bos, const std::string& eos, bool add_generation_prompt) {
  const std::vector<std::string>& names = chat_templates();
  TG_CHECK_AS(ValueError, std::find(names.begin(), names.end(), format) != names.end(), "chat template ",
              py_str_repr(format), " is not known (these are: ", join(names, ", "), ")");
  for (const ChatMessage& m : messages)
    TG_CHECK_AS(ValueError, m.role == "system" || m.role == "user" || m.role == "assistant", "chat role ",
                py_str_repr(m.role), " is not one of 'system', 'user', 'assistant'");
  std::string out;
  if (format == "chatml") {
    for (const ChatMessage& m : messages) out += cat("<|im_start|>", m.role, "\n", m.content, "<|im_end|>\n");
    if (add_generation_prompt) out += "<|im_start|>assistant\n";
  } else if (format == "llama3") {
    for (const ChatMessage& m : messages)
      out += cat("<|start_header_id|>", m.role, "<|end_header_id|>\n\n", trim(m.content), "<|eot_id|>");
    if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  } else if (format == "llama2" || format == "mistral") {
    // [INST] user [/INST] answer</s><s>[INST] ...: the first <s> is the tokenizer's BOS
    const bool llama2 = format == "llama2";
    std::vector<ChatMessage> ms = messages;
    if (llama2 && !ms.empty() && ms[0].role == "system") {
      std::string sys = cat("<<SYS>>\n", trim(ms[0].content), "\n<</SYS>>\n\n");
      ms.erase(ms.begin());
      if (!ms.empty() && ms[0].role == "user")
        ms[0].content = sys + trim(ms[0].content);
      else
        ms.insert(ms.begin(), {"user", sys});
    }
    ms = fold_system(ms, "\n\n");
    bool first = true;
    for (const ChatMessage& m : ms) {
      if (m.role == "user") {
        out += cat(first ? "" : bos, "[INST] ", llama2 ? trim(m.content) : m.content, " [/INST]");
      } else {
        out += cat(llama2 ? " " : "", llama2 ? trim(m.content) : m.content, llama2 ? " " : "", eos);
      }
      first = false;
    }
  } else if (format == "zephyr") {
    for (const ChatMessage& m : messages) out += cat("<|", m.role, "|>\n", m.content, eos, "\n");
    if (add_generation_prompt) out += "<|assistant|>\n";
  } else if (format == "phi3") {
    for (const ChatMessage& m : messages) out += cat("<|", m.role, "|>\n", m.content, "<|end|>\n");
    if (add_generation_prompt) out += "<|assistant|>\n";
  } else {  // gemma: the assistant is "model", no system role
    for (const ChatMessage& m : fold_system(messages, "\n\n"))
      out += cat("<start_of_turn>", m.role == "assistant" ? "model" : m.role, "\n", trim(m.content), "<end_of_turn>\n");
    if (add_generation_prompt) out += "<start_of_turn>model\n";
  }
  return out;
}

}  // namespace tg::llm
