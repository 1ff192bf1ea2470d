# tinygrad.uop.spec: the verifier (src/tg/uop/spec.h)
from tinygrad._C import type_verify  # noqa: F401
