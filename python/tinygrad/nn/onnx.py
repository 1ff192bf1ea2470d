# tinygrad.nn.onnx: where the newest tinygrad keeps its ONNX runner; the same C++ runner as tinygrad.frontend.onnx
from tinygrad.frontend.onnx import OnnxRunner, onnx_load, ModelProto  # noqa: F401
