# tinygrad.frontend.torch: the reference registers a "tiny" device with PyTorch when this is imported (its extra/
# torch_backend); tinygrad.cpp has no PyTorch backend, so importing this registers nothing and its names raise
from tinygrad._unsupported import unsupported_module_getattr
__getattr__ = unsupported_module_getattr(__name__, "there is no PyTorch backend (torch's \"tiny\" device)")
