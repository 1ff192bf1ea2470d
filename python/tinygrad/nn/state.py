# tinygrad.nn.state: state dicts (src/tg/nn/state.h); get_state_dict walks tensors, C++ layers, dicts, lists, tuples,
# namedtuples and objects' attributes, naming them with dots ("layers.0.weight"); safetensors files. Beside them, in
# Python over Tensors: a uint8 Tensor read as a file (TensorIO), tar archives and GGUF files (llama.cpp's weights).
from __future__ import annotations
import io, pathlib, struct, tarfile
from typing import Any, BinaryIO, Callable, Iterable, Union
from tinygrad._C.nn.state import get_state_dict, get_parameters, load_state_dict  # noqa: F401
from tinygrad._C.nn.state import safe_save, safe_load, safe_load_metadata, torch_load  # noqa: F401
from tinygrad.tensor import Tensor
from tinygrad.dtype import dtypes
from tinygrad.helpers import prod, round_up

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

def _bytes_tensor(fn:Union[Tensor, str, pathlib.Path]) -> Tensor:  # NOTE: a file is read into memory (no DISK device)
  return fn if isinstance(fn, Tensor) else Tensor(pathlib.Path(fn).read_bytes())

def tar_extract(t:Union[Tensor, str, pathlib.Path]) -> dict[str, Tensor]:
  """The regular files of a tar archive (a path, or a uint8 Tensor of its bytes), as uint8 tensors sliced out of it."""
  t = _bytes_tensor(t)
  with tarfile.open(fileobj=TensorIO(t), mode="r") as tar:
    return {m.name: t[m.offset_data:m.offset_data + m.size] for m in tar if m.type == tarfile.REGTYPE}

# *** GGUF ***

def _nibbles(t:Tensor, bits:int) -> Tensor:
  """The bits-wide fields of each byte of t (..., k), low field first, as (..., k*8//bits): field f of byte j lands at
  f*k + j (all low fields of the row, then the next fields), the order ggml packs its quantized blocks in."""
  return Tensor.cat(*[t.rshift(i * bits).bitwise_and((1 << bits) - 1) for i in range(8 // bits)], dim=-1)

def ggml_data_to_tensor(t:Tensor, n:int, ggml_type:int) -> Tensor:
  """n values of ggml type ggml_type from the bytes t: float32 (0), float16 (1), int8 (16), int16 (17), int32 (18), or
  dequantized to float32 from Q4_0 (2), Q4_1 (3), Q8_0 (8), Q6_K (14)."""
  if (dtype := {0: dtypes.float32, 1: dtypes.float16, 16: dtypes.int8, 17: dtypes.int16, 18: dtypes.int32}.get(ggml_type)) is not None:
    return t[:dtype.itemsize * n].bitcast(dtype)
  if (block := {2: (32, 18), 3: (32, 20), 8: (32, 34), 14: (256, 210)}.get(ggml_type)) is None:
    raise ValueError(f"GGML type '{ggml_type}' is not supported!")
  b = t[:(n // block[0]) * block[1]].reshape(-1, block[1])
  def f16(lo:int) -> Tensor: return b[:, lo:lo+2].bitcast(dtypes.float16).cast(dtypes.float32)  # a scale, (blocks, 1)
  # NOTE: the dequantized values come as (blocks, values per block)
  if ggml_type == 2: return (_nibbles(b[:, 2:], 4).cast(dtypes.int8) - 8) * f16(0)  # (q-8)*d
  if ggml_type == 3: return _nibbles(b[:, 4:], 4).cast(dtypes.float32) * f16(0) + f16(2)  # q*d+m
  if ggml_type == 8: return b[:, 2:].bitcast(dtypes.int8).cast(dtypes.float32) * f16(0)  # q*d
  # Q6_K: 256 values in two halves of 128; a value's 6 bits are 4 from ql (64 bytes a half) and 2 from qh (32 bytes
  # a half), minus 32, times d and one int8 scale per 16 values
  ql, qh = _nibbles(b[:, :128].reshape(-1, 2, 64), 4), _nibbles(b[:, 128:192].reshape(-1, 2, 32), 2)
  q = ql.bitwise_or(qh.lshift(4)).cast(dtypes.int8) - 32
  scales = b[:, 192:208].bitcast(dtypes.int8).cast(dtypes.float32).reshape(-1, 16, 1).expand(-1, 16, 16).reshape(-1, 256)
  return f16(208) * scales * q.reshape(-1, 256).cast(dtypes.float32)

def gguf_load(tensor:Union[Tensor, str, pathlib.Path]) -> tuple[dict, dict[str, Tensor]]:
  """A .gguf file's key-value metadata and its tensors (dequantized to float32 where quantized)."""
  t = _bytes_tensor(tensor)
  f = io.BufferedReader(TensorIO(t), 1 << 20)
  def unpack(fmt:str) -> Any: return struct.unpack("<" + fmt, f.read(struct.calcsize("<" + fmt)))[0]
  def string() -> str: return f.read(unpack("Q")).decode("utf-8")
  scalars = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
  def value(typ:int) -> Any:
    if typ == 8: return string()
    if typ == 9:
      item_type, count = unpack("i"), unpack("Q")
      return [value(item_type) for _ in range(count)]
    return unpack(scalars[typ])
  magic, version, n_tensors, n_kv = f.read(4), unpack("i"), unpack("q"), unpack("q")
  if magic != b"GGUF" or version not in (2, 3): raise ValueError("Invalid GGUF format!")
  kv = {}
  for _ in range(n_kv):
    key = string()
    kv[key] = value(unpack("i"))
  infos = [(string(), tuple(unpack("Q") for _ in range(unpack("I"))), unpack("i"), unpack("Q")) for _ in range(n_tensors)]
  data_start = round_up(f.tell(), kv.get("general.alignment", 32))
  return kv, {name: ggml_data_to_tensor(t[data_start + off:], prod(dims), typ).reshape(*reversed(dims)) for name, dims, typ, off in infos}
