# tinygrad.codegen.kernel: the Kernel (an AST and the opts applied to it) is the engine's (src/tg/codegen/kernel.h);
# Opt and OptOps are the reference's records of an opt
from __future__ import annotations
from typing import Optional
from tinygrad import _C
from tinygrad.renderer import Opt, OptOps, ProgramSpec, Renderer
from tinygrad.uop.ops import UOp

class KernelOptError(Exception): pass  # an opt that can't be applied

class Kernel:
  """An AST with opts applied to it (the engine's Kernel), for a renderer (opts; default Device.DEFAULT's).
  linearize() and to_program() render it as the engine would run it."""
  def __init__(self, ast:UOp, opts:Optional[Renderer]=None):
    if opts is None:
      from tinygrad.device import Device
      opts = Device[Device.DEFAULT].renderer
    self.opts, self._k, self.uops = opts, _C.KernelState(ast, opts), None

  ast = property(lambda self: self._k.ast)
  sts = property(lambda self: self._k.sts)
  name = property(lambda self: self._k.name)
  full_shape = property(lambda self: self._k.full_shape)
  output_shape = property(lambda self: self._k.output_shape)
  shape_len = property(lambda self: self._k.shape_len)
  first_reduce = property(lambda self: self._k.first_reduce)
  first_upcast = property(lambda self: self._k.first_upcast)
  upcasted = property(lambda self: self._k.upcasted)
  local_dims = property(lambda self: self._k.local_dims)
  @property
  def applied_opts(self) -> list[Opt]: return [Opt(OptOps[op], axis, arg) for op, axis, arg in self._k.applied_opts]

  def copy(self) -> Kernel:
    ret = Kernel.__new__(Kernel)
    ret.opts, ret._k, ret.uops = self.opts, self._k.copy(), None
    return ret
  def apply_opt(self, opt:Opt, append_opt:bool=True): self._k.apply_opt(opt.op.name, opt.axis, opt.arg, append_opt)
  def apply_opts(self, opts:list[Opt]) -> Kernel:
    for opt in opts: self.apply_opt(opt)
    return self
  def hand_coded_optimizations(self) -> list[Opt]:
    return [Opt(OptOps[op], axis, arg) for op, axis, arg in self._k.hand_coded_optimizations()]

  def to_program(self, name_override:Optional[str]=None) -> ProgramSpec:
    if name_override is not None:
      raise NotImplementedError("Kernel.to_program: name_override is not supported on tinygrad.cpp (the engine names "
                                "each kernel from its shape)")
    _, src, device, uops, global_size, local_size, mem = self._k.render(self.opts)
    return ProgramSpec(self.name, src, device, self.ast, uops, self.applied_opts, mem, global_size, local_size)
  def linearize(self, name_override:Optional[str]=None) -> Kernel:
    self.uops = self.to_program(name_override).uops
    return self
