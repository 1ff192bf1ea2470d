// The DISK device (tinygrad's ops_disk.py and its test_disk_tensor.py): a file as a tensor. Views of it (shrink,
// reshape, bitcast) are byte ranges of the mapping; a copy to a device reads just that range; assign and setitem write
// the file; it runs no kernels. These run on every device: DEV=... is where the bytes are copied to.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "error_of.h"
#include "kernel_count.h"
#include "tg/engine/realize.h"
#include "tg/runtime/buffers.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;
using tg::test::error_of;
using tg::test::kernels_run_by;

namespace {

struct DiskTensor : ::testing::Test {
  void SetUp() override {
    Device::DEFAULT.reset();
    dir = std::filesystem::temp_directory_path() / ("tg_disk_" + std::to_string(::getpid()) + "_" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string file(const std::string& name, const std::vector<uint8_t>& bytes) const {
    std::string p = (dir / name).string();
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return p;
  }
  std::vector<uint8_t> read(const std::string& p) const {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  static std::vector<uint8_t> iota_bytes(size_t n) {
    std::vector<uint8_t> b(n);
    for (size_t i = 0; i < n; i++) b[i] = static_cast<uint8_t>(i);
    return b;
  }
  std::filesystem::path dir;
};

}  // namespace

TEST_F(DiskTensor, EmptyMakesNoFileUntilUsed) {
  std::string p = (dir / "empty").string();
  Tensor t = Tensor::empty({100, 100}, {.device = "disk:" + p});
  EXPECT_EQ(t.device(), "DISK:" + p);  // the prefix canonicalized, the path kept as written
  EXPECT_FALSE(std::filesystem::exists(p));
}

TEST_F(DiskTensor, ReadARowAsUint8) {
  std::string p = file("simple", iota_bytes(256));
  Tensor t = Tensor::empty({16, 16}, {.device = "disk:" + p, .dtype = dtypes::uint8});
  std::vector<uint8_t> want(16);
  std::iota(want.begin(), want.end(), uint8_t(16));
  EXPECT_EQ(t[1].to(Device::DEFAULT.str()).tolist<uint8_t>(), want);
  EXPECT_EQ(t[1].tolist<uint8_t>(), want);  // read straight off the disk too
}

TEST_F(DiskTensor, BitcastOfARowAndRowOfABitcast) {
  std::vector<uint8_t> bytes = iota_bytes(256);
  bytes.insert(bytes.end(), bytes.begin(), bytes.end());
  std::string p = file("bitcast", bytes);
  Tensor t = Tensor::empty({16, 32}, {.device = "disk:" + p, .dtype = dtypes::uint8});
  std::vector<uint16_t> want;
  for (int x = 32; x < 64; x += 2) want.push_back(static_cast<uint16_t>((x + 1) * 256 + x));
  EXPECT_EQ(t[1].bitcast(dtypes::uint16).to(Device::DEFAULT.str()).tolist<uint16_t>(), want);
  EXPECT_EQ(t.bitcast(dtypes::uint16)[1].to(Device::DEFAULT.str()).tolist<uint16_t>(), want);
  EXPECT_EQ(t.bitcast(dtypes::uint16).shape(), (Shape{16, 16}));
}

TEST_F(DiskTensor, BitcastOfAShrinkAndOffsets) {
  std::string p = file("bitcast_view", iota_bytes(14));
  Tensor t = Tensor::empty({3}, {.device = "disk:" + p, .dtype = dtypes::uint32}).shrink({{0, 2}});
  Tensor r = t.bitcast(dtypes::uint16).to("CPU") + 1;
  EXPECT_EQ(r.tolist<uint16_t>(), (std::vector<uint16_t>{0x0101, 0x0303, 0x0505, 0x0707}));
  std::vector<uint8_t> big = iota_bytes(256 * 1024);
  std::string q = file("offset", big);
  for (int64_t off : {314, 991, 2048, 4096}) {
    Tensor d = Tensor::empty({256 * 1024}, {.device = "disk:" + q, .dtype = dtypes::uint8}).shrink({{off, 256 * 1024}});
    Tensor on_dev = d.to(Device::DEFAULT.str()).realize();
    std::vector<uint8_t> got = on_dev.tolist<uint8_t>();
    ASSERT_EQ(got.size(), big.size() - static_cast<size_t>(off));
    EXPECT_TRUE(std::equal(got.begin(), got.end(), big.begin() + off)) << "offset " << off;
  }
}

TEST_F(DiskTensor, ToDiskWritesTheFile) {
  std::string p = (dir / "ones").string();
  {
    Tensor out = Tensor::ones({10, 10}, {.device = "CPU"}).contiguous();
    Tensor disk = out.to("disk:" + p);
    disk.realize();
  }
  std::vector<uint8_t> want;
  for (int i = 0; i < 100; i++) want.insert(want.end(), {0x00, 0x00, 0x80, 0x3F});
  EXPECT_EQ(read(p), want);
  Tensor back = Tensor::empty({10, 10}, {.device = "disk:" + p});
  EXPECT_EQ(back.tolist<float>(), std::vector<float>(100, 1.0f));
}

TEST_F(DiskTensor, SetitemAndAssignToASlice) {
  std::string p = (dir / "setitem").string();
  Tensor d = Tensor({1, 2, 3, 4}).to("disk:" + p);
  d.realize();
  d.setitem({Slice{1, 3}}, Tensor({7, 8}));
  d.setitem({3}, int64_t(9));
  EXPECT_EQ(d.tolist<int32_t>(), (std::vector<int32_t>{1, 7, 8, 9}));
  Tensor e = Tensor::empty({10}, {.device = "disk:" + (dir / "assign").string(), .dtype = dtypes::int64});
  for (int64_t i = 0; i < 5; i++)
    e.shrink({{2 * i, 2 * i + 2}}).assign(Tensor::full({2}, int64_t(3), {.dtype = dtypes::int64}));
  EXPECT_EQ(e.tolist<int64_t>(), std::vector<int64_t>(10, 3));
}

TEST_F(DiskTensor, BitcastAssignThenReadAsOtherTypes) {
  std::string p = (dir / "bitcasts").string();
  Tensor t = Tensor::empty({128, 128}, {.device = "disk:" + p, .dtype = dtypes::uint8});
  t.bitcast(dtypes::uint16).assign(Tensor::full({128, 64}, int64_t(0x4248), {.dtype = dtypes::uint16})).realize();
  EXPECT_EQ(t.bitcast(dtypes::uint32).to("CPU").tolist<uint32_t>()[77], 0x42484248u);
  EXPECT_FLOAT_EQ(t.bitcast(dtypes::float16).to("CPU").cast(dtypes::float32).tolist<float>()[5], 3.140625f);
}

TEST_F(DiskTensor, FromFileIsTheFilesBytes) {
  std::string p = file("path", iota_bytes(100));
  Tensor t = Tensor::from_file(p);
  EXPECT_EQ(t.shape(), (Shape{100}));
  EXPECT_EQ(t.dtype(), dtypes::uint8);
  EXPECT_TRUE(t.device().starts_with("DISK:/"));
  EXPECT_EQ(t.tolist<uint8_t>(), iota_bytes(100));
  Tensor h = Tensor::from_file(p, {.dtype = dtypes::int16});
  EXPECT_EQ(h.shape(), (Shape{50}));
  EXPECT_EQ(h.tolist<int16_t>()[1], 0x0302);
  Tensor c = Tensor::from_file(p, {.device = "CPU"});
  EXPECT_EQ(c.device(), "CPU");
  EXPECT_EQ(c.tolist<uint8_t>(), iota_bytes(100));
  EXPECT_EQ(Tensor::from_file(file("empty", {})).shape(), (Shape{0}));
  EXPECT_EQ(Tensor::from_file(file("empty", {}), {.device = "CPU"}).shape(), (Shape{0}));
}

// onto the CPU the file is mapped copy-on-write: realized at once, no copy; a write stays in memory, not in the file;
// the mapping goes with the last tensor that uses it
TEST_F(DiskTensor, FromFileOntoTheCpuMapsIt) {
  std::string p = file("mapped", iota_bytes(4096));
  auto mapped = [&] {
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);)
      if (line.find(std::filesystem::canonical(p).string()) != std::string::npos) return true;
    return false;
  };
  {
    Tensor c = Tensor::from_file(p, {.device = "CPU", .dtype = dtypes::int32});
    EXPECT_TRUE(uop_is_realized(c.uop()));
    EXPECT_EQ(c.shape(), (Shape{1024}));
    EXPECT_TRUE(mapped());
    Tensor sum = (c.shrink({{1, 3}}) + 1).realize();  // a kernel reads the mapping in place
    EXPECT_EQ(sum.tolist<int32_t>(), (std::vector<int32_t>{0x07060504 + 1, 0x0B0A0908 + 1}));
    c.assign(Tensor::zeros({1024}, {.device = "CPU", .dtype = dtypes::int32})).realize();
    EXPECT_EQ(c.tolist<int32_t>()[1], 0);
    EXPECT_EQ(Tensor::from_file(p).tolist<uint8_t>(), iota_bytes(4096));  // the file is unchanged
  }
  EXPECT_FALSE(mapped());
}

// Buffer::release_file_pages: a mapped file's pages given back (an LLM's weights once laid out anew) read the same
// when touched again, and counted in the process's resident file pages no more; a buffer of its own memory keeps
// its bytes (the call does nothing to it)
TEST_F(DiskTensor, ReleasedFilePagesReadTheSameAndLeaveTheResidentSet) {
  const int64_t n = 8 << 20;  // 8 MiB: a change the resident set shows above its noise
  std::vector<uint8_t> bytes(static_cast<size_t>(n));
  for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<uint8_t>(i * 7 + i / 4096);
  std::string p = file("release", bytes);
  auto rss_file_kb = [] {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("RssFile:", 0) == 0) return int64_t(std::stoll(line.substr(8)));
    return int64_t(-1);
  };
  Tensor c = Tensor::from_file(p, {.device = "CPU"});
  Buffer b = *uop_realized(c.uop());
  EXPECT_EQ(c.sum({}, false, dtypes::uint64).item<uint64_t>(), [&] {  // every page read by a kernel
    uint64_t s = 0;
    for (uint8_t v : bytes) s += v;
    return s;
  }());
  const int64_t before = rss_file_kb();
  b.view(n - 8192, dtypes::uint8, 4096).release_file_pages();  // a view's whole pages
  const int64_t after = rss_file_kb();
  if (before >= 0) {
    EXPECT_LT(after, before - 4096) << "RssFile " << before << " -> " << after << " kB";
  }
  EXPECT_EQ(c.tolist<uint8_t>(), bytes);
  Tensor own = Tensor(std::vector<int32_t>{1, 2, 3}, {3}).realize();
  uop_realized(own.uop())->release_file_pages();
  EXPECT_EQ(own.tolist<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
}

TEST_F(DiskTensor, ViewsAndCopiesCompileNoKernels) {
  std::string p = file("nokernels", iota_bytes(4096));
  Tensor t = Tensor::from_file(p);
  Tensor x = t.shrink({{100, 200}}).bitcast(dtypes::int32).reshape({5, 5}).to("CPU");
  auto [sched, vars] = Tensor::schedule_with_vars({x});
  std::vector<Ops> ops;
  for (const ScheduleItem& si : sched) ops.push_back(si.ast.op());
  EXPECT_EQ(ops, (std::vector<Ops>{Ops::BUFFER_VIEW, Ops::COPY}));  // a range of the file, then one copy of it
  run_schedule(sched);
  EXPECT_EQ(x.tolist<int32_t>()[0], 0x67666564);
  // a permuted view of the whole file is copied whole and permuted on the device
  Tensor sq = Tensor::from_file(file("square", iota_bytes(16)));
  EXPECT_EQ(sq.reshape({4, 4}).permute({1, 0}).to("CPU").tolist<uint8_t>()[1], 4);
}

TEST_F(DiskTensor, BadInputIsAClearError) {
  EXPECT_NE(error_of([&] { Tensor::from_file((dir / "missing").string()); }).find("missing"), std::string::npos);
  std::string p = file("small", iota_bytes(16));
  Tensor t = Tensor::from_file(p);
  // computing on DISK: NotImplementedError naming the device
  EXPECT_THROW((t + 1).realize(), NotImplementedError);
  EXPECT_THROW(Tensor::empty({4}, {.device = "disk:" + p, .dtype = dtypes::int16}).cast(dtypes::float16).realize(),
               NotImplementedError);
  // a view that is not one range of the file
  EXPECT_NE(error_of([&] {
              t.reshape({4, 4}).shrink({{0, 2}, {0, 2}}).to("CPU").realize();
            }).find("contiguous range"),
            std::string::npos);
  // a size that doesn't split evenly, and backprop through a bitcast
  EXPECT_THROW(Tensor::empty({3}, {.device = "disk:" + p, .dtype = dtypes::int8}).bitcast(dtypes::float16), Error);
  // a directory is not a file
  EXPECT_NE(
      error_of([&] { Tensor::empty({4}, {.device = "disk:" + dir.string()}).to("CPU").realize(); }).find(dir.string()),
      std::string::npos);
  // an assign of another shape or dtype
  EXPECT_THROW(t.assign(Tensor::zeros({3}, {.dtype = dtypes::uint8})), AssertionError);
  EXPECT_THROW(t.assign(Tensor::zeros({16}, {.dtype = dtypes::float32})), AssertionError);
}
