# python3 -m tinygrad.llm: tinygrad-llm's command line (src/tg/llm/cli.h): the same flags, modes and output.
#   python3 -m tinygrad.llm --model M.gguf --prompt "Once upon a time" -n 64 [--json]
#   python3 -m tinygrad.llm --model M.gguf --chat | --serve [--port 8080]
import sys
from tinygrad._C.llm import cli_main

if __name__ == "__main__":
  sys.exit(cli_main(sys.argv[1:]))
