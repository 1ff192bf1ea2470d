// The generation loop (llm/generator.h) and the chat formats (llm/chat.h): stop strings end the text where they
// start and are never streamed, streamed text never splits a UTF-8 character and adds up to the result, max tokens and
// the context end a generation ("length"), a callback that says no cancels it, the KV cache of the previous generation
// serves the common prefix of the next prompt with the logits of a fresh run, and each chat format writes its
// family's text.
#include <gtest/gtest.h>
#include <unistd.h>

#include "error_of.h"
#include "llm_util.h"
#include "tg/helpers/utf8.h"
#include "tg/llm/chat.h"
#include "tg/llm/generator.h"

using namespace tg;
using tg::test::error_of;

namespace {

struct Gen : ::testing::Test {
  void SetUp() override {
    path = (std::filesystem::temp_directory_path() /
            cat("tg_gen_", ::getpid(), "_", ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".gguf"))
               .string();
    tg::test::write_tiny_llama(path, uint32_t(nn::GGMLType::F32));
  }
  void TearDown() override { std::filesystem::remove(path); }
  std::string path;
};

const llm::SamplingParams kSampled{.temperature = 1.0, .seed = 7};

}  // namespace

TEST_F(Gen, StreamedTextAddsUpAndStopStringsEndIt) {
  llm::Generator g(nn::gguf_load(path));
  std::vector<int64_t> prompt = g.tokenizer().encode("hello", true);
  llm::Generation full = g.generate(prompt, {.max_tokens = 24, .sampling = kSampled, .ignore_eos = true});
  EXPECT_EQ(full.finish_reason, "length");
  ASSERT_EQ(full.tokens.size(), 24U);
  // a stop string from the middle of that text: the same tokens up to it, the text cut where it starts
  ASSERT_GT(full.text.size(), 12U);
  std::string stop = full.text.substr(full.text.size() / 2, 3);
  std::string streamed;
  std::vector<std::string> pieces;
  llm::Generation r =
      g.generate(prompt, {.max_tokens = 24, .sampling = kSampled, .stop = {"\x01never", stop}, .ignore_eos = true},
                 [&](std::string_view t) {
                   pieces.emplace_back(t);
                   streamed += t;
                   return true;
                 });
  // no piece but the last (which flushes what is left) ends inside a character
  std::string so_far;
  for (size_t i = 0; i + 1 < pieces.size(); i++) {
    so_far += pieces[i];
    EXPECT_EQ(utf8_whole_prefix(so_far), so_far.size()) << i;
  }
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_EQ(r.text, full.text.substr(0, full.text.find(stop)));
  EXPECT_EQ(streamed, r.text);
  EXPECT_EQ(r.tokens, std::vector<int64_t>(full.tokens.begin(), full.tokens.begin() + r.tokens.size()));
  // without stops the streamed text is the whole text
  streamed.clear();
  r = g.generate(prompt, {.max_tokens = 24, .sampling = kSampled, .ignore_eos = true}, [&](std::string_view t) {
    streamed += t;
    return true;
  });
  EXPECT_EQ(streamed, full.text);
  EXPECT_EQ(r.tokens, full.tokens);
}

TEST_F(Gen, CancelAndLengthAndBadInput) {
  llm::Generator g(nn::gguf_load(path), 16);
  std::vector<int64_t> prompt = g.tokenizer().encode("hello", true);
  int calls = 0;
  llm::Generation r = g.generate(prompt, {.max_tokens = 10, .sampling = kSampled, .ignore_eos = true},
                                 [&](std::string_view) { return ++calls < 2; });
  EXPECT_EQ(r.finish_reason, "cancelled");
  EXPECT_EQ(calls, 2);
  // the context (16) ends it before max tokens
  r = g.generate(prompt, {.max_tokens = 100, .sampling = kSampled, .ignore_eos = true});
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_EQ(r.prompt_tokens.size() + r.tokens.size(), 16U);
  EXPECT_EQ(g.generate(prompt, {.max_tokens = 0}).tokens.size(), 0U);
  std::vector<int64_t> long_prompt(17, 5);
  EXPECT_NE(error_of([&] { g.generate(long_prompt, {}); }).find("17 tokens is longer than the context of 16"),
            std::string::npos);
  EXPECT_THROW(g.generate({}, {}), ValueError);
  EXPECT_THROW(g.generate(prompt, {.stop = {""}}), ValueError);
}

