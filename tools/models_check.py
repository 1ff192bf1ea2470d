#!/usr/bin/env python3
"""Runs tinygrad's own model code (extra/models/*.py, examples/hlb_cifar10.py), unchanged, on the reference tinygrad
and on our package, and compares the outputs and the number of kernels each ran.

Each model runs in its own process, once with the reference's checkout on PYTHONPATH and once with ours (the
checkout then comes after our package on sys.path, so `extra` and `examples` are the reference's files and `tinygrad`
is ours). Models are built in small configurations; their weights come from numpy (a seed and each state-dict key)
and are loaded through nn.state.load_state_dict, so both engines compute with the same numbers. The kernel count is
GlobalCounters.kernel_count over the forward's realize (for hlb_cifar10: its first SpeedyResNet training step, not
jitted; for hlb_cifar10_jit: the capturing call). The hlb_cifar10 steps realize the gradients before the optimizer's
step: see GradsFirst below.

  python3 tools/models_check.py REF_CHECKOUT [--ours build/python] [--all] [-k MODEL ...] [--json FILE]

Exits 1 when a model fails on ours, its outputs differ past the tolerance, or ours runs more kernels.
"""
import argparse, json, os, subprocess, sys, tempfile, time

# runs one model in a fresh interpreter: argv = ref checkout, model name, output .npz; prints one line RESULT {json}
WORKER = r"""
import ast, json, os, sys, time, zlib
sys.path.append(sys.argv[1])                     # after PYTHONPATH: `extra`/`examples` from the checkout
import numpy as np
name, out_path = sys.argv[2], sys.argv[3]
if name.startswith("hlb_cifar10"):  # read when the example is imported. STEPS=4 takes OneCycleLR to its peak lr at
  # step 2 (step 1's is max_lr/1e6); the jitted run's 3 steps stay on the ramp of 1000 (a peak-lr step then a 3rd
  # diverges, and amplifies float rounding past any tolerance)
  os.environ.setdefault("BS", "16"); os.environ.setdefault("STEPS", "1000" if name.endswith("_jit") else "4")
from tinygrad import Tensor, dtypes, GlobalCounters
from tinygrad.nn.state import get_state_dict, load_state_dict

def weights(model, seed=1234):
  # deterministic values for each state-dict entry, from numpy only: the same numbers in both engines
  sd = {}
  for k, v in get_state_dict(model).items():
    rng = np.random.default_rng([seed, zlib.crc32(k.encode())])
    shape = tuple(v.shape)
    if dtypes.is_int(v.dtype) or v.dtype == dtypes.bool: arr = np.zeros(shape, np.int32)
    elif "running_var" in k: arr = rng.uniform(0.5, 1.5, shape)
    elif "running_mean" in k: arr = rng.normal(0, 0.1, shape)
    elif len(shape) >= 2: arr = rng.normal(0, 1, shape) / np.sqrt(max(1, int(np.prod(shape)) // shape[0]))
    elif k.endswith("bias") or k.endswith(".1"): arr = rng.normal(0, 0.1, shape)
    else: arr = 1 + rng.normal(0, 0.1, shape)
    sd[k] = Tensor(arr.astype(np.float32 if dtypes.is_float(v.dtype) else np.int32), dtype=v.dtype)
  load_state_dict(model, sd, verbose=False)
  Tensor.realize(*get_state_dict(model).values())

def inp(shape, seed, lo=None, hi=None):
  rng = np.random.default_rng(seed)
  if lo is not None: return Tensor(rng.integers(lo, hi, shape).astype(np.int32)).realize()
  return Tensor(rng.normal(0, 1, shape).astype(np.float32)).realize()

def forward(model, fn, *args, **kwargs):
  Tensor.training = False
  weights(model)
  GlobalCounters.reset()
  out = fn(*args, **kwargs).realize()
  return {"out": out}

def run_bert():
  from extra.models.bert import BertForQuestionAnswering
  m = BertForQuestionAnswering(hidden_size=32, intermediate_size=64, max_position_embeddings=16, num_attention_heads=2,
                               num_hidden_layers=2, type_vocab_size=2, vocab_size=50)
  ids, types = inp((2, 8), 1, 0, 50), inp((2, 8), 2, 0, 2)
  mask = Tensor(np.array([[1]*8, [1]*5 + [0]*3], np.float32)).realize()
  return forward(m, m, ids, mask, types)

def run_resnet():
  from extra.models.resnet import ResNet
  m = ResNet(18, num_classes=10)
  return forward(m, m, inp((2, 3, 32, 32), 1))

def run_resnet50():
  from extra.models.resnet import ResNet
  m = ResNet(50, num_classes=10)
  return forward(m, m, inp((1, 3, 32, 32), 1))

def run_efficientnet():
  from extra.models.efficientnet import EfficientNet
  m = EfficientNet(-1, classes=10)
  return forward(m, m.forward, inp((2, 3, 32, 32), 1))

def run_convnext():
  from extra.models.convnext import ConvNeXt
  m = ConvNeXt(depths=[1, 1, 1, 1], dims=[8, 16, 32, 64], num_classes=10)
  return forward(m, m, inp((2, 3, 32, 32), 1))

def run_vit():
  from extra.models.vit import ViT
  m = ViT(layers=2, embed_dim=32, num_heads=2)     # 197 positions: 224x224 images in 16x16 patches
  return forward(m, m.forward, inp((1, 3, 224, 224), 1))

def run_transformer():
  from extra.models.transformer import Transformer
  m = Transformer(syms=10, maxlen=8, layers=2, embed_dim=32, num_heads=2, ff_dim=64)
  return forward(m, m.forward, inp((2, 8), 1, 0, 10))

def run_unet():
  from extra.models.unet import UNetModel
  m = UNetModel(adm_in_ch=None, in_ch=4, out_ch=4, model_ch=32, attention_resolutions=[1, 2], num_res_blocks=1,
                channel_mult=[1, 2], transformer_depth=[1, 1], ctx_dim=32, n_heads=2)
  return forward(m, m, inp((1, 4, 8, 8), 1), Tensor([500.0]).realize(), inp((1, 4, 32), 2))

def decode(model, step, n=8):
  # greedy decoding of n tokens after a 3-token prompt, as the examples do: the prompt at start_pos 0, then one token
  # at a time at a bound start_pos (TinyJit'ed: run, capture, then replays). The kernels are the prompt's
  weights(model)
  toks, start_pos, kernels = [5, 17, 3], 0, None
  for _ in range(n):
    GlobalCounters.reset()
    toks.append(step(toks, start_pos))
    if kernels is None: kernels = GlobalCounters.kernel_count
    start_pos = len(toks) - 1
  return {"tokens": Tensor(np.array(toks, np.int32))}, kernels

def run_gpt2():  # examples/gpt2.py's Transformer; the decode passes start_pos as a bound Variable to its TinyJit
  from tinygrad import Variable
  from examples.gpt2 import Transformer, MAX_CONTEXT
  m = Transformer(dim=32, n_heads=4, n_layers=2, norm_eps=1e-5, vocab_size=97)
  def step(toks, sp):
    tokens = Variable("tokens", 0, 97).bind(toks[sp]) if len(toks[sp:]) == 1 else Tensor([toks[sp:]])
    return m(tokens, Variable("start_pos", 1 if sp else 0, MAX_CONTEXT).bind(sp), 0.0).tolist()[0]
  return decode(m, step)

def run_llama():  # extra/models/llama.py's Transformer (grouped KV heads); its decode binds start_pos for its TinyJit
  from extra.models.llama import Transformer
  m = Transformer(dim=32, hidden_dim=64, n_heads=4, n_layers=2, norm_eps=1e-5, vocab_size=97, n_kv_heads=2,
                  max_context=64)
  return decode(m, lambda toks, sp: m(Tensor([toks[sp:]]), sp, 0.0).item())

def run_bert_pretraining():
  from extra.models.bert import BertForPretraining
  m = BertForPretraining(hidden_size=32, intermediate_size=64, max_position_embeddings=16, num_attention_heads=2,
                         num_hidden_layers=1, type_vocab_size=2, vocab_size=50)
  ids, types, pos = inp((2, 8), 1, 0, 50), inp((2, 8), 2, 0, 2), inp((2, 3), 3, 0, 8)
  mask = Tensor(np.array([[1]*8, [1]*6 + [0]*2], np.float32)).realize()
  Tensor.training = False
  weights(m)
  GlobalCounters.reset()
  lm, seq = m(ids, mask, pos, types)
  Tensor.realize(lm, seq)
  return {"prediction_logits": lm, "seq_relationship_logits": seq}

def run_bert_train():
  # test/models/test_real_world.py's test_bert: the tiny BERT's pretraining step with LAMB under TinyJit, three steps
  # (run, capture, replay) on a batch of get_fake_data_bert's shapes (its own tensors are Tensor.empty: whatever the
  # memory held), with weights() (so no two parameters are one buffer, which the reference makes of parameters
  # created alike); the capture's kernels
  from extra.models.bert import BertForPretraining
  from tinygrad import TinyJit
  from tinygrad.nn import optim
  from tinygrad.nn.state import get_parameters
  np.random.seed(2002)
  m = BertForPretraining(attention_probs_dropout_prob=0.0, hidden_dropout_prob=0.0, vocab_size=30522, type_vocab_size=2,
                         max_position_embeddings=512, hidden_size=128, intermediate_size=512, num_attention_heads=2,
                         num_hidden_layers=2)
  weights(m)
  opt = optim.LAMB(get_parameters(m))
  @TinyJit
  def train(input_ids, segment_ids, attention_mask, masked_positions, masked_lm_ids, masked_lm_weights, next_sentence_labels):
    lm_logits, seq_relationship_logits = m(input_ids, attention_mask, masked_positions, segment_ids)
    loss = m.loss(lm_logits, seq_relationship_logits, masked_lm_ids, masked_lm_weights, next_sentence_labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.realize()
  BS, rng = 4, np.random.default_rng(5)
  mask = (np.arange(512)[None] < rng.integers(200, 512, (BS, 1))).astype(np.int32)
  args = [Tensor(a).realize() for a in (rng.integers(0, 30522, (BS, 512)).astype(np.int32),          # input_ids
                                        rng.integers(0, 2, (BS, 512)).astype(np.int32),              # segment_ids
                                        mask,                                                        # input_mask
                                        rng.integers(0, 200, (BS, 76)).astype(np.int32),             # masked_lm_positions
                                        rng.integers(0, 30522, (BS, 76)).astype(np.int32),           # masked_lm_ids
                                        (rng.random((BS, 76)) < 0.8).astype(np.float32),             # masked_lm_weights
                                        rng.integers(0, 2, (BS, 1)).astype(np.int32))]               # next_sentence_labels
  losses = []
  with Tensor.train():
    for i in range(3):
      if i == 1: GlobalCounters.reset()
      losses.append(train(*args).numpy())
      if i == 1: kernels = GlobalCounters.kernel_count
  # (the reference's Embedding keeps the arange it compares indices with as a member after a forward: not a weight)
  sd = {k: v for k, v in get_state_dict(m).items() if not k.endswith(".arange")}
  return {"loss": Tensor(np.stack(losses)), **sd}, kernels

def run_resnext():
  from extra.models.resnet import ResNeXt50_32X4D
  m = ResNeXt50_32X4D(num_classes=10)
  return forward(m, m, inp((1, 3, 32, 32), 1))

def run_efficientnet_b0():
  from extra.models.efficientnet import EfficientNet
  m = EfficientNet(0, classes=10)
  return forward(m, m.forward, inp((1, 3, 32, 32), 1))

def run_unet_linear():
  from extra.models.unet import UNetModel
  m = UNetModel(adm_in_ch=8, in_ch=4, out_ch=4, model_ch=32, attention_resolutions=[2], num_res_blocks=1,
                channel_mult=[1, 2], transformer_depth=[1, 1], ctx_dim=[16], use_linear=True, d_head=16)
  return forward(m, m, inp((1, 4, 8, 8), 1), Tensor([10.0]).realize(), inp((1, 3, 16), 2), y=inp((1, 8), 3))

def hlb_setup():
  import examples.hlb_cifar10 as hlb
  from tinygrad.nn import optim
  # the training step's pieces live inside train_cifar(): take them from its source, unchanged
  src = open(hlb.__file__).read()
  fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "train_cifar")
  names = lambda s: {t.id for n in ast.walk(s) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
  start = next(i for i, s in enumerate(fn.body) if "params_dict" in names(s))
  end = next(i for i, s in enumerate(fn.body) if "lr_sched_non_bias" in names(s))
  keep = [s for s in fn.body if isinstance(s, ast.FunctionDef) and s.name in ("cross_entropy", "train_step")]
  code = compile(ast.Module(body=keep + fn.body[start:end+1], type_ignores=[]), hlb.__file__, "exec")
  W = Tensor(np.zeros((12, 3, 2, 2), np.float32), requires_grad=False)  # the whitening conv; weights() fills it
  model = hlb.SpeedyResNet(W)
  weights(model)
  ns = dict(vars(hlb), model=model)
  exec(code, ns)
  rng = np.random.default_rng(7)
  def batch():
    X = Tensor(rng.normal(0, 1, (hlb.BS, 3, 32, 32)).astype(np.float32)).realize()
    return X, Tensor(np.eye(10, dtype=np.float32)[rng.integers(0, 10, hlb.BS)]).realize()
  def step(f, X, Y, wrap=False):
    opt = optim.OptimizerGroup(ns["opt_bias"], ns["opt_non_bias"])  # a new group each step, as the example's loop
    return f(model, GradsFirst(opt) if wrap else opt, [ns["lr_sched_bias"], ns["lr_sched_non_bias"]], X, Y)
  return model, ns, batch, step

class GradsFirst:
  # the optimizer, with the gradients realized before its step. The reference schedules gradients and updates together
  # and may run an update before a kernel that still reads the old weight (a BatchNorm bias here): its weights after a
  # step with a real learning rate are then not the math's; ours orders those reads first. With the gradients realized
  # first both engines compute the same step
  def __init__(self, opt): self.opt = opt
  def zero_grad(self): self.opt.zero_grad()
  def step(self):
    Tensor.realize(*[p.grad for p in self.opt.params if p.grad is not None])
    self.opt.step()

def run_hlb_cifar10():
  # two steps with GradsFirst (the momentum carries step 1's gradients into step 2, at the peak lr; step 1's lr is
  # max_lr/1e6); step 1's kernels are counted
  model, ns, batch, step = hlb_setup()
  losses = []
  with Tensor.train():
    for i in range(2):
      X, Y = batch()
      if i == 0: GlobalCounters.reset()
      losses.append(step(ns["train_step"], X, Y, wrap=True).numpy())
      if i == 0: kernels = GlobalCounters.kernel_count
  return {"loss": Tensor(np.stack(losses)), **get_state_dict(model)}, kernels

def run_hlb_cifar10_grads():  # the step's loss and backward alone (cross_entropy from the example), no optimizer
  model, ns, batch, step = hlb_setup()
  X, Y = batch()
  GlobalCounters.reset()
  with Tensor.train():
    loss = ns["cross_entropy"](model(X), Y, reduction='none', label_smoothing=0.2).sum()
    loss.backward()
  params = {k: v for k, v in get_state_dict(model).items() if v.grad is not None}
  Tensor.realize(loss, *[v.grad for v in params.values()])
  return {"loss": loss, **{k + ".grad": v.grad for k, v in params.items()}}

def run_hlb_cifar10_jit():  # three steps under TinyJit (run, capture, replay) with GradsFirst; the capture's kernels
  from tinygrad import TinyJit
  model, ns, batch, step = hlb_setup()
  jit, losses = TinyJit(ns["train_step"]), []
  with Tensor.train():
    for i in range(3):
      X, Y = batch()
      if i == 1: GlobalCounters.reset()
      losses.append(step(jit, X, Y, wrap=True).numpy())
      if i == 1: kernels = GlobalCounters.kernel_count
  return {"loss": Tensor(np.stack(losses)), **get_state_dict(model)}, kernels

t0 = time.monotonic()
outs = globals()["run_" + name]()  # the outputs, or (outputs, the kernels of the part that counts)
outs, kernels = outs if isinstance(outs, tuple) else (outs, GlobalCounters.kernel_count)
np.savez(out_path, **{k: v.numpy() for k, v in outs.items()})
print("\nRESULT " + json.dumps({"kernels": kernels, "secs": round(time.monotonic() - t0, 2)}), flush=True)
"""

