# tinygrad.nn: the layers are C++ (src/tg/nn/nn.h), bound in tinygrad._C.nn; Conv1d and ConvTranspose1d return
# their 2d layers, and BatchNorm2d/BatchNorm3d are BatchNorm, as in tinygrad
from tinygrad._C.nn import (BatchNorm, BatchNorm2d, BatchNorm3d, Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d,  # noqa: F401
                            Linear, GroupNorm, InstanceNorm, LayerNorm, LayerNorm2d, RMSNorm, Embedding, LSTMCell)
from tinygrad.nn import optim, state, datasets  # noqa: F401
