# tinygrad.runtime.ops_metal: the reference's METAL device
from tinygrad._unsupported import unsupported_class
_WHY = "there is no METAL device"
MetalDevice = unsupported_class("tinygrad.runtime.ops_metal.MetalDevice", _WHY)
MetalCompiler = unsupported_class("tinygrad.runtime.ops_metal.MetalCompiler", _WHY)
MetalProgram = unsupported_class("tinygrad.runtime.ops_metal.MetalProgram", _WHY)