MODELS = ["bert", "resnet", "efficientnet", "convnext", "vit", "transformer", "unet", "hlb_cifar10", "gpt2", "llama"]
# more configurations of the same files (Bottleneck, grouped convs, all of b0, the pretraining heads, a UNet with
# linear projections and a label embedding, the training step replayed by TinyJit): run them with -k or --all
EXTRA_MODELS = ["resnet50", "resnext", "efficientnet_b0", "bert_pretraining", "bert_train", "unet_linear",
                "hlb_cifar10_grads", "hlb_cifar10_jit"]
# float16 models (the UNet computes in half where the device supports it) get a looser tolerance
TOLERANCE = {"unet": (5e-2, 5e-2), "unet_linear": (5e-2, 5e-2)}


def run_side(python, pkg_path, ref, name, timeout, env_extra):
  out = tempfile.NamedTemporaryFile(suffix=".npz", delete=False).name
  env = dict(os.environ, PYTHONPATH=pkg_path, PYTHONDONTWRITEBYTECODE="1", **env_extra)
  t0 = time.monotonic()
  try:
    p = subprocess.run([python, "-c", WORKER, ref, name, out], cwd=tempfile.gettempdir(), env=env, capture_output=True,
                       text=True, timeout=timeout)
  except subprocess.TimeoutExpired:
    return {"error": f"timeout after {timeout} s"}, None
  lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
  if p.returncode != 0 or not lines:
    tb = [l for l in p.stderr.splitlines() if l.strip()]
    why = f"killed by signal {-p.returncode}" if p.returncode < 0 else (tb[-1][:300] if tb else f"exit {p.returncode}")
    return {"error": why, "stderr": p.stderr[-3000:], "secs": round(time.monotonic() - t0, 2)}, None
  import numpy as np
  with np.load(out) as z: arrs = {k: z[k] for k in z.files}
  os.unlink(out)
  return json.loads(lines[-1][len("RESULT "):]), arrs


