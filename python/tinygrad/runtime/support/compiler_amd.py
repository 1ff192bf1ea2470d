# tinygrad.runtime.support.compiler_amd: the reference's AMD compilers
from tinygrad._unsupported import unsupported_class
_WHY = "there is no AMD device"
AMDLLVMCompiler = unsupported_class("tinygrad.runtime.support.compiler_amd.AMDLLVMCompiler", _WHY)
HIPCompiler = unsupported_class("tinygrad.runtime.support.compiler_amd.HIPCompiler", _WHY)
