# tinygrad.shape.view: Views live inside the engine's ShapeTrackers (src/tg/shape/view.h); the stride arithmetic
# over plain ints (strides_for_shape, merge_dims) is here as the reference has it
from __future__ import annotations
import itertools, operator
from dataclasses import dataclass
from typing import Optional

def canonicalize_strides(shape:tuple[int, ...], strides:tuple[int, ...]) -> tuple[int, ...]:
  return tuple(0 if s == 1 else st for s, st in zip(shape, strides))  # a dim of size 1 has stride 0

def strides_for_shape(shape:tuple[int, ...]) -> tuple[int, ...]:
  """The contiguous (row-major) strides of shape, canonicalized."""
  if not shape: return ()
  return canonicalize_strides(shape, tuple(itertools.accumulate(shape[:0:-1], operator.mul, initial=1))[::-1])

def merge_dims(shape:tuple[int, ...], strides:tuple[int, ...], mask:Optional[tuple[tuple[int, int], ...]]=None) -> tuple[tuple[int, int, int], ...]:
  """Merges the dims that address memory as one: a dim contiguous with the next, or following a dim of size 1 (or one
  masked to a single index). Each merged dim is (size, stride, size counting only the dims with a stride: the real
  size before any expand)."""
  if not shape: return ()
  assert len(shape) == len(strides) and (mask is None or len(shape) == len(mask))
  def single(i): return mask[i][1] - mask[i][0] == 1 if mask is not None else shape[i] == 1
  ret = [(shape[0], strides[0], shape[0] if strides[0] != 0 else 0)]
  absorb = single(0)  # the previous dim has one index: the next dim replaces its stride
  for i in range(1, len(shape)):
    s, st = shape[i], strides[i]
    if s == 1: continue  # a dim of size 1 changes nothing (and leaves `absorb` as it was)
    last_s, last_st, last_real = ret[-1]
    if absorb or last_st == s * st: ret[-1] = (last_s * s, st, s if absorb else last_real * s)
    else: ret.append((s, st, s))
    absorb = single(i)
  return tuple(ret)

@dataclass(frozen=True)
class View:
  """One view of a ShapeTracker (ShapeTracker.views), as the engine holds it: a record, read-only."""
  shape: tuple
  strides: tuple
  offset: int
  mask: Optional[tuple]
  contiguous: bool
  @staticmethod
  def create(*args, **kwargs):
    raise NotImplementedError("View.create: views are made by the engine's ShapeTrackers on tinygrad.cpp; use "
                              "ShapeTracker.from_shape and its movement ops")
