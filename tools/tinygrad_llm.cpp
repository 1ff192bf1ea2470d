// tinygrad-llm: a GGUF language model from one program: a completion, a chat, or an OpenAI-compatible server.
// The flags and the modes are src/tg/llm/cli.h's; `python3 -m tinygrad.llm` runs the same.
#include <string>
#include <vector>

#include "tg/llm/cli.h"

int main(int argc, char** argv) { return tg::llm::cli_main(std::vector<std::string>(argv + 1, argv + argc)); }
