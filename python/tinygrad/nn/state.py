# tinygrad.nn.state: state dicts (src/tg/nn/state.h); get_state_dict walks tensors, C++ layers, dicts, lists, tuples,
# namedtuples and objects' attributes, naming them with dots ("layers.0.weight"); safetensors files. Beside them, in
# Python over Tensors: a uint8 Tensor read as a file (TensorIO) and tar archives.
from __future__ import annotations
import io, pathlib, tarfile
from typing import Any, BinaryIO, Iterable, Union
from tinygrad._C.nn.state import get_state_dict, get_parameters, load_state_dict  # noqa: F401
from tinygrad._C.nn.state import safe_save, safe_load, safe_load_metadata, torch_load  # noqa: F401
# GGUF (src/tg/nn/gguf.h): every type llama.cpp writes for LLM weights, lazy and dequantized where used
from tinygrad._C.nn.state import gguf_load, gguf_save, ggml_data_to_tensor  # noqa: F401
from tinygrad._C.nn.state import ggml_int8_linear, ggml_int8_pack, GGMLInt8Weight  # noqa: F401  (ours: llama.cpp's int8 matvec; packed Q4_0 / Q8_0 / Q4_K / Q6_K)
from tinygrad.tensor import Tensor
from tinygrad.dtype import dtypes

class TensorIO(io.RawIOBase, BinaryIO):
  """A 1-d uint8 Tensor as a read-only, seekable binary file."""
  def __init__(self, t:Tensor):
    if t.ndim != 1 or t.dtype != dtypes.uint8: raise ValueError("Tensor must be 1d and of dtype uint8!")
    self._position, self._tensor = 0, t
  def readable(self) -> bool: return True
  def seekable(self) -> bool: return True
  def read(self, size:int=-1) -> bytes:
    if (buf := super().read(size)) is None: raise ValueError("io.RawIOBase.read returned None")
    return buf
  def readinto(self, buffer:Any) -> int:
    data = bytes(self._tensor[self._position:self._position + len(buffer)].data()) if self._position < len(self._tensor) else b""
    buffer[:len(data)] = data
    self._position += len(data)
    return len(data)
  def seek(self, offset:int, whence:int=0) -> int:
    base = (0, self._position, len(self._tensor))[whence]
    self._position = min(len(self._tensor), max(0, base + offset))
    return self._position
  def __enter__(self): return self
  def write(self, s:Any): raise io.UnsupportedOperation("TensorIO.write not supported")
  def writelines(self, lines:Iterable[Any]): raise io.UnsupportedOperation("TensorIO.writelines not supported")

def _bytes_tensor(fn:Union[Tensor, str, pathlib.Path]) -> Tensor:  # a path is the file on DISK, read where used
  return fn if isinstance(fn, Tensor) else Tensor(pathlib.Path(fn))

def tar_extract(t:Union[Tensor, str, pathlib.Path]) -> dict[str, Tensor]:
  """The regular files of a tar archive (a path, or a uint8 Tensor of its bytes), as uint8 tensors sliced out of it."""
  t = _bytes_tensor(t)
  with tarfile.open(fileobj=TensorIO(t), mode="r") as tar:
    return {m.name: t[m.offset_data:m.offset_data + m.size] for m in tar if m.type == tarfile.REGTYPE}
