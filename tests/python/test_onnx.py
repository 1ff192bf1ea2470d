# tinygrad.frontend.onnx (and tinygrad.nn.onnx): ONNX models from files, bytes and the onnx package's ModelProto, run
# by the C++ runner with the reference's call signature; bad input raises the reference's exceptions
import os, pathlib, pytest
import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.frontend.onnx import OnnxRunner, onnx_load

SUITE = pathlib.Path("/usr/share/libonnx-testdata/data/node")
needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason="onnx's backend test data (libonnx-testdata) is not installed")
onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper, TensorProto  # noqa: E402

def _conv_model(batch="N") -> "onnx.ModelProto":
  w = numpy_helper.from_array(np.arange(18, dtype=np.float32).reshape(2, 1, 3, 3) / 10, "w")
  nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
           helper.make_node("Relu", ["c"], ["r"]), helper.make_node("ReduceSum", ["r"], ["y"], keepdims=0, axes=[2, 3])]
  graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 1, 4, 4])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 2]),
                             helper.make_tensor_value_info("r", TensorProto.FLOAT, None)], [w])
  return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])

def _numpy_conv(x, w):
  xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
  out = np.zeros((x.shape[0], w.shape[0], 4, 4), np.float32)
  for i in range(4):
    for j in range(4): out[:, :, i, j] = np.einsum("nchw,ochw->no", xp[:, :, i:i+3, j:j+3], w)
  return out

def test_runs_from_a_file_bytes_and_onnx_modelproto(tmp_path):
  model = _conv_model()
  path = tmp_path / "conv.onnx"
  onnx.save(model, str(path))
  x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
  want_r = np.maximum(_numpy_conv(x, np.arange(18, dtype=np.float32).reshape(2, 1, 3, 3) / 10), 0)
  for source in (onnx_load(path), onnx_load(str(path)), onnx_load(path.read_bytes()), model, path,
                 onnx_load(Tensor(path.read_bytes()))):
    runner = OnnxRunner(source)
    out = runner({"x": x})
    assert list(out) == ["y", "r"]  # the graph's order
    np.testing.assert_allclose(out["r"].numpy(), want_r, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["y"].numpy(), want_r.sum((2, 3)), rtol=1e-5, atol=1e-4)
  m = onnx_load(path)
  assert m.graph.node[0].op_type == "Conv" and m.graph.node[0].name == "conv" and m.opset_import[0].version == 12
  assert [i.name for i in m.graph.input] == ["x"] and [i.name for i in m.graph.initializer] == ["w"]

def test_nn_onnx_is_the_same_runner():
  from tinygrad.nn import onnx as nn_onnx
  assert nn_onnx.OnnxRunner is OnnxRunner and nn_onnx.onnx_load is onnx_load

def test_inputs_and_outputs_dtypes_and_get_empty_input_data():
  runner = OnnxRunner(_conv_model())
  assert runner.graph_inputs["x"][0] == ("N", 1, 4, 4) and runner.graph_inputs["x"][1] == dtypes.float32
  out = runner({"x": [[[[1] * 4] * 4]]})  # a nested list (ints) is made a float tensor of the declared dtype
  assert out["y"].dtype == dtypes.float32 and out["y"].shape == (1, 2)
  empty = OnnxRunner(_conv_model(3)).get_empty_input_data()
  assert empty["x"].dtype == dtypes.float32 and empty["x"].shape == (3, 1, 4, 4)

def test_bad_input_raises_the_references_errors(tmp_path):
  runner = OnnxRunner(_conv_model())
  with pytest.raises(RuntimeError, match="Please provide input data for x"): runner({})
  with pytest.raises(RuntimeError, match=r"mismatch on dim=2\. Expected 4, received 5"): runner({"x": np.zeros((1, 1, 5, 4), np.float32)})
  with pytest.raises(RuntimeError, match="'x' has dtype dtypes.int, the model declares dtypes.float"):
    runner({"x": Tensor.zeros(1, 1, 4, 4, dtype=dtypes.int32)})
  bad = tmp_path / "bad.onnx"
  bad.write_bytes(b"\x08" + b"\xff" * 12)
  with pytest.raises(ValueError, match="varint"): onnx_load(bad)
  with pytest.raises(ValueError, match="not an ONNX model"): onnx_load(b"")
  node = helper.make_node("NoSuchOp", ["x"], ["y"], name="mystery")
  graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
  with pytest.raises(NotImplementedError, match="'NoSuchOp' \\(node 'mystery'\\) is not supported"):
    OnnxRunner(helper.make_model(graph))

@needs_suite
@pytest.mark.parametrize("name", ["test_gemm_default_single_elem_vector_bias", "test_resize_upsample_sizes_nearest",
                                  "test_maxpool_2d_pads", "test_layer_normalization_4d_axis1"])
def test_backend_cases(name):
  d = SUITE / name
  runner = OnnxRunner(d / "model.onnx")
  data = d / "test_data_set_0"
  inputs = {}
  names = list(runner.graph_inputs)
  for i, f in enumerate(sorted(data.glob("input_*.pb"))):
    t = onnx.load_tensor(str(f))
    inputs[t.name or names[i]] = numpy_helper.to_array(t)
  out = list(runner(inputs).values())
  for i, f in enumerate(sorted(data.glob("output_*.pb"))):
    want = numpy_helper.to_array(onnx.load_tensor(str(f)))
    np.testing.assert_allclose(out[i].numpy(), want, rtol=1e-3, atol=1e-6)