TEST_F(Gen, TheCachedPrefixGivesTheTokensOfAFreshRun) {
  llm::Generator warm(nn::gguf_load(path));
  std::vector<int64_t> first = warm.tokenizer().encode("the first turn", true);
  llm::Generation a = warm.generate(first, {.max_tokens = 6, .ignore_eos = true});
  // the next prompt extends the first and its reply: all of that is in the cache already
  std::vector<int64_t> next = first;
  next.insert(next.end(), a.tokens.begin(), a.tokens.end());
  for (int64_t t : warm.tokenizer().encode(" and more", false)) next.push_back(t);
  llm::Generation b = warm.generate(next, {.max_tokens = 6, .ignore_eos = true});
  EXPECT_EQ(b.cached_tokens, static_cast<int64_t>(first.size() + a.tokens.size() - 1));
  llm::Generator cold(nn::gguf_load(path));
  llm::Generation c = cold.generate(next, {.max_tokens = 6, .ignore_eos = true});
  EXPECT_EQ(c.cached_tokens, 0);
  EXPECT_EQ(b.tokens, c.tokens);
  // a prompt that differs early keeps only the common part
  llm::Generation d = warm.generate(first, {.max_tokens = 2, .ignore_eos = true});
  EXPECT_EQ(d.cached_tokens, static_cast<int64_t>(first.size() - 1));
  EXPECT_EQ(d.tokens, std::vector<int64_t>(a.tokens.begin(), a.tokens.begin() + 2));
}

TEST_F(Gen, EndOfGenerationTokens) {
  llm::Generator g(nn::gguf_load(path));
  EXPECT_TRUE(g.is_eog(g.tokenizer().eos()));
  EXPECT_FALSE(g.is_eog(g.tokenizer().bos()));
}

TEST(ChatTemplate, EachFamilysText) {
  std::vector<llm::ChatMessage> ms{{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "2+2?"}};
  EXPECT_EQ(llm::apply_chat_template("chatml", ms, "<s>", "</s>"),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
            "Hello!<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(llm::apply_chat_template("llama3", ms, "<|begin_of_text|>", "<|end_of_text|>"),
            "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>"
            "\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|><|start_header_id|>user"
            "<|end_header_id|>\n\n2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(llm::apply_chat_template("llama2", ms, "<s>", "</s>"),
            "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello! </s><s>[INST] 2+2? [/INST]");
  EXPECT_EQ(llm::apply_chat_template("mistral", ms, "<s>", "</s>"),
            "[INST] Be brief.\n\nHi [/INST]Hello!</s><s>[INST] 2+2? [/INST]");
  EXPECT_EQ(llm::apply_chat_template("zephyr", ms, "<s>", "</s>"),
            "<|system|>\nBe brief.</s>\n<|user|>\nHi</s>\n<|assistant|>\nHello!</s>\n<|user|>\n2+2?</s>\n"
            "<|assistant|>\n");
  EXPECT_EQ(llm::apply_chat_template("phi3", ms, "<s>", "<|endoftext|>"),
            "<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n<|user|>\n2+2?<|end|>\n"
            "<|assistant|>\n");
  EXPECT_EQ(llm::apply_chat_template("gemma", ms, "<bos>", "<eos>"),
            "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n"
            "<start_of_turn>user\n2+2?<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_NE(error_of([&] { llm::apply_chat_template("jinja", ms, "", ""); }).find("'jinja'"), std::string::npos);
  EXPECT_NE(error_of([&] {
              llm::apply_chat_template("chatml", {{"tool", "x"}}, "", "");
            }).find("'tool'"),
            std::string::npos);
}

TEST(ChatTemplate, RecognisedFromTheFilesJinja) {
  auto of = [](const std::string& jinja) {
    return llm::chat_template_of({{"tokenizer.chat_template", nn::GGUFValue::str(jinja)}});
  };
  EXPECT_EQ(llm::chat_template_of({}), "chatml");
  EXPECT_EQ(of("{% for m in messages %}{{'<|im_start|>' + m['role'] + '\\n'}}{% endfor %}"), "chatml");
  EXPECT_EQ(of("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}"), "llama3");
  EXPECT_EQ(of("{{ bos_token + '[INST] ' + '<<SYS>>\\n' }}"), "llama2");
  EXPECT_EQ(of("{{ bos_token }}{{ '[INST] ' + message['content'] + ' [/INST]' }}"), "mistral");
  EXPECT_EQ(of("{{ '<|user|>\\n' + message['content'] + eos_token }}"), "zephyr");
  EXPECT_EQ(of("{{'<|' + message['role'] + '|>' + '\\n' + message['content'] + '<|end|>\\n'}}<|assistant|>"), "phi3");
  EXPECT_EQ(of("{{ '<start_of_turn>' + role + '\\n' }}"), "gemma");
}
