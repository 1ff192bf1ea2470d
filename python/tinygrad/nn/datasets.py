# tinygrad.nn.datasets: mnist() reads the IDX files that tools/fetch_mnist.py puts in data/mnist, and mnist(fashion=True)
# those of Debian's dataset-fashion-mnist (src/tg/nn/datasets.h)
from tinygrad._C.nn.datasets import mnist, load_idx  # noqa: F401
