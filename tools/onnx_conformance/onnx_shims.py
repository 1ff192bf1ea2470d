# A pytest plugin (-p onnx_shims) that lets the reference's test/external/external_test_onnx_backend.py run unchanged
# on Debian 12's onnx 1.12 with numpy 1.24. Three shims, each for something newer code expects:
#  1. numpy 1.24 removed the `np.object` alias that onnx 1.12's mapping tables and runner still name;
#  2. onnx 1.12's Runner.test_suite sorts TestCase classes, which Python 3.11 can't order: sort them by name;
#  3. the FLOAT8 / INT4 TensorProto names and helper.tensor_dtype_to_np_dtype of newer onnx releases, which newer
#     harness code reads (absent names only; nothing that exists is changed).
import unittest, warnings
import numpy as np

with warnings.catch_warnings():  # numpy 1.24 warns when the removed name is looked up
  warnings.simplefilter("ignore", FutureWarning)
  if not hasattr(np, "object"): np.object = object  # type: ignore[attr-defined]

import onnx
from onnx import helper, mapping
from onnx.backend.test.runner import Runner

def _test_suite(self) -> unittest.TestSuite:
  suite = unittest.TestSuite()
  for case in sorted(self.test_cases.values(), key=lambda c: c.__name__):
    suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
  return suite
Runner.test_suite = property(_test_suite)  # type: ignore[assignment]

for _i, _name in enumerate(("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4"), start=17):
  if not hasattr(onnx.TensorProto, _name): setattr(onnx.TensorProto, _name, _i)
if not hasattr(helper, "tensor_dtype_to_np_dtype"):
  helper.tensor_dtype_to_np_dtype = lambda t: mapping.TENSOR_TYPE_TO_NP_TYPE[t]  # type: ignore[attr-defined]
