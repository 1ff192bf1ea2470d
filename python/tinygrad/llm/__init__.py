# tinygrad.llm: GGUF language models (the newest tinygrad's tinygrad/llm), run by the C++ engine (src/tg/llm):
#   m = Model("model.gguf"); ids = m.generate(m.encode("Once upon a time"), 32, temperature=0.8, seed=1)
#   print(m.decode(ids))
# python3 -m tinygrad.llm takes tinygrad-llm's flags and prints what it prints (tools/tinygrad_llm.cpp).
from tinygrad._C.llm import Model, Sampler  # noqa: F401
