# tinygrad.renderer.wgsl: there is no WEBGPU device in the engine
from tinygrad._unsupported import unsupported_class
WGSLRenderer = unsupported_class("tinygrad.renderer.wgsl.WGSLRenderer", "there is no WEBGPU device")
