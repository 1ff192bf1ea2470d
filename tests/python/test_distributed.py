# tinygrad.distributed (src/tg/distributed): the MPI world from Python, alone and as 2 ranks under mpirun, with an
# allreduce replayed by TinyJit and a data-parallel step whose gradients are averaged over the ranks.
import os, shutil, subprocess, sys

import numpy as np
import pytest

from tinygrad import Tensor, distributed


def test_alone_is_rank_0_of_1():
  w = distributed.world()
  assert (w.rank, w.size) == (0, 1) and repr(w).startswith("World(rank=0, size=1")
  t = Tensor([1.0, 2.0])
  assert distributed.allreduce(t) is not None and distributed.allreduce(t).tolist() == [1.0, 2.0]
  assert distributed.rank_slice(Tensor.arange(4)).tolist() == [0, 1, 2, 3]
  with pytest.raises(ValueError):
    distributed.allreduce(t, "mean")


# one SGD step of a data-parallel linear layer: alone (rank 0 of 1) rank_slice is the whole batch and
# allreduce_grads does nothing, so the same code is the single-process step on the whole batch
STEP = r'''
from tinygrad import Tensor, distributed, nn
Tensor.manual_seed(3)
l = nn.Linear(4, 2)
X, Y = Tensor.randn(8, 4).realize(), Tensor([0, 1, 1, 0, 1, 0, 0, 1])
opt = nn.optim.SGD([l.weight, l.bias], lr=0.5)
with Tensor.train():
  opt.zero_grad()
  l(distributed.rank_slice(X)).sparse_categorical_crossentropy(distributed.rank_slice(Y)).backward()
  distributed.allreduce_grads([l.weight, l.bias])
  opt.step()
'''

RANKS = r'''
import numpy as np
from tinygrad import Tensor, TinyJit, distributed
w = distributed.world()
print(f"rank {w.rank} of {w.size}", flush=True)
s = distributed.allreduce(Tensor.full((3,), w.rank + 1.0))
assert s.tolist() == [3.0] * 3, s.tolist()
assert distributed.allreduce(Tensor([w.rank, 5 - w.rank]), "max").tolist() == [1, 5]
f = TinyJit(lambda x: (distributed.allreduce(x) * 2).realize())
for i in range(4): assert f(Tensor.full((2,), float(i + w.rank)).contiguous().realize()).tolist() == [2.0 * (2 * i + 1)] * 2
exec(STEP)  # every rank ends with the same weights, those of one step on the whole batch
np.save(f"{OUT}/w{w.rank}.npy", l.weight.numpy())
'''


@pytest.mark.skipif(shutil.which("mpirun") is None or not distributed.built_with_mpi(), reason="needs mpirun and MPI")
def test_two_ranks(tmp_path):
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
  script = f"OUT = {str(tmp_path)!r}\nSTEP = {STEP!r}\n" + RANKS
  r = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", "2", sys.executable,
                      "-c", script], capture_output=True, text=True, env=env, timeout=240)
  assert r.returncode == 0, r.stdout + r.stderr
  assert "rank 0 of 2" in r.stdout and "rank 1 of 2" in r.stdout
  w0, w1 = np.load(tmp_path / "w0.npy"), np.load(tmp_path / "w1.npy")
  np.testing.assert_array_equal(w0, w1)
  alone = {}
  exec(STEP, alone)  # the same step in this process, on the whole batch
  np.testing.assert_allclose(w0, alone["l"].weight.numpy(), rtol=1e-5, atol=1e-6)
