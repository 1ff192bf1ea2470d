# tinygrad.llm from Python (python/src/llm.cpp over src/tg/llm): Model's tokenizer, forward and generate, the
# Sampler, and python3 -m tinygrad.llm with tinygrad-llm's flags and JSON, on a tiny llama GGUF written here
import json, os, subprocess, sys
import numpy as np
import pytest
from tinygrad import Tensor
from tinygrad.llm import Model, Sampler
from conftest import dies_with_us, write_tiny_llama

@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
  p = tmp_path_factory.mktemp("llm") / "tiny.gguf"
  write_tiny_llama(p)
  return str(p)

def test_model_generate_and_forward(model_path):
  m = Model(model_path)
  assert m.vocab_size == 300 and m.bos == 1 and m.eos == 2 and m.context == 64
  prompt = m.encode("hi")
  assert prompt[0] == m.bos and m.decode(prompt) == "hi"
  ids = m.generate(prompt, 6)
  greedy = [int(np.argmax(m.forward(prompt, 0).numpy()))]
  assert ids[:len(prompt) + 1] == prompt + greedy
  assert ids == m.generate(prompt, 6)  # again: the cache is rewritten from position 0

def test_half_activations(model_path):
  from tinygrad import dtypes
  f32, f16 = Model(model_path), Model(model_path, dtype=dtypes.float16)
  prompt = f32.encode("hi")
  a, b = f32.forward(prompt, 0).numpy(), f16.forward(prompt, 0).numpy()
  assert b.dtype == np.float32 and not np.array_equal(a, b)
  np.testing.assert_allclose(b, a, atol=0.02 * np.abs(a).max())
  with pytest.raises(ValueError, match="float32, float16 or bfloat16"): Model(model_path, dtype=dtypes.int32)

def test_gpt2_tokenizer(tmp_path):
  # byte-level BPE: the 256 bytes in GPT-2's printable alphabet (a space is "\u0120"), two merges, <|endoftext|>
  printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
  alphabet = [chr(b) if b in printable else chr(0x100 + [c for c in range(256) if c not in printable].index(b)) for b in range(256)]
  toks = alphabet + ["hi", "\u0120hi", "<|endoftext|>"]
  write_tiny_llama(tmp_path / "gpt2.gguf", vocab=len(toks), tokenizer={
    "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-2", "tokenizer.ggml.tokens": toks,
    "tokenizer.ggml.merges": ["h i", "\u0120 hi"], "tokenizer.ggml.token_type": [1] * 258 + [3],
    "tokenizer.ggml.bos_token_id": 258, "tokenizer.ggml.eos_token_id": 258})
  m = Model(str(tmp_path / "gpt2.gguf"))
  assert m.encode("hi hi") == [256, 257]  # no BOS: GPT-2's files ask for none
  assert m.encode("hi<|endoftext|>", parse_special=True) == [256, 258]
  assert m.encode("h\u00e9") == [ord("h"), alphabet.index(chr(0xC3)), alphabet.index(chr(0xA9))]
  assert m.decode(m.encode("hi h\u00e9 \U0001F600")) == "hi h\u00e9 \U0001F600"
  assert m.decode([256, 258, 257]) == "hi hi"  # <|endoftext|>, a control token, left out

def test_sampler():
  s1, s2 = Sampler(temperature=1.0, seed=3), Sampler(temperature=1.0, seed=3)
  logits = [0.0, 1.0, 2.0, 0.5]
  assert [s1.sample(logits) for _ in range(50)] == [s2.sample(logits) for _ in range(50)]
  assert Sampler().sample(logits) == 2
  with pytest.raises(ValueError): Sampler(temperature=-1)
  with pytest.raises(ValueError): Sampler(temperature=1.0).sample([])

def test_cli_json_is_the_librarys(model_path):
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
  r = subprocess.run([sys.executable, "-m", "tinygrad.llm", "--model", model_path, "--prompt", "hi", "-n", "5",
                      "--temperature", "0.8", "--seed", "2", "--json"], capture_output=True, text=True, env=env, check=True)
  out = json.loads(r.stdout)
  m = Model(model_path)
  want = m.generate(m.encode("hi"), 5, temperature=0.8, seed=2)
  assert out["prompt_tokens"] + out["tokens"] == want
  # the text is the tokens' as a continuation of the prompt (a leading space kept)
  assert out["text"] == m.decode(out["prompt_tokens"] + out["tokens"])[len(m.decode(out["prompt_tokens"])):]
  assert out["decode_tok_s"] > 0
  bad = subprocess.run([sys.executable, "-m", "tinygrad.llm", "--model", "/nonexistent.gguf"], capture_output=True, text=True, env=env)
  assert bad.returncode == 1 and "/nonexistent.gguf" in bad.stderr

def test_cli_chat_and_serve_are_the_programs(model_path):
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
  cli = [sys.executable, "-m", "tinygrad.llm", "--model", model_path]
  chat = subprocess.run(cli + ["--chat", "-n", "3"], input="Hello\n/exit\n", capture_output=True, text=True, env=env, timeout=120)
  assert chat.returncode == 0 and chat.stderr.count("tokens,") == 1, chat.stderr
  # the server from Python: it says where it listens, answers, and a SIGTERM stops it cleanly
  import http.client, re
  p = subprocess.Popen(cli + ["--serve", "--port", "0"], stderr=subprocess.PIPE, text=True, env=env,
                       preexec_fn=dies_with_us())
  try:
    line = ""
    while "serving on" not in line:  # Python may warn first (pybind11 does in a debug build)
      line = p.stderr.readline()
      assert line, "the server exited before it listened"
    port = int(re.search(r"serving on http://127.0.0.1:(\d+)", line).group(1))
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", "/health")
    assert c.getresponse().status == 200
  finally:
    p.terminate()
  assert p.wait(timeout=30) == 0
  assert subprocess.run(cli + ["--chat", "--serve"], capture_output=True, env=env).returncode == 2
