from __future__ import annotations
from tinygrad import _C
from tinygrad._C import UOp, Ops, UPat, PatternMatcher, graph_rewrite, ArgObject, print_uops, type_verify  # noqa: F401
from tinygrad.dtype import dtypes  # noqa: F401

class GroupOp:
  Unary, Binary, Ternary = frozenset(_C.ops_in("Unary")), frozenset(_C.ops_in("Binary")), frozenset(_C.ops_in("Ternary"))
  ALU = frozenset(_C.ops_in("ALU"))
  Irreducible, Movement = frozenset(_C.ops_in("Irreducible")), frozenset(_C.ops_in("Movement"))
  Buffer, Block = frozenset(_C.ops_in("Buffer")), frozenset(_C.ops_in("Block"))
  Commutative, Associative = frozenset(_C.ops_in("Commutative")), frozenset(_C.ops_in("Associative"))
  Idempotent, UnsafePad = frozenset(_C.ops_in("Idempotent")), frozenset(_C.ops_in("UnsafePad"))
  Meta, All = frozenset(_C.ops_in("Meta")), frozenset(_C.ops_in("All"))

def graph_rewrite_map(*args, **kwargs): raise NotImplementedError("graph_rewrite_map is not in tinygrad.cpp yet")
