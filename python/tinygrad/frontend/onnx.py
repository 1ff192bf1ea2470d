# tinygrad.frontend.onnx: the reference's ONNX frontend (extra/onnx.py of a tinygrad checkout) is not in tinygrad.cpp yet
from tinygrad._unsupported import unsupported_class, unsupported_function
_WHY = "the ONNX frontend is not in tinygrad.cpp yet"
OnnxRunner = unsupported_class("tinygrad.frontend.onnx.OnnxRunner", _WHY)
onnx_load = unsupported_function("tinygrad.frontend.onnx.onnx_load", _WHY)
