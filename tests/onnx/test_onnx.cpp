// The ONNX reader and runner: models written here byte by byte (a protobuf writer of a few lines), run and checked by
// hand; bad files and bad calls get clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "tg/onnx/onnx.h"
#include "tg/tensor/jit.h"

using namespace tg;
namespace fs = std::filesystem;

namespace {

// *** a protobuf writer: just enough to write ONNX messages ***
struct PB {
  std::string b;
  PB& varint(uint64_t v) {
    do {
      uint8_t byte = v & 0x7f;
      v >>= 7;
      b += static_cast<char>(byte | (v ? 0x80 : 0));
    } while (v);
    return *this;
  }
  PB& i(uint32_t field, int64_t v) { return varint(field << 3).varint(static_cast<uint64_t>(v)); }
  PB& s(uint32_t field, const std::string& v) { return varint(field << 3 | 2).varint(v.size()), b += v, *this; }
  PB& m(uint32_t field, const PB& v) { return s(field, v.b); }
  PB& f(uint32_t field, float v) {
    varint(field << 3 | 5);
    b.append(reinterpret_cast<const char*>(&v), 4);
    return *this;
  }
};

PB tensor_type(int32_t elem, const std::vector<std::variant<int64_t, std::string>>& dims) {
  PB shape;
  for (const auto& d : dims) {
    PB dim;
    if (const auto* v = std::get_if<int64_t>(&d))
      dim.i(1, *v);
    else
      dim.s(2, std::get<std::string>(d));
    shape.m(1, dim);
  }
  PB tensor;
  tensor.i(1, elem).m(2, shape);
  return PB().m(1, tensor);
}
PB value_info(const std::string& name, const PB& type) { return PB().s(1, name).m(2, type); }
PB float_tensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  PB t;
  for (int64_t d : dims) t.i(1, d);
  t.i(2, 1).s(8, name).s(9, std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  return t;
}
PB node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
        const std::string& name = "", const std::vector<PB>& attrs = {}) {
  PB n;
  for (const auto& x : in) n.s(1, x);
  for (const auto& x : out) n.s(2, x);
  if (!name.empty()) n.s(3, name);
  n.s(4, op);
  for (const PB& a : attrs) n.m(5, a);
  return n;
}
PB model(const PB& graph, int64_t opset = 17) { return PB().i(1, 8).m(7, graph).m(8, PB().s(1, "").i(2, opset)); }
std::span<const uint8_t> span(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

// y = relu(x + w) @ ... : an input (batch "N" x 3), an initializer and two nodes
PB small_graph() {
  PB g;
  g.m(1, node("Add", {"x", "w"}, {"s"}, "add0"))
      .m(1, node("Relu", {"s"}, {"y"}, "relu0"))
      .s(2, "small")
      .m(5, float_tensor("w", {3}, {1.0f, -2.0f, 0.5f}))
      .m(11, value_info("x", tensor_type(1, {std::string("N"), int64_t{3}})))
      .m(12, value_info("y", tensor_type(1, {std::string("N"), int64_t{3}})));
  return g;
}

template <class E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Onnx, RunsAHandWrittenModel) {
  std::string bytes = model(small_graph()).b;
  onnx::ModelProto m = onnx::onnx_load_bytes(span(bytes));
  EXPECT_EQ(m.ir_version, 8);
  EXPECT_EQ(m.opset_version(), 17);
  ASSERT_EQ(m.graph.node.size(), 2u);
  EXPECT_EQ(m.graph.node[0].op_type, "Add");
  EXPECT_EQ(m.graph.node[1].input, std::vector<std::string>{"s"});
  onnx::OnnxRunner run(m);
  ASSERT_EQ(run.graph_inputs().size(), 1u);  // the initializer is not an input
  EXPECT_EQ(std::get<std::string>(run.graph_inputs().at("x").shape[0]), "N");
  auto out = run({{"x", Tensor({1.0f, 1.0f, 1.0f, -1.0f, 3.0f, -1.0f}).reshape({2, 3})}});
  EXPECT_EQ(out.at("y").tolist<float>(), (std::vector<float>{2.0f, 0.0f, 1.5f, 0.0f, 1.0f, 0.0f}));
  // another batch size binds N anew
  auto out1 = run({{"x", Tensor({0.0f, 0.0f, 0.0f}).reshape({1, 3})}});
  EXPECT_EQ(out1.at("y").tolist<float>(), (std::vector<float>{1.0f, 0.0f, 0.5f}));
}

