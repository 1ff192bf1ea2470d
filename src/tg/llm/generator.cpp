#include "tg/llm/generator.h"

#include <algorithm>
#include <chrono>

#include "tg/helpers/helpers.h"
#include "tg/helpers/utf8.h"

namespace tg::llm {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// the end-of-turn markers of the chat formats (chat.h), as control tokens of the vocabulary
const char* const kEndOfTurn[] = {"<|eot_id|>",    "<|im_end|>",      "<|end|>",    "<end_of_turn>",
                                  "<|endoftext|>", "<|end_of_text|>", "<|eom_id|>", "</s>"};

// how many bytes at the end of `text` are the start of some stop string (held back until they are known not to be)
size_t stop_prefix_at_end(std::string_view text, const std::vector<std::string>& stop) {
  size_t keep = 0;
  for (const std::string& s : stop)
    for (size_t n = std::min(s.size() - 1, text.size()); n > keep; n--)
      if (text.substr(text.size() - n) == std::string_view(s).substr(0, n)) {
        keep = n;
        break;
      }
  return keep;
}

}  // namespace

double Generation::prefill_tok_s() const {
  const auto n = static_cast<double>(static_cast<int64_t>(prompt_tokens.size()) - cached_tokens);
  return prefill_s > 0 ? n / prefill_s : 0.0;
}
double Generation::decode_tok_s() const {
  return decode_s > 0 && tokens.size() > 1 ? static_cast<double>(tokens.size() - 1) / decode_s : 0.0;
}

Generator::Generator(nn::GGUFFile file, int64_t max_context, DType activations)
    : file_(std::move(file)), tokenizer_(Tokenizer::from_gguf(file_.kv)), model_(file_, max_context, activations) {
  eog_.push_back(tokenizer_.eos());
  if (const nn::GGUFValue* v = nn::gguf_find(file_.kv, "tokenizer.ggml.eot_token_id")) eog_.push_back(v->as_int());
  for (int64_t id = 0; id < tokenizer_.vocab_size(); id++)
    if (tokenizer_.is_control(id) &&
        std::find(std::begin(kEndOfTurn), std::end(kEndOfTurn), tokenizer_.piece(id)) != std::end(kEndOfTurn))
      eog_.push_back(id);
  std::erase_if(eog_, [&](int64_t id) { return id < 0 || id >= tokenizer_.vocab_size(); });
  std::sort(eog_.begin(), eog_.end());
  eog_.erase(std::unique(eog_.begin(), eog_.end()), eog_.end());
}

bool Generator::is_eog(int64_t id) const { return std::binary_search(eog_.begin(), eog_.end(), id); }

std::string Generator::chat_format(const std::string& name) const {
  std::string format = name.empty() ? chat_template_of(file_.kv) : name;
  apply_chat_template(format, {}, "", "");  // an unknown format is a ValueError now, not at the first message
  return format;
}

std::vector<int64_t> Generator::chat_prompt(const std::string& format, const std::vector<ChatMessage>& messages) const {
  auto text_of = [&](int64_t id) { return id >= 0 ? tokenizer_.piece(id) : std::string(); };
  return tokenizer_.encode(apply_chat_template(format, messages, text_of(tokenizer_.bos()), text_of(tokenizer_.eos())),
                           true, /*parse_special=*/true);
}

Generation Generator::generate(const std::vector<int64_t>& prompt, const GenerationParams& params,
                               const std::function<bool(std::string_view)>& on_text) {
  const auto P = static_cast<int64_t>(prompt.size());
  TG_CHECK_AS(ValueError, P > 0, "the prompt is empty (no tokens)");
  TG_CHECK_AS(ValueError, P <= context(), "the prompt of ", P, " tokens is longer than the context of ", context(),
              " tokens");
  TG_CHECK_AS(ValueError, params.max_tokens >= 0, "max_tokens is ", params.max_tokens);
  for (const std::string& s : params.stop) TG_CHECK_AS(ValueError, !s.empty(), "a stop string is empty");
  Generation g;
  g.prompt_tokens = prompt;
  g.finish_reason = "length";
  if (params.max_tokens == 0) return g;
  Sampler sampler(params.sampling);

  // the prompt: what the cache already holds of it is kept (at least its last token is computed again, for logits)
  auto common = static_cast<int64_t>(std::mismatch(cached_.begin(), cached_.end(), prompt.begin(), prompt.end()).first -
                                     cached_.begin());
  g.cached_tokens = std::min(common, P - 1);
  cached_.resize(static_cast<size_t>(g.cached_tokens));
  auto t0 = Clock::now();
  std::vector<int64_t> rest(prompt.begin() + g.cached_tokens, prompt.end());
  std::vector<float> logits = model_.forward(rest, g.cached_tokens).tolist<float>();
  cached_ = prompt;
  g.prefill_s = seconds_since(t0);

  std::vector<int64_t> history = prompt;
  size_t sent = 0;  // bytes of g.text given to on_text
  auto t1 = Clock::now();
  for (;;) {
    int64_t next = sampler.sample(logits, history);
    g.tokens.push_back(next), history.push_back(next);
    const bool eog = !params.ignore_eos && is_eog(next);
    if (!eog && !tokenizer_.is_control(next)) g.text += tokenizer_.piece(next);
    // a stop string ends the text where it starts; otherwise what can't be the start of one goes out
    size_t end = g.text.size();
    bool stopped = eog;
    for (const std::string& s : params.stop) {
      size_t from = sent > s.size() ? sent - s.size() : 0;
      if (size_t at = g.text.find(s, from); at != std::string::npos && at < end) end = at, stopped = true;
    }
    if (stopped) {
      g.text.resize(end);
      g.finish_reason = "stop";
    } else {
      end = utf8_whole_prefix(g.text);
      end -= stop_prefix_at_end(std::string_view(g.text).substr(0, end), params.stop);
      end = utf8_whole_prefix(std::string_view(g.text).substr(0, end));  // a stop string may start inside one
    }
    const bool last = stopped || static_cast<int64_t>(g.tokens.size()) >= params.max_tokens ||
                      static_cast<int64_t>(history.size()) >= context();
    if (last && !stopped) end = g.text.size();  // the held-back bytes are final now
    if (on_text && end > sent) {
      bool go_on = on_text(std::string_view(g.text).substr(sent, end - sent));
      sent = end;
      if (!go_on) {
        g.finish_reason = "cancelled";
        break;
      }
    }
    sent = std::max(sent, end);
    if (last) break;
    logits = model_.forward({next}, static_cast<int64_t>(history.size()) - 1).tolist<float>();
    cached_.push_back(next);
  }
  g.decode_s = seconds_since(t1);
  return g;
}

}  // namespace tg::llm
