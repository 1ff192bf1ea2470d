# tinygrad.uop.spec: the verifier (src/tg/uop/spec.h); type_verify checks uops against the engine's spec. The spec's
# rule sets themselves are PatternMatcher<bool>s in C++, not Python matchers.
from tinygrad._C import type_verify  # noqa: F401
from tinygrad._unsupported import UnsupportedValue
_WHY = "the spec's rule sets are C++ (src/tg/uop/spec.cpp); type_verify(uops) checks uops against them"
spec = UnsupportedValue("tinygrad.uop.spec.spec", _WHY)
ast_spec = UnsupportedValue("tinygrad.uop.spec.ast_spec", _WHY)