TEST(Onnx, AFileIsMappedAndExternalDataIsReadFromBesideIt) {
  fs::path dir = fs::temp_directory_path() / cat("tg_onnx_", ::getpid());
  fs::create_directories(dir);
  std::vector<float> w{0.25f, 0.5f, 4.0f};
  {
    std::ofstream f(dir / "weights.bin", std::ios::binary);
    f << "PAD";  // the tensor starts at an odd offset
    f.write(reinterpret_cast<const char*>(w.data()), 12);
  }
  auto entry = [](const std::string& k, const std::string& v) { return PB().s(1, k).s(2, v); };
  PB ext;
  ext.i(1, 3).i(2, 1).s(8, "w").m(13, entry("location", "weights.bin")).m(13, entry("offset", "3"));
  ext.m(13, entry("length", "12")).i(14, 1);
  PB g;
  g.m(1, node("Mul", {"x", "w"}, {"y"})).m(5, ext);
  g.m(11, value_info("x", tensor_type(1, {int64_t{3}}))).m(12, value_info("y", tensor_type(1, {int64_t{3}})));
  {
    std::ofstream f(dir / "model.onnx", std::ios::binary);
    f << model(g).b;
  }
  onnx::OnnxRunner run(onnx::onnx_load((dir / "model.onnx").string()));
  EXPECT_EQ(run({{"x", Tensor({2.0f, 2.0f, 2.0f})}}).at("y").tolist<float>(), (std::vector<float>{0.5f, 1.0f, 8.0f}));
  // the same model from bytes has no folder to find weights.bin in
  std::string bytes = model(g).b;
  EXPECT_NE(error_of<ValueError>([&] {
              onnx::OnnxRunner r(onnx::onnx_load_bytes(span(bytes)));
            }).find("the model was read from bytes"),
            std::string::npos);
  // an offset past the file's end names the file and the range
  fs::resize_file(dir / "weights.bin", 10);
  std::string e = error_of<ValueError>([&] { onnx::OnnxRunner r(onnx::onnx_load((dir / "model.onnx").string())); });
  EXPECT_NE(e.find("needs bytes [3, 15)"), std::string::npos) << e;
  fs::remove_all(dir);
}

