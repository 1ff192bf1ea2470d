// A character-level GPT (examples/gpt.h, GPT-2's architecture) trained on text: by default Debian's fortunes
// (/usr/share/games/fortunes, ~2.6 million characters), split 90/10 into training and validation text. AdamW with a
// warm-up and a cosine learning rate, dropout, the step under TinyJit; a validation loss every EVAL_EVERY steps, a
// checkpoint (safetensors: the model, the optimizer's state and the random numbers' counter) and a sample of text at
// the end.
//
//   ./build/examples/train_gpt                                  # 6 layers, 384 wide, 6 heads, context 256, batch 16
//   STEPS=200 CKPT=/tmp/gpt.safetensors ./build/examples/train_gpt
//   STEPS=400 STOP_AFTER=200 CKPT=/tmp/gpt.safetensors ./build/examples/train_gpt  # the first half of 400 steps
//   STEPS=400 RESUME=/tmp/gpt.safetensors ./build/examples/train_gpt   # goes on from the checkpoint's step
//
// Resuming gives the same losses as a run that never stopped: the batch of step i is drawn from (SEED, i) alone, and
// the checkpoint holds everything else a step reads. The environment variables are listed in the README.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gpt.h"
#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/helpers/utf8.h"
#include "tg/nn/state.h"
#include "tg/tensor/jit.h"
#include "tg/tensor/tensor.h"

using namespace tg;
namespace fs = std::filesystem;

namespace {

// the text of a file, or of every file in a folder (sorted by name; fortune's .dat indexes and links left out), as
// code points; the vocabulary is the characters that occur, sorted
struct Corpus {
  std::vector<uint32_t> vocab;
  std::vector<int32_t> tokens;
  std::string decode(const std::vector<int32_t>& toks) const {
    std::string out;
    for (int32_t t : toks) append_utf8(out, vocab.at(static_cast<size_t>(t)));
    return out;
  }
};

Corpus load_corpus(const std::string& path) {
  TG_CHECK(fs::exists(path), "corpus ", path, " doesn't exist");
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::directory_iterator(path))
      if (e.is_regular_file() && !e.is_symlink() && e.path().extension() != ".dat") files.push_back(e.path());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  std::vector<uint32_t> cps;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    TG_CHECK(in.good(), "can't read ", f.string());
    std::string text((std::istreambuf_iterator<char>(in)), {});
    for (size_t i = 0; i < text.size();) {
      size_t at = i;
      int32_t cp = decode_utf8(text, i);
      if (cp < 0) {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(text[at])));
        throw Error(cat(f.string(), " is not UTF-8 text: byte ", at, " (", hex, ") starts no character"));
      }
      cps.push_back(static_cast<uint32_t>(cp));
    }
  }
  TG_CHECK(!cps.empty(), "corpus ", path, " is empty (", files.size(), files.size() == 1 ? " file)" : " files)");
  Corpus c;
  c.vocab = cps;
  std::sort(c.vocab.begin(), c.vocab.end());
  c.vocab.erase(std::unique(c.vocab.begin(), c.vocab.end()), c.vocab.end());
  std::map<uint32_t, int32_t> index;
  for (size_t i = 0; i < c.vocab.size(); i++) index[c.vocab[i]] = static_cast<int32_t>(i);
  c.tokens.reserve(cps.size());
  for (uint32_t cp : cps) c.tokens.push_back(index[cp]);
  return c;
}

double getenv_double(const char* name, double dflt) {
  std::string s = getenv_str(name, "");
  if (s.empty()) return dflt;
  try {
    return std::stod(s);
  } catch (const std::exception&) {
    throw Error(cat(name, "=", s, " is not a number"));
  }
}

// a batch of `bs` windows of T+1 tokens at the given offsets: inputs and targets shifted by one
std::pair<Tensor, Tensor> batch_at(const std::vector<int32_t>& toks, const std::vector<size_t>& offsets, int64_t T) {
  std::vector<int32_t> x, y;
  for (size_t off : offsets) {
    x.insert(x.end(), toks.begin() + static_cast<ptrdiff_t>(off), toks.begin() + static_cast<ptrdiff_t>(off) + T);
    y.insert(y.end(), toks.begin() + static_cast<ptrdiff_t>(off) + 1,
             toks.begin() + static_cast<ptrdiff_t>(off) + T + 1);
  }
  int64_t bs = static_cast<int64_t>(offsets.size());
  return {Tensor(x, {bs, T}), Tensor(y, {bs, T})};
}

