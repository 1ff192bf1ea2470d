# tinygrad.codegen.lowerer: the lowerer is the engine's (src/tg/codegen/lowerer.h); get_contraction and
# get_contraction_with_reduce are the shape arithmetic it uses, over plain ints here
from __future__ import annotations
import itertools, operator
from tinygrad._unsupported import unsupported_function

def get_contraction(old_shape:tuple[int, ...], new_shape:tuple[int, ...]) -> list[list[int]]|None:
  """Which axes of old_shape merge into each axis of new_shape (None when new_shape is no merge of old_shape). An axis
  of size 1 in new_shape gets as few old axes as possible: the old 1s go to the axis after it."""
  acc_old, acc_new = list(itertools.accumulate(old_shape, operator.mul)), list(itertools.accumulate(new_shape, operator.mul))
  ends = []
  for acc in acc_new[:-1]:
    if acc == 1: ends.append(0)
    elif acc in acc_old: ends.append(acc_old.index(acc) + 1)
    else: return None
  if len(new_shape) and acc_new[-1] != 1 and acc_new[-1] not in acc_old: return None
  return [list(range(st, ed)) for st, ed in zip([0] + ends, ends + [len(old_shape)])]

def get_contraction_with_reduce(old_shape:tuple[int, ...], new_shape:tuple[int, ...], reduce_axis:tuple[int, ...]) -> list[list[int]]|None:
  """get_contraction, where every reduce axis of new_shape keeps at least one old axis: an empty one takes the last old
  axis of the next non-empty axis, which must then have size 1."""
  if (contraction := get_contraction(old_shape, new_shape)) is None: return None
  for i in range(len(contraction)):
    if i not in reduce_axis or contraction[i]: continue
    donor = next((j for j in range(i + 1, len(contraction)) if contraction[j]), None)
    if donor is None or new_shape[donor] != 1: return None  # nothing to take
    for j in range(donor, i, -1):  # shift one old axis down through the empty axes in between
      assert contraction[j], f"no old axis left to shift down to reduce axis {i}: {contraction}"
      contraction[j - 1], contraction[j] = contraction[j][:-1], contraction[j][-1:]
  return contraction

get_grouped_dims = unsupported_function("tinygrad.codegen.lowerer.get_grouped_dims", "the lowerer's launch dims are "
                                        "C++ (src/tg/codegen/lowerer.h) and not bound to Python")
