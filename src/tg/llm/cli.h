#pragma once
// llm: tinygrad-llm's command line, one function shared by the program (tools/tinygrad_llm.cpp) and
// `python3 -m tinygrad.llm` (the same flags, the same output):
//   --model M.gguf --prompt "Once upon a time" -n 64    the completion, streamed, then prefill and decode tokens/s on
//                                                        stderr; --json: one JSON object instead
//   --model M.gguf --chat [--system TEXT]               an interactive chat on stdin/stdout
//   --model M.gguf --serve [--host 127.0.0.1] [--port 8080] [--max-queue 64]
//                                                        an OpenAI-compatible server (server.h)
// Sampling: --temperature T --top-k K --top-p P --min-p P --repeat-penalty R --seed S; --stop TEXT (repeatable);
// --context C, --device D, --chat-template NAME. Returns the exit status: 0, 2 for bad arguments, 1 for a model that
// can't run (the message, on stderr, names why).
//
// Built with the server as the library tinygrad_llm_cli (CMakeLists.txt): the engine links no HTTP stack.
#include <string>
#include <vector>

namespace tg::llm {

int cli_main(const std::vector<std::string>& args);  // args: the flags, without the program's name

}  // namespace tg::llm
