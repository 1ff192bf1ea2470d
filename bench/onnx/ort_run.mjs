// onnxruntime (CPU, its Node.js binding) on one model and input, for bench/bench_onnx.sh:
//   node ort_run.mjs MODEL INPUT.bin N,C,H,W RUNS THREADS [OUTPUT.bin]
// INPUT.bin holds float32 values (the tensor named by the model's first input). Prints one line of JSON: the session
// creation and first run (ms), then each timed run's ms; writes the first output's float32 values to OUTPUT.bin.
import fs from "node:fs";
import ort from "onnxruntime-node";

const [model, input, dims, runs = "10", threads = "2", output] = process.argv.slice(2);
const shape = dims.split(",").map(Number);
const buf = fs.readFileSync(input);
const data = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
let t0 = performance.now();
const session = await ort.InferenceSession.create(model, {
  executionProviders: ["cpu"], intraOpNumThreads: Number(threads), interOpNumThreads: 1, graphOptimizationLevel: "all",
});
const create_ms = performance.now() - t0;
const feeds = { [session.inputNames[0]]: new ort.Tensor("float32", data, shape) };
t0 = performance.now();
let out = await session.run(feeds);
const first_ms = performance.now() - t0;
const times = [];
for (let i = 0; i < Number(runs); i++) {
  t0 = performance.now();
  out = await session.run(feeds);
  times.push(performance.now() - t0);
}
const y = out[session.outputNames[0]];
if (output) fs.writeFileSync(output, Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
console.log(JSON.stringify({ create_ms, first_ms, times, output_dims: y.dims }));
