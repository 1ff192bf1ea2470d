#!/usr/bin/env python3
"""The table of bench/bench_onnx.sh: tinygrad.cpp and onnxruntime on the same models and inputs.
  python3 bench/bench_onnx.py DIR MODEL...   (DIR holds MODEL.{ours,ort,ours_cold}.json and MODEL.{ours,ort}.bin)"""
import json, pathlib, statistics, sys
import numpy as np

def main(d:pathlib.Path, models:list[str]):
  print(f"| model | input | onnxruntime (ms) | ours (ms) | ours / ort speed | first inference: ort / ours, empty caches (ms) | max abs diff |")
  print("|---|---|---|---|---|---|---|")
  for m in models:
    ort, ours, cold = (json.loads((d / f"{m}.{s}.json").read_text()) for s in ("ort", "ours", "ours_cold"))
    a, b = np.fromfile(d / f"{m}.ort.bin", np.float32), np.fromfile(d / f"{m}.ours.bin", np.float32)
    diff = float(np.abs(a - b).max()) if a.shape == b.shape else float("nan")
    t_ort, t_ours = statistics.median(ort["times"]), statistics.median(ours["times"])
    dims = "x".join((d / f"{m}.shape").read_text().strip().split(","))
    print(f"| {m} | {dims} | {t_ort:.2f} | {t_ours:.2f} | {t_ort / t_ours:.2f}x | "
          f"{ort['create_ms'] + ort['first_ms']:.0f} / {cold['create_ms'] + cold['first_ms']:.0f} | {diff:.2g} |")

if __name__ == "__main__": main(pathlib.Path(sys.argv[1]), sys.argv[2:])
