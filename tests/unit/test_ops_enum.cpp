// the Ops enum and GroupOp sets against the reference's printout (tests/data/enums/ops_enum.out)
#include <gtest/gtest.h>
#include <tinygrad/tinygrad.h>

#include <fstream>
#include <sstream>

using namespace tg;

namespace {

std::vector<std::string> read_lines(const std::string& rel) {
  std::ifstream f(std::string(TG_TEST_DATA) + "/" + rel);
  EXPECT_TRUE(f.good()) << "missing test data " << rel;
  std::vector<std::string> out;
  for (std::string line; std::getline(f, line);) out.push_back(line);
  return out;
}

// "['EXP2', 'LOG2']" in the reference's order (by value), from an OpSet
std::string names_of(OpSet s) {
  std::vector<std::string> out;
  for (int i = 1; i < NUM_OPS; i++)
    if (s.has(static_cast<Ops>(i))) out.push_back(py_str_repr(op_name(static_cast<Ops>(i))));
  return "[" + join(out, ", ") + "]";
}

}  // namespace

TEST(OpsEnum, NamesAndNumbers) {
  auto lines = read_lines("enums/ops_enum.out");
  ASSERT_GE(lines.size(), 86u);
  EXPECT_EQ(lines[1], "count=84 min=1 max=84");
  // the reference's 84, then ours: CUSTOM_GRAD (a value with a hand-written derivative)
  constexpr int tinygrad_ops = 84;
  EXPECT_EQ(NUM_OPS - 1, tinygrad_ops + 1);
  EXPECT_EQ(op_repr(Ops::CUSTOM_GRAD), "<Ops.CUSTOM_GRAD: 85>");
  // line 0: [('SINK', 1), ('CONTIGUOUS', 2), ...]
  std::vector<std::string> pairs;
  for (int i = 1; i <= tinygrad_ops; i++)
    pairs.push_back(cat("(", py_str_repr(op_name(static_cast<Ops>(i))), ", ", i, ")"));
  EXPECT_EQ("[" + join(pairs, ", ") + "]", lines[0]);
  // lines 2..85: "%3d NAME"
  for (int i = 1; i <= tinygrad_ops; i++) {
    std::istringstream row(lines[static_cast<size_t>(i) + 1]);
    int value;
    std::string name;
    row >> value >> name;
    Ops o = static_cast<Ops>(value);
    EXPECT_EQ(op_name(o), name);
    EXPECT_EQ(value, i);
  }
}

TEST(OpsEnum, StrAndRepr) {
  EXPECT_EQ(cat(Ops::ADD), "Ops.ADD");
  EXPECT_EQ(op_repr(Ops::ADD), "<Ops.ADD: 51>");
  EXPECT_EQ(op_repr(Ops::COPY), "<Ops.COPY: 7>");
  EXPECT_EQ(op_repr(Ops::BUFFER), "<Ops.BUFFER: 25>");
  EXPECT_EQ(op_repr(Ops::STORE), "<Ops.STORE: 48>");
  EXPECT_EQ(op_repr(Ops::CONST), "<Ops.CONST: 78>");
  EXPECT_EQ(op_repr(Ops::FUSE), "<Ops.FUSE: 84>");
}

TEST(OpsEnum, GroupOps) {
  const std::pair<const char*, OpSet> groups[] = {
      {"Unary", GroupOp::Unary},
      {"Binary", GroupOp::Binary},
      {"Ternary", GroupOp::Ternary},
      {"ALU", GroupOp::ALU},
      {"Irreducible", GroupOp::Irreducible},
      {"Movement", GroupOp::Movement},
      {"Buffer", GroupOp::Buffer},
      {"Block", GroupOp::Block},
      {"Commutative", GroupOp::Commutative},
      {"Associative", GroupOp::Associative},
      {"Idempotent", GroupOp::Idempotent},
      {"UnsafePad", GroupOp::UnsafePad},
      {"Meta", GroupOp::Meta},
  };
  auto lines = read_lines("enums/ops_enum.out");
  int found = 0;
  for (auto& [name, set] : groups) {
    std::string prefix = cat("GroupOp.", name, " = ");
    for (auto& l : lines)
      if (l.rfind(prefix, 0) == 0) {
        EXPECT_EQ(names_of(set), l.substr(prefix.size())) << name;
        found++;
      }
  }
  EXPECT_EQ(found, 13);
}

TEST(OpsEnum, OpSetAlgebra) {
  EXPECT_EQ(GroupOp::All.size(), 85);  // tinygrad's 84 and CUSTOM_GRAD
  EXPECT_FALSE(GroupOp::All.has(Ops::NONE_));
  EXPECT_TRUE(GroupOp::All.has(Ops::FUSE));
  EXPECT_EQ(GroupOp::ALU, GroupOp::Unary | GroupOp::Binary | GroupOp::Ternary);
  EXPECT_TRUE(GroupOp::ALU.contains(GroupOp::Binary));
  EXPECT_FALSE(GroupOp::Binary.contains(GroupOp::ALU));
  OpSet no_threefry = GroupOp::Binary - Ops::THREEFRY;
  EXPECT_EQ(no_threefry.size(), 15);
  EXPECT_FALSE(no_threefry.has(Ops::THREEFRY));
  EXPECT_EQ(OpSet(Ops::CONST).first(), Ops::CONST);  // above 64: the second word
  EXPECT_EQ(OpSet({Ops::SINK, Ops::CONST}).first(), Ops::SINK);
  EXPECT_TRUE(OpSet().empty());
  static_assert(GroupOp::Commutative.has(Ops::ADD) && !GroupOp::Commutative.has(Ops::SUB));  // constexpr sets
}
