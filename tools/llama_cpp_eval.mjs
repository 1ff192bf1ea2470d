// llama.cpp as the LLM tests' peer (tests/llm), on a GGUF file, printing JSON. llama.cpp comes from npm
// (tools/fetch_llama_cpp.sh installs it into LLAMA_CPP_DIR):
//   node tools/llama_cpp_eval.mjs LLAMA_CPP_DIR MODEL.gguf greedy '[1, 2, 3]' N
//     -> [{"token": 75, "top": [[75, 0.27], [173, 0.05], ...]}, ...]   N greedy steps, the 5 likeliest tokens each
//   node tools/llama_cpp_eval.mjs LLAMA_CPP_DIR MODEL.gguf tokenize '["text", ...]'      (or @FILE holding the JSON)
//     -> [[ids of text], ...]                                           no BOS, special tokens as plain text
//   node tools/llama_cpp_eval.mjs LLAMA_CPP_DIR MODEL.gguf bench '[1, 2, 3]' N
//     -> [{"prompt_tokens", "prefill_s", "decode_tokens", "decode_s"}]   the prompt's prefill, then N greedy tokens
import {pathToFileURL} from "node:url";
import path from "node:path";
import fs from "node:fs";
const [dir, modelPath, mode, rawArg, n] = process.argv.slice(2);
const arg = rawArg.startsWith("@") ? fs.readFileSync(rawArg.slice(1), "utf8") : rawArg;  // @file: the JSON in a file
// the output flushed before process.exit: a write to a pipe is asynchronous past its 64 KiB buffer
const print = (s) => new Promise((done) => process.stdout.write(s + "\n", done));
const {getLlama} = await import(pathToFileURL(path.join(dir, "node_modules/node-llama-cpp/dist/index.js")).href);
const llama = await getLlama({gpu: false, logLevel: "error", build: "never"});
if (mode === "tokenize") {
  const model = await llama.loadModel({modelPath, vocabOnly: true});
  await print(JSON.stringify(JSON.parse(arg).map((text) => [...model.tokenize(text, false)])));
} else if (mode === "greedy") {
  const model = await llama.loadModel({modelPath});
  const context = await model.createContext({contextSize: Math.min(model.trainContextSize, 4096), threads: 2});
  const out = [];
  const steps = context.getSequence().evaluateWithMetadata(JSON.parse(arg), {probabilities: true}, {temperature: 0});
  for await (const r of steps) {
    out.push({token: r.token, top: [...r.probabilities.entries()].slice(0, 5)});
    if (out.length >= parseInt(n)) break;
  }
  await print(JSON.stringify(out));
} else if (mode === "bench") {
  // prefill the prompt ids, then decode n greedy tokens: the seconds of each, measured here
  const model = await llama.loadModel({modelPath});
  const context = await model.createContext({contextSize: Math.min(model.trainContextSize, 4096), threads: 2});
  const ids = JSON.parse(arg);
  const t0 = performance.now();
  let t1 = 0, count = 0;
  for await (const r of context.getSequence().evaluateWithMetadata(ids, {}, {temperature: 0})) {
    if (count === 0) t1 = performance.now();  // the first token comes after the prefill
    if (++count > parseInt(n)) break;
  }
  const t2 = performance.now();
  await print(JSON.stringify([{prompt_tokens: ids.length, prefill_s: (t1 - t0) / 1000, decode_tokens: count - 1,
                               decode_s: (t2 - t1) / 1000}]));
} else {
  console.error(`unknown mode ${mode}: greedy, tokenize or bench`);
  process.exit(2);
}
process.exit(0);
