# tinygrad.uop.upat: the reference compiles UPats to Python source for speed; the engine's matcher is C++ (src/tg/uop/upat.h)
from tinygrad._unsupported import unsupported_function
_WHY = "UPats match in the engine's C++ matcher (src/tg/uop/upat.h); there is no Python code to compile"
upat_compile = unsupported_function("tinygrad.uop.upat.upat_compile", _WHY)
_get_code = unsupported_function("tinygrad.uop.upat._get_code", _WHY)
