#!/usr/bin/env python3
# Writes the torch_load fixtures of tests/nn/test_torch_load.cpp and tests/python/test_torch_load.py with PyTorch
# (they were made with Debian's python3-torch 1.13): checkpoint.pth (every storage dtype, views with an offset,
# strides and an expanded dim, a Parameter, a nested checkpoint), checkpoint_deflated.pth (the same archive rewritten
# by Python's zipfile with ZIP_DEFLATED) and legacy.pth (the pre-1.6 format, which torch_load refuses).
#   cd tests/data/nn && python3 make_checkpoints.py
import torch, zipfile, io, collections
torch.manual_seed(0)
base = torch.arange(24, dtype=torch.float32) * 0.5
sd = collections.OrderedDict()
sd["f32"] = base.reshape(2, 3, 4)
sd["f16"] = (torch.arange(6, dtype=torch.float32) / 4).to(torch.float16).reshape(3, 2)
sd["bf16"] = (torch.arange(4, dtype=torch.float32) - 1.5).to(torch.bfloat16)
sd["f64"] = torch.arange(5, dtype=torch.float64) / 3
sd["i64"] = torch.arange(-3, 3, dtype=torch.int64).reshape(2, 3)
sd["i32"] = torch.tensor([7, -8, 9], dtype=torch.int32)
sd["i16"] = torch.tensor([-300, 300], dtype=torch.int16)
sd["i8"] = torch.tensor([-5, 5], dtype=torch.int8)
sd["u8"] = torch.tensor([0, 128, 255], dtype=torch.uint8)
sd["b"] = torch.tensor([True, False, True])
sd["transposed"] = base.reshape(4, 6).t()            # stride (1, 6): not contiguous
sd["sliced"] = base[5:11].reshape(2, 3)              # a storage offset of 5, shared with f32
sd["expanded"] = torch.tensor([1.0, 2.0]).reshape(2, 1).expand(2, 3)  # stride (1, 0)
sd["scalar"] = torch.tensor(3.25)
sd["empty"] = torch.zeros(0, 4)
sd["param"] = torch.nn.Parameter(torch.ones(2, 2) * 1.5)
ck = {"model": sd, "epoch": 3, "note": "tinygrad.cpp fixture", "lr": 0.125, "hist": [torch.tensor([1, 2]), torch.tensor([3.0])]}
torch.save(ck, "checkpoint.pth")
# the same archive, deflated by Python's zipfile (torch stores entries uncompressed)
with zipfile.ZipFile("checkpoint.pth") as zi, zipfile.ZipFile("checkpoint_deflated.pth", "w", zipfile.ZIP_DEFLATED) as zo:
  for info in zi.infolist(): zo.writestr(info.filename, zi.read(info.filename))
torch.save({"w": torch.ones(2)}, "legacy.pth", _use_new_zipfile_serialization=False)
print(torch.__version__)