std::string config_string(const gpt::GPTConfig& c) {
  return cat("vocab_size=", c.vocab_size, " block_size=", c.block_size, " n_layer=", c.n_layer, " n_head=", c.n_head,
             " n_embd=", c.n_embd);
}

}  // namespace

int main() {
  try {
    std::string corpus_path = getenv_str("CORPUS", "/usr/share/games/fortunes");
    Corpus corpus = load_corpus(corpus_path);
    gpt::GPTConfig cfg{.vocab_size = static_cast<int64_t>(corpus.vocab.size()),
                       .block_size = getenv("CTX", 256),
                       .n_layer = getenv("N_LAYER", 6),
                       .n_head = getenv("N_HEAD", 6),
                       .n_embd = getenv("N_EMBD", 384),
                       .dropout = getenv_double("DROPOUT", 0.1)};
    int64_t bs = getenv("BS", 16), steps = getenv("STEPS", 2000), warmup = getenv("WARMUP", 100);
    int64_t eval_every = getenv("EVAL_EVERY", 100), eval_batches = getenv("EVAL_BATCHES", 8);
    int64_t sample_len = getenv("SAMPLE", 300), seed = getenv("SEED", 1337);
    int64_t stop_after = std::min(steps, static_cast<int64_t>(getenv("STOP_AFTER", steps)));  // a run in parts
    double lr = getenv_double("LR", 1e-3), wd = getenv_double("WD", 0.1), target = getenv_double("TARGET_LOSS", 0);
    std::string ckpt = getenv_str("CKPT", ""), resume = getenv_str("RESUME", "");
    TG_CHECK(cfg.n_embd % cfg.n_head == 0, "N_EMBD=", cfg.n_embd, " is not a multiple of N_HEAD=", cfg.n_head);
    TG_CHECK(bs > 0 && cfg.block_size > 0 && eval_every > 0, "BS, CTX and EVAL_EVERY must be positive");
    int64_t T = cfg.block_size;
    size_t n_train = corpus.tokens.size() * 9 / 10;
    std::vector<int32_t> train(corpus.tokens.begin(), corpus.tokens.begin() + static_cast<ptrdiff_t>(n_train));
    std::vector<int32_t> val(corpus.tokens.begin() + static_cast<ptrdiff_t>(n_train), corpus.tokens.end());
    TG_CHECK(static_cast<int64_t>(val.size()) > T + 1, "corpus ", corpus_path, " has ", corpus.tokens.size(),
             " characters: too few for a validation split of windows of CTX=", T);
    std::string vocab_text;  // the characters, in order (a checkpoint names the text it was trained on)
    for (uint32_t cp : corpus.vocab) append_utf8(vocab_text, cp);

    Tensor::manual_seed(static_cast<uint64_t>(seed));
    gpt::GPT model(cfg);
    gpt::GPTOptimizer opt(model, lr, wd);
    std::printf("corpus %s: %zu characters (%zu train, %zu val), %lld distinct\n", corpus_path.c_str(),
                corpus.tokens.size(), train.size(), val.size(), static_cast<long long>(cfg.vocab_size));
    std::printf("model: %s, %.2fM parameters; batch %lld x %lld tokens, %lld steps\n", config_string(cfg).c_str(),
                static_cast<double>(model.num_params()) / 1e6, static_cast<long long>(bs), static_cast<long long>(T),
                static_cast<long long>(steps));

    // everything a step reads that isn't its batch: the params, the optimizer's state, the random numbers' counter
    auto training_state = [&] {
      nn::StateDict sd = nn::state::get_state_dict(model);
      for (auto& kv : opt.state_dict()) sd.insert_or_assign(kv.first, kv.second);
      for (const auto& [dev, counter] : Tensor::device_rng_counters())
        sd.insert_or_assign("rng.counter." + dev, counter);
      return sd;
    };
    int64_t start = 0;
    if (!resume.empty()) {
      nn::state::SafetensorsHeader h = nn::state::safe_load_metadata(resume);
      auto meta = [&](const char* key) -> std::string {
        for (const auto& [k, v] : h.metadata)
          if (k == key && v.is_string()) return v.as_string();
        throw Error(cat(resume, " is not a train_gpt checkpoint: no \"", key, "\" in its metadata"));
      };
      TG_CHECK(meta("config") == config_string(cfg), "checkpoint ", resume, " is of another model: ", meta("config"),
               "; this run's: ", config_string(cfg));
      TG_CHECK(meta("vocab") == vocab_text, "checkpoint ", resume, " was trained on text with other characters than ",
               corpus_path);
      start = std::stoll(meta("step"));
      nn::StateDict saved = nn::state::safe_load(resume);
      nn::state::load_state_dict_into(training_state(), saved, {});
      std::printf("resumed from %s at step %lld\n", resume.c_str(), static_cast<long long>(start));
    }
    auto save = [&](int64_t step) {
      if (ckpt.empty()) return;
      std::string tmp = ckpt + ".tmp";
      nn::state::safe_save(training_state(), tmp,
                           {{"step", std::to_string(step)}, {"config", config_string(cfg)}, {"vocab", vocab_text}});
      fs::rename(tmp, ckpt);
    };

    TinyJit train_step([&](Tensor x, Tensor y) { return gpt::train_step_body(model, opt, x, y); });
    TinyJit eval_step([&](Tensor x, Tensor y) { return model(x).sparse_categorical_crossentropy(y); });
    // the validation loss: the mean over eval_batches batches at fixed, evenly spaced places in the validation text
    auto val_loss = [&] {
      double sum = 0;
      size_t span = val.size() - static_cast<size_t>(T) - 1, n = static_cast<size_t>(eval_batches * bs);
      for (int64_t b = 0; b < eval_batches; b++) {
        std::vector<size_t> offs;
        for (int64_t i = 0; i < bs; i++) offs.push_back(span * static_cast<size_t>(b * bs + i) / n);
        auto [x, y] = batch_at(val, offs, T);
        sum += eval_step(x, y).item<float>();
      }
      return sum / static_cast<double>(eval_batches);
    };

    double last_val = NAN;
    auto t0 = std::chrono::steady_clock::now();
    int64_t tokens_done = 0;
    for (int64_t step = start; step < stop_after; step++) {
      std::seed_seq ss{static_cast<uint64_t>(seed), static_cast<uint64_t>(step)};
      std::mt19937_64 rng(ss);
      std::uniform_int_distribution<size_t> pick(0, train.size() - static_cast<size_t>(T) - 2);
      std::vector<size_t> offs;
      for (int64_t i = 0; i < bs; i++) offs.push_back(pick(rng));
      auto [x, y] = batch_at(train, offs, T);
      double step_lr = gpt::cosine_lr(step, steps, warmup, lr);
      opt.set_lr(step_lr);
      auto st = std::chrono::steady_clock::now();
      float loss = train_step(x, y).item<float>();
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - st).count();
      tokens_done += bs * T;
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("step %5lld  loss %.6f  lr %.3e  %7.1f ms  %6.0f tok/s\n", static_cast<long long>(step + 1),
                  static_cast<double>(loss), step_lr, ms, static_cast<double>(tokens_done) / secs);
      std::fflush(stdout);
      if ((step + 1) % eval_every == 0 || step + 1 == stop_after) {
        last_val = val_loss();
        std::printf("step %5lld  val loss %.6f\n", static_cast<long long>(step + 1), last_val);
        save(step + 1);
      }
    }
    if (start >= stop_after) last_val = val_loss();

    if (sample_len > 0) {  // text from the model: a window of the last T characters, the next one drawn from the
                           // softmax of its logits at the window's last position (one shape: one compiled forward)
      TinyJit forward([&](Tensor x) { return model(x).softmax(-1); });
      std::mt19937_64 rng(static_cast<uint64_t>(seed));
      std::vector<int32_t> text{static_cast<int32_t>(
          std::lower_bound(corpus.vocab.begin(), corpus.vocab.end(), uint32_t('\n')) - corpus.vocab.begin())};
      if (text[0] >= cfg.vocab_size) text[0] = 0;
      for (int64_t i = 0; i < sample_len; i++) {
        size_t n = std::min<size_t>(text.size(), static_cast<size_t>(T));
        std::vector<int32_t> window(static_cast<size_t>(T), 0);
        std::copy(text.end() - static_cast<ptrdiff_t>(n), text.end(), window.begin());
        std::vector<float> probs = forward(Tensor(window, {1, T})).tolist<float>();
        const float* p = probs.data() + (n - 1) * static_cast<size_t>(cfg.vocab_size);
        std::discrete_distribution<int32_t> next(p, p + cfg.vocab_size);
        text.push_back(next(rng));
      }
      std::printf("--- sample ---\n%s\n--- end of sample ---\n", corpus.decode(text).c_str());
    }
    std::printf("final val loss %.6f\n", last_val);
    if (target > 0 && !(last_val <= target)) {
      std::fprintf(stderr, "train_gpt: val loss %.4f is above TARGET_LOSS=%.4f\n", last_val, target);
      return 1;
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "train_gpt: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_gpt: %s\n", e.what());
    return 2;
  }
  return 0;
}
