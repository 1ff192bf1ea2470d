# tinygrad.nn: the layers are C++ (src/tg/nn/nn.h), bound in tinygrad._C.nn
from tinygrad.nn import optim, state, datasets  # noqa: F401
