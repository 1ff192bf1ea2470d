// llama.cpp's greedy continuation of token ids, with the next-token probabilities of each step, as JSON: the peer the
// LLM tests compare with (tests/llm). llama.cpp comes from npm (tools/fetch_llama_cpp.sh installs it):
//   node tools/llama_cpp_eval.mjs LLAMA_CPP_DIR MODEL.gguf '[1, 2, 3]' N
//   -> [{"token": 75, "top": [[75, 0.27], [173, 0.05], ...]}, ...]   (N steps, the 5 likeliest tokens each)
import {pathToFileURL} from "node:url";
import path from "node:path";
const [dir, modelPath, ids, n] = [process.argv[2], process.argv[3], JSON.parse(process.argv[4]), parseInt(process.argv[5])];
const {getLlama} = await import(pathToFileURL(path.join(dir, "node_modules/node-llama-cpp/dist/index.js")).href);
const llama = await getLlama({gpu: false, logLevel: "error", build: "never"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: Math.min(model.trainContextSize, 4096), threads: 2});
const out = [];
for await (const r of context.getSequence().evaluateWithMetadata(ids, {probabilities: true}, {temperature: 0})) {
  out.push({token: r.token, top: [...r.probabilities.entries()].slice(0, 5)});
  if (out.length >= n) break;
}
console.log(JSON.stringify(out));
process.exit(0);
