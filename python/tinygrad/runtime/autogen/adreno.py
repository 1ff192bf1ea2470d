# tinygrad.runtime.autogen.adreno: the reference's ctypes bindings of Qualcomm's Adreno GPU headers. Every name imports and raises when used
from tinygrad._unsupported import unsupported_module_getattr
__getattr__ = unsupported_module_getattr(__name__, "there is no QCOM device")
