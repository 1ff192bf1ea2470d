# tinygrad.device: the device registry (src/tg/runtime/device.h). Device["CPU"] is the opened device, a Compiled
# with its allocator, compiler and renderer; Buffer is the engine's Buffer
from __future__ import annotations
import sys, platform
from tinygrad import _C
from tinygrad._C import Buffer, BufferSpec, Compiled, Allocator, Compiler  # noqa: F401
from tinygrad.dtype import DType, dtypes
from tinygrad.helpers import getenv, CI, OSX

ALL_DEVICES = ["METAL", "AMD", "NV", "CUDA", "QCOM", "GPU", "CPU", "LLVM", "DSP", "WEBGPU"]

class _Device:
  # Device.DEFAULT lives in the C++ engine: reading it chooses it there, assigning it changes it there
  @property
  def DEFAULT(self) -> str: return _C.get_default_device()
  @DEFAULT.setter
  def DEFAULT(self, device:str): _C.set_default_device(device)
  def canonicalize(self, device:str|None) -> str: return _C.canonicalize_device(device)
  def get_available_devices(self) -> list[str]: return _C.get_available_devices()
  def __getitem__(self, ix:str) -> Compiled: return _C.open_device(ix)
  @property
  def default(self) -> Compiled: return self[self.DEFAULT]
Device = _Device()

def is_dtype_supported(dtype:DType, device:str|None=None) -> bool:
  if device is None: device = Device.DEFAULT
  # ours: the GPU devices say what their driver has (half needs cl_khr_fp16, which PoCL lacks), then tinygrad's table
  if device.split(":")[0] in {"GPU", "CUDA"}:
    try:
      if not Device[device].supports_dtype(dtype): return False
    except RuntimeError: return False
  if dtype == dtypes.bfloat16:
    if device == "METAL": return not CI
    if device in {"CUDA", "NV"}: return not CI and not getenv("PTX")
    if device in {"CPU", "LLVM"}: return not CI and platform.machine() in {"arm", "arm64", "aarch64", "x86_64", "amd64"}
    return device == "AMD"
  if dtype in dtypes.fp8s: return False
  if device == "WEBGPU": return dtype in [dtypes.bool, dtypes.char, dtypes.uchar, dtypes.short,
                                          dtypes.ushort, dtypes.float, dtypes.int32, dtypes.uint32, dtypes.half]
  if dtype == dtypes.half:
    if device == "GPU": return not CI and not OSX
    if device in ["CUDA", "NV"]: return not CI
    if device == "LLVM": return OSX
    if device == "PYTHON": return sys.version_info >= (3, 12)
  if dtype == dtypes.float64: return device != "METAL" and not (OSX and device == "GPU")
  return True
