# tinygrad.runtime.support.am.amdev: the reference's AM driver (AMD GPUs without the kernel driver)
from tinygrad._unsupported import unsupported_class
_WHY = "there is no AMD device"
AMMemoryManager = unsupported_class("tinygrad.runtime.support.am.amdev.AMMemoryManager", _WHY)
AMPageTableTraverseContext = unsupported_class("tinygrad.runtime.support.am.amdev.AMPageTableTraverseContext", _WHY)
AMDev = unsupported_class("tinygrad.runtime.support.am.amdev.AMDev", _WHY)
