// One ONNX model's inference in tinygrad.cpp (src/tg/onnx), for bench/bench_onnx.sh beside onnxruntime:
//   bench_onnx MODEL INPUT.bin N,C,H,W RUNS [OUTPUT.bin]
// INPUT.bin holds the float32 values of the model's first input. Prints one line of JSON: the model's load and the
// runner's construction (ms), the first inference (ms: graph building, kernel compiles from whatever caches exist,
// the run), then each TinyJit'ed run's ms after two warm-up runs (capture and first replay); writes the first output's
// float32 values to OUTPUT.bin.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tg/onnx/onnx.h"
#include "tg/tensor/jit.h"

using namespace tg;

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: bench_onnx MODEL INPUT.bin N,C,H,W RUNS [OUTPUT.bin]\n";
    return 2;
  }
  try {
    Shape shape;
    std::stringstream dims(argv[3]);
    for (std::string d; std::getline(dims, d, ',');) shape.push_back(std::stoll(d));
    std::vector<float> data(static_cast<size_t>(tg::prod(shape)));
    std::ifstream in(argv[2], std::ios::binary);
    in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
    TG_CHECK(in.gcount() == static_cast<std::streamsize>(data.size() * sizeof(float)), argv[2], " is not ",
             shape_str(shape), " float32");
    int64_t runs = std::stoll(argv[4]);

    auto t = std::chrono::steady_clock::now();
    onnx::OnnxRunner runner(onnx::onnx_load(argv[1]));
    double load_ms = ms_since(t);
    const std::string input = runner.graph_inputs().begin()->first, output = runner.graph_outputs().at(0);
    Tensor x(data, shape);
    x.realize();
    t = std::chrono::steady_clock::now();
    Tensor first = runner({{input, x}}).at(output).realize();
    std::vector<float> y = first.tolist<float>();
    double first_ms = ms_since(t);

    TinyJit<Tensor(const Tensor&)> jit([&](const Tensor& in) { return runner({{input, in}}).at(output).realize(); });
    std::vector<double> times;
    for (int64_t i = 0; i < runs + 2; i++) {
      Tensor xi(data, shape);
      xi.realize();
      t = std::chrono::steady_clock::now();
      Tensor out = jit(xi);
      out.data_bytes();  // the result on the host, as onnxruntime returns it
      if (i >= 2) times.push_back(ms_since(t));
    }
    if (argc > 5) {
      std::ofstream f(argv[5], std::ios::binary);
      f.write(reinterpret_cast<const char*>(y.data()), static_cast<std::streamsize>(y.size() * sizeof(float)));
    }
    std::cout << "{\"create_ms\": " << load_ms << ", \"first_ms\": " << first_ms << ", \"times\": [";
    for (size_t i = 0; i < times.size(); i++) std::cout << (i ? ", " : "") << times[i];
    std::cout << "], \"output_dims\": [";
    for (size_t i = 0; i < first.shape().size(); i++) std::cout << (i ? ", " : "") << first.shape()[i].as_int();
    std::cout << "]}\n";
  } catch (const std::exception& e) {
    std::cerr << "bench_onnx: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
