# examples/train_gpt.py (tinygrad's API on our module): a few steps of a tiny GPT on a corpus written here, a run in
# two parts that repeats the losses of one that never stopped, and a random-number regression under TinyJit
import os, subprocess, sys, pytest
from tinygrad import Tensor, TinyJit
from conftest import ON_CPU

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
TINY = {"N_LAYER": "1", "N_EMBD": "32", "N_HEAD": "2", "CTX": "16", "BS": "4", "EVAL_EVERY": "4", "EVAL_BATCHES": "1",
        "WARMUP": "2", "LR": "3e-3", "STEPS": "8", "DROPOUT": "0.1", "SAMPLE": "0"}

def train(tmp_path, **env):
  r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "train_gpt.py")], capture_output=True, text=True,
                     env={**os.environ, **TINY, "CORPUS": str(tmp_path / "corpus.txt"), **env}, timeout=600)
  assert r.returncode == 0, r.stdout + r.stderr
  return r.stdout

def losses(out): return [" ".join(l.split()[:4]) for l in out.splitlines() if l.startswith("step")]

@pytest.mark.skipif(not ON_CPU, reason="a training run, on CPU only (the op suites cover the other devices)")
def test_train_and_resume(tmp_path):
  (tmp_path / "corpus.txt").write_text("the quick brown fox jumps over the lazy dog. déjà vu!\n" * 40)
  whole = train(tmp_path, SAMPLE="20")
  assert len(losses(whole)) == 8 + 2 and "--- sample ---" in whole
  first = train(tmp_path, STOP_AFTER="4", CKPT=str(tmp_path / "ck.safetensors"))
  second = train(tmp_path, RESUME=str(tmp_path / "ck.safetensors"))
  assert "resumed from" in second and losses(first) + losses(second) == losses(whole)

def test_rand_under_jit_advances_per_call():
  # two rands in one jitted function: each replay moves the counter past both (it once moved past one, so a replay's
  # second rand repeated the next replay's first)
  Tensor.manual_seed(3)
  f = TinyJit(lambda: (Tensor.rand(4) + Tensor.rand(4) * 10).realize())
  counts = []
  for _ in range(5):
    f()
    counts.append(Tensor._device_rng_counters[Tensor.rand(1).device].item())
  # each call: 4 + 4 words, then the probe's 1
  assert [b - a for a, b in zip(counts, counts[1:])] == [9] * 4
