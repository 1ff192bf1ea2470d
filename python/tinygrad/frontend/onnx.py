# tinygrad.frontend.onnx: ONNX models run by the C++ runner (src/tg/onnx): the reference's OnnxRunner and onnx_load
# (its extra/onnx.py and extra/onnx_parser.py; tinygrad/nn/onnx.py in the newest tinygrad), same names and calls:
#   runner = OnnxRunner(onnx_load("model.onnx"))      # or OnnxRunner("model.onnx"), as the newest tinygrad
#   outputs = runner({"input": Tensor.rand(1, 3, 224, 224)})   # {name: Tensor}
# The model is read by our own protobuf reader; the onnx package is not needed (an onnx.ModelProto is accepted too).
from __future__ import annotations
import os, pathlib
from typing import Any
from tinygrad._C import onnx as _onnx
from tinygrad.tensor import Tensor
from tinygrad.helpers import getenv

ModelProto = _onnx.ModelProto

def onnx_load(fn:Tensor|str|pathlib.Path|bytes, load_external_data:bool=True) -> ModelProto:
  """Reads an ONNX model: a path (mapped; external data is read from beside it), bytes, or a uint8 Tensor of them."""
  if isinstance(fn, (bytes, bytearray, memoryview)): return _onnx.onnx_load_bytes(bytes(fn))
  if isinstance(fn, Tensor): return _onnx.onnx_load_bytes(bytes(fn.data()))
  if hasattr(fn, "SerializeToString"): return _onnx.onnx_load_bytes(fn.SerializeToString())  # an onnx.ModelProto
  return _onnx.onnx_load(os.fspath(fn))

debug = int(getenv("DEBUGONNX", 0))

class OnnxRunner:
  """Runs an ONNX model's graph as Tensor calls; the outputs are lazy Tensors."""
  def __init__(self, model:ModelProto|Tensor|str|pathlib.Path|bytes, device:str|None=None):
    if not isinstance(model, ModelProto): model = onnx_load(model)
    self.model = model
    self._runner = _onnx.OnnxRunner(model, device)
    self.graph_inputs = self._runner.graph_inputs   # name -> (shape, dtype, is_optional, is_sequence)
    self.graph_outputs = tuple(self._runner.graph_outputs)
    self.opset_version = self._runner.opset_version
    self.is_training = self._runner.is_training

  def _parse_input(self, name:str, value:Any):
    _, dtype, is_optional, is_sequence = self.graph_inputs[name]
    if value is None and is_optional: return None
    if is_sequence:
      if not isinstance(value, (list, tuple)): raise RuntimeError(f"{name} received {value}, expected a sequence type")
      return [v if isinstance(v, Tensor) else Tensor(v, dtype=dtype) for v in value]
    return value if isinstance(value, Tensor) else Tensor(value, dtype=dtype)

  def get_empty_input_data(self, device:str|None=None) -> dict[str, Tensor]:
    return {name:Tensor.empty(*shape, device=device, dtype=dtype) for name, (shape, dtype, _, _) in self.graph_inputs.items()}

  def __call__(self, inputs:dict[str, Any], debug=debug) -> dict[str, Tensor|list[Tensor]|None]:
    for name in self.graph_inputs:
      if name not in inputs: raise RuntimeError(f"Please provide input data for {name}")
    out = self._runner.run({name:self._parse_input(name, inputs[name]) for name in self.graph_inputs}, debug)
    return {name:out[name] for name in self.graph_outputs}  # in the graph's order, as the reference's dict
