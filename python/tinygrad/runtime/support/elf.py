# tinygrad.runtime.support.elf: the reference's ELF loader (it links its CPU kernels itself)
from tinygrad._unsupported import unsupported_function
_WHY = "the CPU device dlopens its kernels as shared objects; there is no ELF loader"
elf_loader = unsupported_function("tinygrad.runtime.support.elf.elf_loader", _WHY)
