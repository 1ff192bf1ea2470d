// Random numbers (tinygrad's tensor.py creation random): per-device threefry keys and counters (manual_seed,
// rand), and randn and uniform over rand.
#include <map>
#include <numbers>

#include "tg/shape/uop_multi.h"
#include "tg/tensor/tensor_internal.h"

namespace tg {

// *** random ***

namespace {
struct RngState {  // tinygrad's Tensor._seed, _device_seeds, _device_rng_counters
  uint64_t seed = 0;
  std::map<std::string, Tensor> device_seeds, counters;
};
RngState& rng() {
  static auto* s = new RngState();  // reachable until exit; tensors in it may outlive other statics
  return *s;
}
}  // namespace

void Tensor::manual_seed(uint64_t seed) {
  RngState& r = rng();
  r.seed = seed;
  r.device_seeds.clear();
  r.counters.clear();
}

const std::map<std::string, Tensor>& Tensor::device_seeds() { return rng().device_seeds; }
const std::map<std::string, Tensor>& Tensor::device_rng_counters() { return rng().counters; }

Tensor Tensor::threefry_random_bits(const Tensor& key, const Tensor& counts0, const Tensor& counts1) {
  Tensor x = counts1.cast(dtypes::uint64).lshift(32).bitwise_or(counts0.cast(dtypes::uint64));
  Tensor k0 = key.shrink({{0, 1}}).broadcast_to(x.shape()).cast(dtypes::uint64);
  Tensor k1 = key.shrink({{1, 2}}).broadcast_to(x.shape()).cast(dtypes::uint64);
  Tensor k = k1.lshift(32).bitwise_or(k0);
  Tensor y = x.apply_uop(x.uop().alu(Ops::THREEFRY, {k.uop()}), {&x, &k});
  Tensor lo = y.bitwise_and(y.scalar_like(int64_t(0xffffffff))).cast(dtypes::uint32);
  Tensor hi = y.rshift(32).bitwise_and(y.scalar_like(int64_t(0xffffffff))).cast(dtypes::uint32);
  return lo.cat({hi});
}

Tensor Tensor::rand(const Shape& shape, TensorOptions opts, bool contiguous) {
  TG_META("rand");
  DType dt = opts.dtype ? *opts.dtype : dtypes::default_float;
  TG_CHECK_AS(ValueError, dtypes::is_float(dt), "rand only supports float dtypes, got ", dt);
  for (const sint& s : shape)
    TG_CHECK_AS(ValueError, s.is_int() && s >= 0, "invalid input shape=", shape_str(shape),
                s.is_sym() ? " (random numbers of a symbolic shape are not supported)" : "");
  std::string device = resolve_device(opts.device);
  TG_CHECK_AS(ValueError, !is_multi_device(device), "rand on a tuple of devices (", device,
              ") is not allowed: make it on one device and shard it");
  if (tg::prod(shape) == 0) return zeros(shape, TensorOptions{device, dt, opts.requires_grad});
  RngState& r = rng();
  int64_t numel = tg::prod(shape), num = ceildiv(numel * dt.itemsize(), 4), half = ceildiv(num, 2);
  const TensorOptions u32{device, dtypes::uint32, false};
  if (!r.device_seeds.count(device)) {
    // the device's key: (the low 32 bits of sha256 of the device's index as 4 big-endian bytes, the seed)
    uint32_t idx = static_cast<uint32_t>(r.device_seeds.size());
    uint8_t be[4] = {uint8_t(idx >> 24), uint8_t(idx >> 16), uint8_t(idx >> 8), uint8_t(idx)};
    auto h = sha256(be, 4);
    int64_t low = int64_t(h[28]) << 24 | int64_t(h[29]) << 16 | int64_t(h[30]) << 8 | int64_t(h[31]);
    r.device_seeds.emplace(device, Tensor(std::vector<int64_t>{low, static_cast<int64_t>(r.seed)}, {2}, u32));
    r.counters.emplace(device, Tensor(std::vector<int64_t>{0}, {1}, u32).realize());
  }
  // the counter advances in place now, and this call's numbers start at a copy of its old value (one schedule: the
  // copy reads the counter before the increment). Left lazy as the reference leaves it, a second rand before the
  // first is realized assigns onto an unrealized assign, which writes a new buffer: a JIT's replays then read the
  // old counter and write the new one, and each replay hands out numbers overlapping the last one's
  Tensor& counter = r.counters.at(device);
  Tensor bits_count = counter.clone();
  counter.assign(counter + num);
  Tensor::realize({bits_count, counter});
  Tensor key = r.device_seeds.at(device);
  Tensor counts0 = arange(0, static_cast<double>(half), 1, u32) + bits_count;
  Tensor counts1 = counts0 + half;
  Tensor bits = threefry_random_bits(key, counts0, counts1).shrink({{0, num}});
  // the top mantissa bits of each word, under an exponent of 1.0: a float in [1, 2), minus 1
  auto [_, nmant] = dtypes::finfo(dt);
  DType uint_dt = uint_of_size(dt.itemsize());
  bits = bits.bitcast(uint_dt);
  Tensor one = bits.ones_like(TensorOptions{device, dt, false}).bitcast(uint_dt);
  bits = bits.rshift(dt.itemsize() * 8 - nmant).bitwise_or(one);
  // requires_grad as asked, unset by default (from the key and counter, which don't require grad, it would be false)
  Tensor out =
      tensor_from_uop(bits.bitcast(dt).shrink({{0, numel}}).sub(bits.bitcast(dt).scalar_like(1.0)).reshape(shape).uop(),
                      opts.requires_grad);
  if (opts.requires_grad) out.requires_grad_(*opts.requires_grad);
  return contiguous ? out.contiguous() : out;
}

Tensor Tensor::rand_like(TensorOptions opts, bool contiguous) const {
  if (is_multi_device(device())) {  // made on the default device, sharded as this one is
    TG_CHECK(!opts.device, "cannot specify `device` on `rand_like` of a multi device tensor");
    Tensor r =
        rand(shape(), TensorOptions{std::nullopt, opts.dtype ? opts.dtype : dtype(), opts.requires_grad}, contiguous);
    return r.shard(device_names(device()), uop_axis(uop()));
  }
  return rand(
      shape(),
      TensorOptions{opts.device ? opts.device : device(), opts.dtype ? opts.dtype : dtype(), opts.requires_grad},
      contiguous);
}
Tensor Tensor::randn_like(TensorOptions opts) const {
  TG_META("randn_like");
  Tensor src = stack({*this, *this}).rand_like(TensorOptions{opts.device, dtypes::float32, std::nullopt});
  Tensor a = src.shrink([&] {
                  Mask m{{0, 1}};
                  for (sint d : shape()) m.push_back({0, d});
                  return m;
                }())
                 .squeeze(0),
         b = src.shrink([&] {
                  Mask m{{1, 2}};
                  for (sint d : shape()) m.push_back({0, d});
                  return m;
                }())
                 .squeeze(0);
  Tensor out = (a * (2 * std::numbers::pi)).cos() * ((1 - b).log() * -2).sqrt();
  out = out.cast(opts.dtype ? *opts.dtype : dtype());
  if (opts.requires_grad) out.requires_grad_(*opts.requires_grad);
  return out;
}
Tensor Tensor::randn(const Shape& shape, TensorOptions opts) {
  TG_META("randn");
  return empty(shape, TensorOptions{opts.device, std::nullopt, std::nullopt}).randn_like(opts);
}
Tensor Tensor::uniform(const Shape& shape, double low, double high, TensorOptions opts) {
  TG_META("uniform");
  DType dt = opts.dtype ? *opts.dtype : dtypes::default_float;
  Tensor r = rand(shape, TensorOptions{opts.device, std::nullopt, std::nullopt});
  Tensor out = ((high - low) * r).cast(dt) + low;
  if (opts.requires_grad) out.requires_grad_(*opts.requires_grad);
  return out;
}

}  // namespace tg
