# tinygrad.llm: GGUF language models (the newest tinygrad's tinygrad/llm), run by the C++ engine (src/tg/llm):
#   m = Model("model.gguf"); ids = m.generate(m.encode("Once upon a time"), 32, temperature=0.8, seed=1)
#   print(m.decode(ids))
# python3 -m tinygrad.llm is tinygrad-llm: the same command line (src/tg/llm/cli.h), run by the C++ library.
from tinygrad._C.llm import Model, Sampler  # noqa: F401
