# tinygrad.runtime.ops_hip: the reference's HIP device
from tinygrad._unsupported import unsupported_class, unsupported_function
_WHY = "there is no HIP device"
HIPDevice = unsupported_class("tinygrad.runtime.ops_hip.HIPDevice", _WHY)
compile_hip = unsupported_function("tinygrad.runtime.ops_hip.compile_hip", _WHY)
