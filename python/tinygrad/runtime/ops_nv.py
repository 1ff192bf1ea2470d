# tinygrad.runtime.ops_nv: the reference's NV device (NVIDIA's open kernel driver)
from tinygrad._unsupported import unsupported_class
_WHY = "there is no NV device (the CUDA device runs NVIDIA GPUs)"
NVDevice = unsupported_class("tinygrad.runtime.ops_nv.NVDevice", _WHY)
HWQueue = unsupported_class("tinygrad.runtime.ops_nv.HWQueue", _WHY)