def compare(name, ref_arrs, our_arrs):
  import numpy as np
  rtol, atol = TOLERANCE.get(name, (1e-3, 1e-3))
  worst, bad = 0.0, []
  for k, r in ref_arrs.items():
    o = our_arrs.get(k)
    if o is None or o.shape != r.shape: bad.append(f"{k}: shape {None if o is None else o.shape} vs {r.shape}"); continue
    r64, o64 = r.astype(np.float64), o.astype(np.float64)
    worst = max(worst, float(np.nanmax(np.abs(r64 - o64))) if r.size else 0.0)
    if not np.allclose(o64, r64, rtol=rtol, atol=atol, equal_nan=True): bad.append(k)
  return worst, bad


def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("ref", help="a tinygrad checkout (the reference is commit 24e7aed74b)")
  ap.add_argument("--ours", default=os.path.join(os.path.dirname(__file__), "..", "build", "python"),
                  help="the directory holding our tinygrad package (default build/python)")
  ap.add_argument("--python", default="/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable,
                  help="the interpreter with numpy (default Debian's /usr/bin/python3)")
  ap.add_argument("-k", action="append", default=[], help=f"run only this model (repeatable); also {EXTRA_MODELS}")
  ap.add_argument("--all", action="store_true", help="also run the extra configurations")
  ap.add_argument("--timeout", type=int, default=900, help="seconds per model and side")
  ap.add_argument("--json", help="write the results here")
  ap.add_argument("-v", "--verbose", action="store_true", help="print the stderr of failing runs")
  a = ap.parse_args()
  try: import numpy  # noqa: F401  (the comparison needs it: re-run under the interpreter that has it)
  except ImportError:
    if os.path.realpath(sys.executable) == os.path.realpath(a.python): raise
    os.execv(a.python, [a.python, *sys.argv])

  ref, ours = os.path.abspath(a.ref), os.path.abspath(a.ours)
  if not os.path.isdir(os.path.join(ref, "extra", "models")): sys.exit(f"models_check: no extra/models in {ref}")
  if not os.path.isfile(os.path.join(ours, "tinygrad", "__init__.py")):
    sys.exit(f"models_check: no tinygrad package in {ours} (build it: cmake --build build)")
  names = a.k or (MODELS + EXTRA_MODELS if a.all else MODELS)
  env = {"CPU": "1"}

  rows, failed = {}, False
  print(f"{'model':<14} {'max abs diff':>12} {'kernels ref':>11} {'ours':>6} {'secs ref':>9} {'ours':>7}  status")
  for name in names:
    r, ref_arrs = run_side(a.python, ref, ref, name, a.timeout, env)
    o, our_arrs = run_side(a.python, ours, ref, name, a.timeout, env)
    row = {"reference": r, "ours": o}
    if ref_arrs is None: status = f"reference failed: {r['error']}"
    elif our_arrs is None: status, failed = f"FAIL (ours): {o['error']}", True
    else:
      worst, bad = compare(name, ref_arrs, our_arrs)
      row.update(max_abs_diff=worst, mismatched=bad)
      if bad: status, failed = f"MISMATCH in {len(bad)} output(s): {', '.join(bad[:4])}", True
      elif o["kernels"] > r["kernels"]: status, failed = "ok, more kernels", True
      else: status = "ok"
    row["status"] = status
    rows[name] = row
    diff = f"{row['max_abs_diff']:.3g}" if "max_abs_diff" in row else "-"
    print(f"{name:<14} {diff:>12} {r.get('kernels', '-'):>11} {o.get('kernels', '-'):>6} {r.get('secs', '-'):>9} "
          f"{o.get('secs', '-'):>7}  {status}", flush=True)
    if a.verbose and "stderr" in o: print(o["stderr"], file=sys.stderr)
  if a.json: json.dump(rows, open(a.json, "w"), indent=1, sort_keys=True)
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
