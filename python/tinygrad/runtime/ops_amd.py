# tinygrad.runtime.ops_amd: the reference's AMD device (KFD and AM drivers)
from tinygrad._unsupported import unsupported_class
_WHY = "there is no AMD device"
AMDDevice = unsupported_class("tinygrad.runtime.ops_amd.AMDDevice", _WHY)
AMDAllocator = unsupported_class("tinygrad.runtime.ops_amd.AMDAllocator", _WHY)
AMDProgram = unsupported_class("tinygrad.runtime.ops_amd.AMDProgram", _WHY)
HWQueue = unsupported_class("tinygrad.runtime.ops_amd.HWQueue", _WHY)
