// llama.cpp as the LLM tests' peer (tests/llm), on a GGUF file, printing JSON. llama.cpp comes from npm
// (tools/fetch_llama_cpp.sh installs it into LLAMA_CPP_DIR):
//   node tools/llama_cpp_eval.mjs LLAMA_CPP_DIR MODEL.gguf greedy '[1, 2, 3]' N
//     -> [{"token": 75, "top": [[75, 0.27], [173, 0.05], ...]}, ...]   N greedy steps, the 5 likeliest tokens each
//   node tools/llama_cpp_eval.mjs LLAMA_CPP_DIR MODEL.gguf tokenize '["text", ...]'      (or @FILE holding the JSON)
//     -> [[ids of text], ...]                                           no BOS, special tokens as plain text
import {pathToFileURL} from "node:url";
import path from "node:path";
import fs from "node:fs";
const [dir, modelPath, mode, rawArg, n] = process.argv.slice(2);
const arg = rawArg.startsWith("@") ? fs.readFileSync(rawArg.slice(1), "utf8") : rawArg;  // @file: the JSON in a file
const {getLlama} = await import(pathToFileURL(path.join(dir, "node_modules/node-llama-cpp/dist/index.js")).href);
const llama = await getLlama({gpu: false, logLevel: "error", build: "never"});
if (mode === "tokenize") {
  const model = await llama.loadModel({modelPath, vocabOnly: true});
  console.log(JSON.stringify(JSON.parse(arg).map((text) => [...model.tokenize(text, false)])));
} else if (mode === "greedy") {
  const model = await llama.loadModel({modelPath});
  const context = await model.createContext({contextSize: Math.min(model.trainContextSize, 4096), threads: 2});
  const out = [];
  const steps = context.getSequence().evaluateWithMetadata(JSON.parse(arg), {probabilities: true}, {temperature: 0});
  for await (const r of steps) {
    out.push({token: r.token, top: [...r.probabilities.entries()].slice(0, 5)});
    if (out.length >= parseInt(n)) break;
  }
  console.log(JSON.stringify(out));
} else {
  console.error(`unknown mode ${mode}: greedy or tokenize`);
  process.exit(2);
}
process.exit(0);
