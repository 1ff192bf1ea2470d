# tinygrad.device: the device registry (src/tg/runtime/device.h). Device["CPU"] is the opened device, a Compiled
# with its allocator, compiler and renderer; Buffer is the engine's Buffer
from __future__ import annotations
import sys, platform, decimal
from dataclasses import dataclass
from tinygrad import _C
from tinygrad._C import Buffer, BufferSpec, Compiled, Allocator, Compiler  # noqa: F401
from tinygrad.dtype import DType, dtypes
from tinygrad.helpers import getenv, CI, OSX
from tinygrad._unsupported import unsupported_class

# NOTE: the engine reports a failed compile as a RuntimeError carrying the compiler's output, not as this class
class CompileError(Exception): pass

LRUAllocator = unsupported_class("tinygrad.device.LRUAllocator", "the engine's allocators (LRU=0 turns their caching off) "
                                 "are C++ classes that Python can't subclass", (Allocator,))

# the profiler's events, as the reference's: the engine's PROFILE=1 timeline is written by the engine itself
class ProfileEvent: pass
@dataclass(frozen=True)
class ProfileDeviceEvent(ProfileEvent):
  device:str; comp_tdiff:decimal.Decimal=decimal.Decimal(0); copy_tdiff:decimal.Decimal=decimal.Decimal(0)  # noqa: E702
@dataclass(frozen=True)
class ProfileRangeEvent(ProfileEvent): device:str; name:str; st:decimal.Decimal; en:decimal.Decimal; is_copy:bool  # noqa: E702
@dataclass(frozen=True)
class ProfileProgramEvent(ProfileEvent): device:str; name:str; lib:bytes|None; base:int|None  # noqa: E702
@dataclass(frozen=True)
class ProfileGraphEntry: device:str; name:str; st_id:int; en_id:int; is_copy:bool  # noqa: E702
@dataclass(frozen=True)
class ProfileGraphEvent(ProfileEvent): ents:list[ProfileGraphEntry]; deps:list[list[int]]; sigs:list[decimal.Decimal]  # noqa: E702

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
# the reference's device graph runner (None where a device has none): the engine's JIT replays kernels one by one
Compiled.graph = None

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
