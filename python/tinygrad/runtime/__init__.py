# tinygrad.runtime: the devices are the engine's (src/tg/runtime/ops_*.cpp), opened as Device["CPU"], Device["GPU"] ...
# The reference's per-device modules are here for their names: a class of a device this engine has (ClangJITCompiler,
# PythonRenderer ...) gives that device's object; the others are stand-ins that raise NotImplementedError when used.

def compiler_class(name:str, device:str):
  """A class whose construction gives the engine's compiler of `device` (its arguments are the reference's and unused)."""
  def __new__(cls, *args, **kwargs):
    from tinygrad.device import Device
    return Device[device].compiler
  return type(name, (), {"__new__": __new__, "__doc__": f"the {device} device's compiler: Device[{device!r}].compiler"})
