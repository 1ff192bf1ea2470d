# NOTE: in the reference, tinygrad.uop exports nothing; here `from tinygrad.uop import UOp, Ops` works too (the tutorial writes it)
from tinygrad.uop.ops import UOp, Ops, GroupOp, UPat, PatternMatcher, graph_rewrite  # noqa: F401
