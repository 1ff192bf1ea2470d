// tinygrad-llm (tools/tinygrad_llm.cpp): --json gives the tokens the library generates for the same file, prompt and
// sampling; the streamed text is the decoded tokens; bad arguments exit 2, a model that can't run exits 1, each with
// a message.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "llm_util.h"
#include "tg/helpers/utf8.h"
#include "tg/llm/chat.h"
#include "tg/llm/generator.h"
#include "tg/llm/model.h"
#include "tg/llm/tokenizer.h"

using namespace tg;

namespace {

struct Result {
  int status;
  std::string out;
};
Result run(const std::string& args) {
  std::string cmd = cat(TG_LLM_PROGRAM, " ", args, " 2>&1");
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t k = std::fread(buf, 1, sizeof buf, p)) out.append(buf, k);
  int rc = ::pclose(p);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out};
}

struct LlmProgram : ::testing::Test {
  void SetUp() override {
    path = (std::filesystem::temp_directory_path() / cat("tg_llm_prog_", ::getpid(), ".gguf")).string();
    tg::test::write_tiny_llama(path, uint32_t(nn::GGMLType::Q8_0));
  }
  void TearDown() override { std::filesystem::remove(path); }
  std::string path;
};

// what the library makes of the file: the prompt's tokens and the tokens it generates after them
struct Library {
  std::vector<int64_t> prompt, tokens;
  std::string text;
};
Library library(const std::string& path, const std::string& prompt, int64_t n, const llm::SamplingParams& sp,
                DType activations = dtypes::float32) {
  nn::GGUFFile f = nn::gguf_load(path);
  llm::Tokenizer tok = llm::Tokenizer::from_gguf(f.kv);
  llm::Transformer model(f, 0, activations);
  Library l;
  l.prompt = tok.encode(prompt, true);
  std::vector<int64_t> all = model.generate(l.prompt, n, sp, tok.eos());
  l.tokens.assign(all.begin() + static_cast<ptrdiff_t>(l.prompt.size()), all.end());
  l.text = replace_invalid_utf8(tok.decode(l.tokens));
  return l;
}
std::vector<int64_t> ids(const json::Value& v, const char* key) {
  std::vector<int64_t> out;
  for (const json::Value& x : v.find(key)->as_array()) out.push_back(x.as_int());
  return out;
}

}  // namespace

TEST_F(LlmProgram, JsonTokensAreTheLibrarysAndTextIsTheirDecoding) {
  Result r = run(cat("--model ", path, " --prompt 'hi there' -n 6 --temperature 0.9 --top-k 20 --seed 5 --json"));
  ASSERT_EQ(r.status, 0) << r.out;
  json::Value v = json::parse(r.out.substr(r.out.find('{')));
  Library want = library(path, "hi there", 6, {.temperature = 0.9, .top_k = 20, .seed = 5});
  EXPECT_EQ(ids(v, "prompt_tokens"), want.prompt);
  EXPECT_EQ(ids(v, "tokens"), want.tokens);
  EXPECT_EQ(v.find("text")->as_string(), want.text);
  EXPECT_GT(v.find("decode_tok_s")->as_double(), 0);
  // streamed: the same text, then the speeds on stderr
  Result s = run(cat("--model ", path, " --prompt 'hi there' -n 6 --temperature 0.9 --top-k 20 --seed 5"));
  ASSERT_EQ(s.status, 0) << s.out;
  EXPECT_EQ(s.out.rfind(want.text, 0), 0u) << s.out;
  EXPECT_NE(s.out.find("decode:"), std::string::npos);
}

TEST_F(LlmProgram, BadArgumentsAndModels) {
  Result r = run("--prompt x");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--model is required"), std::string::npos);
  EXPECT_EQ(run(cat("--model ", path, " -n lots")).status, 2);
  EXPECT_EQ(run(cat("--model ", path, " --bogus")).status, 2);
  Result missing = run("--model /nonexistent/m.gguf");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.out.find("/nonexistent/m.gguf"), std::string::npos) << missing.out;
  Result temp = run(cat("--model ", path, " --temperature -1"));
  EXPECT_EQ(temp.status, 1);
  EXPECT_NE(temp.out.find("temperature"), std::string::npos);
  Result dtype = run(cat("--model ", path, " --dtype int8"));
  EXPECT_EQ(dtype.status, 2);
  EXPECT_NE(dtype.out.find("--dtype is float32, float16 or bfloat16, got 'int8'"), std::string::npos) << dtype.out;
}

// --dtype float16: the library's generation with half activations
TEST_F(LlmProgram, HalfActivations) {
  Result r = run(cat("--model ", path, " --prompt 'hi there' -n 4 --dtype float16 --json"));
  ASSERT_EQ(r.status, 0) << r.out;
  json::Value v = json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(ids(v, "tokens"), library(path, "hi there", 4, {}, dtypes::float16).tokens);
}

// --chat: each line of stdin a user message; each reply (the chat format of the file, here chatml) is the library's
// generation for the conversation so far, printed on a line of its own, its speed on stderr
TEST_F(LlmProgram, ChatRepliesToEachLine) {
  tg::test::Dims d;
  d.context = 512;  // two turns of chatml in a vocabulary of bytes
  tg::test::write_tiny_llama(path, uint32_t(nn::GGMLType::F32), d);
  std::string input = path + ".stdin";
  std::ofstream(input) << "Hello\nAgain\n/exit\nignored\n";
  Result r = run(cat("--model ", path, " --chat -n 4 --system 'Be brief.' < ", input));
  std::filesystem::remove(input);
  ASSERT_EQ(r.status, 0) << r.out;
  llm::Generator g(nn::gguf_load(path));
  const llm::Tokenizer& tok = g.tokenizer();
  std::vector<llm::ChatMessage> ms{{"system", "Be brief."}, {"user", "Hello"}};
  for (const char* next : {"Again", ""}) {
    std::vector<int64_t> prompt =
        tok.encode(llm::apply_chat_template("chatml", ms, tok.piece(tok.bos()), tok.piece(tok.eos())), true, true);
    llm::Generation reply = g.generate(prompt, {.max_tokens = 4});
    EXPECT_NE(r.out.find(replace_invalid_utf8(reply.text) + "\n"), std::string::npos) << r.out;
    ms.push_back({"assistant", reply.text});
    ms.push_back({"user", next});
  }
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '('), 2) << r.out;  // two replies, each with its "(N tokens, ...)"
  Result both = run(cat("--model ", path, " --chat --serve"));
  EXPECT_EQ(both.status, 2);
}
