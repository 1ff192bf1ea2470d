# MNIST training from Python, as tinygrad's examples/beautiful_mnist.py, on the C++ engine:
#   python3 tools/fetch_mnist.py && PYTHONPATH=build/python python3 examples/beautiful_mnist.py
#   FASHION=1 PYTHONPATH=build/python python3 examples/beautiful_mnist.py   # Fashion-MNIST (Debian's files)
# STEPS (70), BS (512) and TARGET_EVAL_ACC_PCT as the reference. One change: the batch is gathered with numpy from the
# training set and passed to the jitted step, where the reference indexes X_train with a tensor of random indices (a
# one-hot gather over the whole training set every step, which its own TODO calls slow).
from typing import Callable, List
import numpy as np
from tinygrad import Tensor, TinyJit, nn, GlobalCounters
from tinygrad.helpers import getenv, colored, trange
from tinygrad.nn.datasets import mnist

class Model:
  def __init__(self):
    self.layers: List[Callable[[Tensor], Tensor]] = [
      nn.Conv2d(1, 32, 5), Tensor.relu,
      nn.Conv2d(32, 32, 5), Tensor.relu,
      nn.BatchNorm(32), Tensor.max_pool2d,
      nn.Conv2d(32, 64, 3), Tensor.relu,
      nn.Conv2d(64, 64, 3), Tensor.relu,
      nn.BatchNorm(64), Tensor.max_pool2d,
      lambda x: x.flatten(1), nn.Linear(576, 10)]

  def __call__(self, x:Tensor) -> Tensor: return x.sequential(self.layers)

if __name__ == "__main__":
  X_train, Y_train, X_test, Y_test = mnist(fashion=getenv("FASHION"))
  xs, ys = X_train.numpy(), Y_train.numpy()
  rng = np.random.default_rng(1337)

  model = Model()
  opt = nn.optim.Adam(nn.state.get_parameters(model))

  @TinyJit
  @Tensor.train()
  def train_step(x:Tensor, y:Tensor) -> Tensor:
    opt.zero_grad()
    loss = model(x).sparse_categorical_crossentropy(y).backward()
    opt.step()
    return loss

  @TinyJit
  def get_test_acc() -> Tensor: return (model(X_test).argmax(axis=1) == Y_test).mean()*100

  test_acc = float('nan')
  for i in (t:=trange(getenv("STEPS", 70))):
    GlobalCounters.reset()   # NOTE: this makes it nice for DEBUG=2 timing
    samples = rng.integers(0, xs.shape[0], getenv("BS", 512))
    loss = train_step(Tensor(xs[samples]), Tensor(ys[samples]))
    if i%10 == 9 or i == t.total-1: test_acc = get_test_acc().item()
    t.set_description(f"loss: {loss.item():6.2f} test_accuracy: {test_acc:5.2f}%")
  print(f"test accuracy: {test_acc:.2f}%")

  # verify eval acc
  if target := getenv("TARGET_EVAL_ACC_PCT", 0.0):
    if test_acc >= target and test_acc != 100.0: print(colored(f"{test_acc=} >= {target}", "green"))
    else: raise ValueError(colored(f"{test_acc=} < {target}", "red"))
