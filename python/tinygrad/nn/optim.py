# tinygrad.nn.optim: the optimizers are C++ (src/tg/nn/optim.h); SGD returns a LARS, Adam and AdamW a LAMB, as in tinygrad
from tinygrad._C.nn.optim import Optimizer, OptimizerGroup, LARS, LAMB, SGD, Adam, AdamW  # noqa: F401
