#include "tg/llm/tokenizer.h"

#include <algorithm>
#include <queue>

#include "tg/helpers/helpers.h"
#include "tg/helpers/utf8.h"

namespace tg::llm {

namespace {

const nn::GGUFValue* find(const nn::GGUFMetadata& kv, const std::string& key) { return nn::gguf_find(kv, key); }

const std::string kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's space

}  // namespace

Tokenizer Tokenizer::from_gguf(const nn::GGUFMetadata& kv) {
  const nn::GGUFValue* model = find(kv, "tokenizer.ggml.model");
  TG_CHECK_AS(ValueError, model != nullptr, "GGUF metadata has no 'tokenizer.ggml.model'");
  TG_CHECK_AS(ValueError, model->as_string() == "llama", "tokenizer model ", py_str_repr(model->as_string()),
              " is not supported yet (these are: 'llama', SentencePiece)");
  const nn::GGUFValue* tokens = find(kv, "tokenizer.ggml.tokens");
  TG_CHECK_AS(ValueError, tokens != nullptr, "GGUF metadata has no 'tokenizer.ggml.tokens'");
  Tokenizer t;
  for (const nn::GGUFValue& v : tokens->as_array()) t.pieces_.push_back(v.as_string());
  const size_t n = t.pieces_.size();
  TG_CHECK_AS(ValueError, n > 0, "'tokenizer.ggml.tokens' is empty");
  t.scores_.assign(n, 0.0f);
  t.types_.assign(n, NORMAL);
  if (const nn::GGUFValue* s = find(kv, "tokenizer.ggml.scores")) {
    TG_CHECK_AS(ValueError, s->as_array().size() == n, "'tokenizer.ggml.scores' has ", s->as_array().size(),
                " entries for ", n, " tokens");
    for (size_t i = 0; i < n; i++) t.scores_[i] = static_cast<float>(s->as_array()[i].as_double());
  }
  if (const nn::GGUFValue* s = find(kv, "tokenizer.ggml.token_type")) {
    TG_CHECK_AS(ValueError, s->as_array().size() == n, "'tokenizer.ggml.token_type' has ", s->as_array().size(),
                " entries for ", n, " tokens");
    for (size_t i = 0; i < n; i++) t.types_[i] = static_cast<int32_t>(s->as_array()[i].as_int());
  }
  for (size_t i = 0; i < n; i++) t.ids_.emplace(t.pieces_[i], static_cast<int64_t>(i));  // the first of duplicates
  std::fill(std::begin(t.byte_ids_), std::end(t.byte_ids_), -1);
  for (int b = 0; b < 256; b++) {
    auto it = t.ids_.find(cat("<0x", "0123456789ABCDEF"[b >> 4], "0123456789ABCDEF"[b & 15], ">"));
    if (it != t.ids_.end()) t.byte_ids_[b] = it->second;
  }
  auto id = [&](const char* key, int64_t dflt) {
    const nn::GGUFValue* v = find(kv, key);
    int64_t x = v != nullptr ? v->as_int() : dflt;
    TG_CHECK_AS(ValueError, x >= -1 && x < static_cast<int64_t>(n), py_str_repr(key), " is ", x, ", outside the ", n,
                " tokens");
    return x;
  };
  t.bos_ = id("tokenizer.ggml.bos_token_id", 1), t.eos_ = id("tokenizer.ggml.eos_token_id", 2);
  t.unk_ = id("tokenizer.ggml.unknown_token_id", 0);
  if (const nn::GGUFValue* v = find(kv, "tokenizer.ggml.add_space_prefix")) t.add_space_prefix_ = v->as_bool();
  return t;
}

std::vector<int64_t> Tokenizer::encode(std::string_view text, bool add_bos) const {
  std::vector<int64_t> out;
  if (add_bos && bos_ >= 0) out.push_back(bos_);
  if (text.empty()) return out;
  std::string s = add_space_prefix_ ? " " : "";
  s += text;
  std::string esc;  // spaces as U+2581
  for (char c : s) esc += c == ' ' ? kSpace : std::string(1, c);
  // the characters as a linked list of symbols, merged pair by pair, the best-scoring pair first
  struct Sym {
    size_t off, len;
    int64_t prev, next;
  };
  std::vector<Sym> sym;
  for (size_t off = 0; off < esc.size();) {
    size_t len = std::min(utf8_char_len(static_cast<unsigned char>(esc[off])), esc.size() - off);
    sym.push_back({off, len, static_cast<int64_t>(sym.size()) - 1, static_cast<int64_t>(sym.size()) + 1});
    off += len;
  }
  sym.back().next = -1;
  struct Bigram {
    int64_t left, right;
    float score;
    size_t size;
  };
  auto worse = [](const Bigram& a, const Bigram& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(worse)> queue(worse);
  auto try_add = [&](int64_t l, int64_t r) {
    if (l < 0 || r < 0) return;
    auto it = ids_.find(esc.substr(sym[l].off, sym[l].len + sym[r].len));
    if (it == ids_.end()) return;
    queue.push({l, r, scores_[static_cast<size_t>(it->second)], sym[l].len + sym[r].len});
  };
  for (size_t i = 1; i < sym.size(); i++) try_add(static_cast<int64_t>(i) - 1, static_cast<int64_t>(i));
  while (!queue.empty()) {
    Bigram b = queue.top();
    queue.pop();
    Sym &l = sym[static_cast<size_t>(b.left)], &r = sym[static_cast<size_t>(b.right)];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.size) continue;  // merged away since it was queued
    l.len += r.len, r.len = 0, l.next = r.next;
    if (r.next >= 0) sym[static_cast<size_t>(r.next)].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int64_t i = 0; i >= 0; i = sym[static_cast<size_t>(i)].next) {
    std::string piece = esc.substr(sym[static_cast<size_t>(i)].off, sym[static_cast<size_t>(i)].len);
    if (auto it = ids_.find(piece); it != ids_.end()) {
      out.push_back(it->second);
      continue;
    }
    for (unsigned char c : piece) out.push_back(byte_ids_[c] >= 0 ? byte_ids_[c] : unk_);  // byte fallback
  }
  return out;
}

std::string Tokenizer::piece(int64_t id) const {
  TG_CHECK_AS(ValueError, id >= 0 && id < vocab_size(), "token ", id, " is outside the ", vocab_size(), " tokens");
  const std::string& p = pieces_[static_cast<size_t>(id)];
  if (types_[static_cast<size_t>(id)] == BYTE && p.size() == 6 && p.starts_with("<0x"))
    return std::string(1, static_cast<char>(std::stoi(p.substr(3, 2), nullptr, 16)));
  std::string out;
  for (size_t i = 0; i < p.size();)
    if (p.compare(i, kSpace.size(), kSpace) == 0) {
      out += ' ', i += kSpace.size();
    } else {
      out += p[i++];
    }
  return out;
}

bool Tokenizer::is_control(int64_t id) const {
  return id >= 0 && id < vocab_size() && types_[static_cast<size_t>(id)] == CONTROL;
}

std::string Tokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  bool first = true;
  for (int64_t id : ids) {
    if (is_control(id)) continue;
    std::string p = piece(id);
    if (first && add_space_prefix_ && p.starts_with(' ')) p.erase(0, 1);  // the prefix encode added
    out += p, first = false;
  }
  return out;
}

}  // namespace tg::llm
