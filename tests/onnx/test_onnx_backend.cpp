// onnx's backend test suite (Debian's libonnx-testdata: onnx 1.12's node, simple and PyTorch-made models, each with
// its inputs and expected outputs as TensorProto files) run through our reader and runner, in C++ alone.
//
// tests/data/onnx/backend_pass.txt lists the tests that must pass (a regression fails); any other test runs too and
// is skipped with the reason when it fails, and says so when it passes, so the list can grow. Outputs are compared as
// onnx's runner compares them: the same dtype and shape, values within rtol 1e-3 and atol 1e-7, NaN equal to NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "tg/onnx/onnx.h"

namespace fs = std::filesystem;
using namespace tg;

namespace {

const char* const kSuiteDir = "/usr/share/libonnx-testdata/data";
const char* const kFolders[] = {"node", "simple", "pytorch-operator", "pytorch-converted"};

std::vector<std::string> suite_tests() {
  std::vector<std::string> out;
  for (const char* folder : kFolders) {
    fs::path d = fs::path(kSuiteDir) / folder;
    if (!fs::is_directory(d)) continue;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(d))
      if (fs::exists(e.path() / "model.onnx"))
        names.push_back(std::string(folder) + "/" + e.path().filename().string());
    std::sort(names.begin(), names.end());
    out.insert(out.end(), names.begin(), names.end());
  }
  if (out.empty()) out.push_back("none");  // the suite is not installed: one test that skips and says so
  return out;
}

const std::set<std::string>& expected_pass() {
  static const std::set<std::string> s = [] {
    std::set<std::string> out;
    std::ifstream f(std::string(TG_TEST_DATA) + "/onnx/backend_pass.txt");
    for (std::string line; std::getline(f, line);)
      if (!line.empty() && line[0] != '#') out.insert(line);
    return out;
  }();
  return s;
}

// the first difference between a result and the expected tensor, or "" when they agree
std::string compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) return cat("dtype ", got.dtype(), ", expected ", want.dtype());
  if (got.shape() != want.shape()) return cat("shape ", shape_str(got.shape()), ", expected ", shape_str(want.shape()));
  if (want.numel() == 0) return "";
  std::vector<double> g = got.cast(dtypes::float64).tolist<double>(), w = want.cast(dtypes::float64).tolist<double>();
  for (size_t i = 0; i < g.size(); i++) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (std::isinf(w[i]) && g[i] == w[i]) continue;
    if (!(std::abs(g[i] - w[i]) <= 1e-7 + 1e-3 * std::abs(w[i])))
      return cat("element ", i, " is ", g[i], ", expected ", w[i]);
  }
  return "";
}

// runs one test of the suite; "" when every data set's outputs match
std::string run_suite_test(const std::string& name) {
  fs::path dir = fs::path(kSuiteDir) / name;
  onnx::ModelProto model = onnx::onnx_load((dir / "model.onnx").string());
  onnx::OnnxRunner runner(model, {.device = "CPU"});
  std::vector<std::string> inputs;
  for (const auto& v : model.graph.input)
    if (runner.graph_inputs().count(v.name)) inputs.push_back(v.name);
  for (int set = 0; fs::is_directory(dir / cat("test_data_set_", set)); set++) {
    fs::path data = dir / cat("test_data_set_", set);
    std::map<std::string, onnx::Value> feed;
    for (size_t i = 0; fs::exists(data / cat("input_", i, ".pb")); i++) {
      auto [t, src] = onnx::load_tensor_proto((data / cat("input_", i, ".pb")).string());
      std::string key = !t.name.empty() && runner.graph_inputs().count(t.name) ? t.name
                        : i < inputs.size()                                    ? inputs[i]
                                                                               : cat("input_", i);
      feed[key] = onnx::buffer_parse(t, src, "CPU");
    }
    std::map<std::string, onnx::Value> out = runner.run(feed, 0);
    for (size_t i = 0; i < runner.graph_outputs().size(); i++) {
      fs::path f = data / cat("output_", i, ".pb");
      if (!fs::exists(f)) return cat("data set ", set, " has no ", f.filename().string());
      auto [t, src] = onnx::load_tensor_proto(f.string());
      const std::string& oname = runner.graph_outputs()[i];
      const Tensor* got = std::get_if<Tensor>(&out.at(oname));
      if (got == nullptr) return cat("output ", oname, " is not a tensor");
      std::string diff = compare(*got, onnx::buffer_parse(t, src, "CPU"));
      if (!diff.empty()) return cat("data set ", set, ", output ", py_str_repr(oname), ": ", diff);
    }
  }
  return "";
}

class OnnxBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxBackend, Runs) {
  const std::string& name = GetParam();
  if (name == "none") GTEST_SKIP() << "onnx's backend test data is not installed (Debian's libonnx-testdata)";
  bool must = expected_pass().count(name) != 0;
  std::string failure;
  try {
    failure = run_suite_test(name);
  } catch (const std::exception& e) {
    failure = cat("raised: ", e.what());
  }
  if (must) {
    EXPECT_EQ(failure, "") << name << " is in backend_pass.txt";
  } else if (failure.empty()) {
    std::cout << "[ NEWPASS  ] " << name << " passes; add it to tests/data/onnx/backend_pass.txt\n";
  } else {
    GTEST_SKIP() << failure;
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Suite, OnnxBackend, ::testing::ValuesIn(suite_tests()), test_name);

}  // namespace