TEST(Onnx, BadFilesAreValueErrorsNamingTheOffset) {
  std::string good = model(small_graph()).b;
  // every truncation of a good file is either a model (a prefix can end between fields) or a ValueError
  for (size_t n = 0; n < good.size(); n++) {
    try {
      onnx::OnnxRunner r(onnx::onnx_load_bytes(span(good.substr(0, n))));
    } catch (const Error&) {
    }
  }
  EXPECT_NE(error_of<ValueError>([&] {
              onnx::onnx_load_bytes(span(good.substr(0, good.size() / 2)));
            }).find("at byte offset"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([] { onnx::onnx_load_bytes(span("")); }).find("has no graph: not an ONNX model"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([] { onnx::onnx_load_bytes(span("\x89PNG\r\n\x1a\n")); }).find("onnx: bad"),
            std::string::npos);
  std::string long_varint = "\x08" + std::string(11, '\xff');
  EXPECT_NE(error_of<ValueError>([&] { onnx::onnx_load_bytes(span(long_varint)); }).find("varint"), std::string::npos);
  // types nested past 64 levels (a sequence of a sequence of ...) are refused, not recursed into
  PB type = tensor_type(1, {int64_t{1}});
  for (int i = 0; i < 100; i++) type = PB().m(4, PB().m(1, type));
  PB g;
  g.m(11, value_info("x", type));
  EXPECT_NE(error_of<ValueError>([&] { onnx::onnx_load_bytes(span(model(g).b)); }).find("nested deeper than 64"),
            std::string::npos);
  EXPECT_NE(error_of<Error>([] { onnx::onnx_load("/nonexistent/model.onnx"); }).find("can't open"), std::string::npos);
  // dims whose product overflows
  PB huge;
  huge.i(1, int64_t{1} << 40).i(1, int64_t{1} << 40).i(2, 1).s(8, "h");
  PB g3;
  g3.m(5, huge).m(1, node("Relu", {"h"}, {"y"}));
  EXPECT_NE(error_of<ValueError>([&] {
              onnx::OnnxRunner r(onnx::onnx_load_bytes(span(model(g3).b)));
            }).find("has too many elements"),
            std::string::npos);
  // a 0 among dims whose product overflows: empty, but its strides would overflow (fuzz.onnx)
  PB zero;
  zero.i(1, 0).i(1, int64_t{1} << 40).i(1, int64_t{1} << 40).i(2, 1).s(8, "z");
  PB g5;
  g5.m(5, zero).m(1, node("Relu", {"z"}, {"y"}));
  EXPECT_NE(error_of<ValueError>([&] {
              onnx::OnnxRunner r(onnx::onnx_load_bytes(span(model(g5).b)));
            }).find("has too many elements"),
            std::string::npos);
  // an initializer whose data doesn't fill its shape
  PB bad;
  bad.m(5, float_tensor("w", {4}, {1.0f, 2.0f})).m(1, node("Relu", {"w"}, {"y"}));
  bad.m(12, value_info("y", tensor_type(1, {int64_t{4}})));
  EXPECT_NE(error_of<ValueError>([&] {
              onnx::OnnxRunner r(onnx::onnx_load_bytes(span(model(bad).b)));
            }).find("'w' of shape (4,) dtypes.float needs 16 bytes, its raw_data has 8"),
            std::string::npos);
  // a float that can't be the tensor's integer dtype: NaN in an int64 tensor's double_data (fuzz.onnx found it, a
  // conversion undefined in C++; tests/fuzz/corpus/onnx/nan_double_into_int64.onnx)
  double q = std::nan("");
  PB nan_t;
  nan_t.i(1, 1).i(2, 7).s(8, "n").s(10, std::string(reinterpret_cast<const char*>(&q), sizeof(q)));
  PB g4;
  g4.m(5, nan_t).m(1, node("Relu", {"n"}, {"y"}));
  EXPECT_NE(error_of<ValueError>([&] {
              onnx::OnnxRunner r(onnx::onnx_load_bytes(span(model(g4).b)));
            }).find("the tensor value nan doesn't fit its dtype dtypes.long"),
            std::string::npos);
}

TEST(Onnx, UnsupportedOpsAndMissingOrWrongInputsSayWhich) {
  PB g = small_graph();
  g.m(1, node("Frobnicate", {"y"}, {"z"}, "frob7"));
  std::string e = error_of<NotImplementedError>([&] { onnx::OnnxRunner r(onnx::onnx_load_bytes(span(model(g).b))); });
  EXPECT_NE(e.find("op 'Frobnicate' (node 'frob7') is not supported"), std::string::npos) << e;

  onnx::OnnxRunner run(onnx::onnx_load_bytes(span(model(small_graph()).b)));
  EXPECT_NE(error_of<Error>([&] { run({}); }).find("please provide input data for 'x'"), std::string::npos);
  e = error_of<Error>([&] { run({{"x", Tensor::zeros({2, 4})}}); });
  EXPECT_NE(e.find("'x' has mismatch on dim=1. Expected 3, received 4."), std::string::npos) << e;
  e = error_of<Error>([&] { run({{"x", Tensor::zeros({3})}}); });
  EXPECT_NE(e.find("'x' has 1 dims (3,), expected 2"), std::string::npos) << e;
  // an input of another dtype names both
  e = error_of<Error>([&] { run({{"x", Tensor({1, 1, 1}).reshape({1, 3})}}); });
  EXPECT_NE(e.find("'x' has dtype dtypes.int, the model declares dtypes.float"), std::string::npos) << e;

  // an attribute of the wrong type names the op, the node and both types
  PB g2;
  g2.m(1, node("Flatten", {"x"}, {"y"}, "flat", {PB().s(1, "axis").f(2, 1.0f).i(20, 1)}));
  g2.m(11, value_info("x", tensor_type(1, {int64_t{2}, int64_t{3}})));
  g2.m(12, value_info("y", tensor_type(1, {int64_t{2}, int64_t{3}})));
  onnx::OnnxRunner r2(onnx::onnx_load_bytes(span(model(g2).b)));
  e = error_of<Error>([&] { r2({{"x", Tensor::zeros({2, 3})}}); });
  EXPECT_NE(e.find("Flatten (node 'flat'): attribute 'axis' is FLOAT, expected INT"), std::string::npos) << e;
}

TEST(Onnx, OpsPickTheirOpsetVersion) {
  // Slice before opset 10 takes its starts and ends as attributes, from 10 as inputs
  auto ints_attr = [](const std::string& name, const std::vector<int64_t>& v) {
    PB a;
    a.s(1, name).i(20, 7);
    for (int64_t x : v) a.i(8, x);
    return a;
  };
  PB g;
  g.m(1, node("Slice", {"x"}, {"y"}, "s", {ints_attr("starts", {1}), ints_attr("ends", {3})}));
  g.m(11, value_info("x", tensor_type(1, {int64_t{4}}))).m(12, value_info("y", tensor_type(1, {int64_t{2}})));
  onnx::OnnxRunner run(onnx::onnx_load_bytes(span(model(g, 9).b)));
  EXPECT_EQ(run.opset_version(), 9);
  EXPECT_EQ(run({{"x", Tensor({1.0f, 2.0f, 3.0f, 4.0f})}}).at("y").tolist<float>(), (std::vector<float>{2.0f, 3.0f}));
}

TEST(Onnx, AModelRunsUnderTinyJit) {
  onnx::OnnxRunner run(onnx::onnx_load_bytes(span(model(small_graph()).b)));
  TinyJit<Tensor(const Tensor&)> jit([&](const Tensor& x) { return run({{"x", x}}).at("y").realize(); });
  for (int i = 0; i < 4; i++) {
    Tensor x = Tensor::full({2, 3}, ConstValue(static_cast<double>(i)), {.dtype = dtypes::float32}).contiguous();
    x.realize();
    std::vector<float> y = jit(x).tolist<float>();
    EXPECT_EQ(y[0], static_cast<float>(i) + 1.0f);
    EXPECT_EQ(y[2], static_cast<float>(i) + 0.5f);
  }
}

}  // namespace
