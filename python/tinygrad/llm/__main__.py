# python3 -m tinygrad.llm: tinygrad-llm's flags and output (tools/tinygrad_llm.cpp): the completion streamed whole
# characters at a time, then the prefill and decode speeds on stderr; --json prints one JSON object instead
import argparse, codecs, json, sys, time
from tinygrad.llm import Model, Sampler

def main(argv=None) -> int:
  ap = argparse.ArgumentParser(prog="python3 -m tinygrad.llm", description="a GGUF language model's completion of a prompt")
  ap.add_argument("--model", required=True)
  ap.add_argument("--prompt", default="")
  ap.add_argument("-n", type=int, default=32)
  ap.add_argument("--temperature", type=float, default=0.0)
  ap.add_argument("--top-k", type=int, default=0)
  ap.add_argument("--top-p", type=float, default=1.0)
  ap.add_argument("--min-p", type=float, default=0.0)
  ap.add_argument("--repeat-penalty", type=float, default=1.0)
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--context", type=int, default=0)
  ap.add_argument("--device", default=None)
  ap.add_argument("--json", action="store_true")
  ap.add_argument("--warmup", action="store_true", help="generate a few tokens first, untimed")
  a = ap.parse_args(argv)
  if a.n < 0: ap.error("-n must be >= 0")
  try:
    m = Model(a.model, a.device, a.context)
    sampler = Sampler(a.temperature, a.top_k, a.top_p, a.min_p, a.repeat_penalty, 64, a.seed)
    prompt = m.encode(a.prompt)
    if a.warmup: m.generate(prompt, min(a.n, 3), a.temperature, a.top_k, a.top_p, a.min_p, a.repeat_penalty, a.seed)
    t0 = time.perf_counter()
    logits = m.forward(prompt, 0).tolist()
    t1 = time.perf_counter()
    out, history = [], list(prompt)
    stream = codecs.getincrementaldecoder("utf-8")(errors="replace")  # whole characters only
    for i in range(a.n):
      nxt = sampler.sample(logits, history)
      out.append(nxt)
      history.append(nxt)
      if nxt == m.eos: break
      if not a.json: print(stream.decode(m.decode_bytes([nxt]) if i else m.decode_bytes(out)), end="", flush=True)
      if i + 1 == a.n or len(history) >= m.context: break
      logits = m.forward([nxt], len(history) - 1).tolist()
    t2 = time.perf_counter()
  except (RuntimeError, ValueError, OSError) as e:
    print(f"tinygrad-llm: {e}", file=sys.stderr)
    return 1
  prefill_tok_s = len(prompt) / (t1 - t0)
  decode_tok_s = len(out) / (t2 - t1) if out else 0.0
  if a.json:
    print(json.dumps({"prompt_tokens": prompt, "tokens": out, "text": m.decode(out), "prefill_tok_s": prefill_tok_s,
                      "decode_tok_s": decode_tok_s}))
  else:
    print(stream.decode(b"", final=True))
    print(f"prefill: {len(prompt)} tokens, {prefill_tok_s:.2f} tok/s; decode: {len(out)} tokens, {decode_tok_s:.2f} tok/s",
          file=sys.stderr)
  return 0

if __name__ == "__main__":
  sys.exit(main())
