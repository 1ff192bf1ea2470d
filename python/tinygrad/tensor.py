from __future__ import annotations
from tinygrad._C import Tensor  # noqa: F401
