// Renders lines of text into a PNG, black on white, for the OCR test (tests/e2e/run_ocr.sh):
//
//   render_text [--flip] FONT.ttf PIXELS OUT.png LINE...
//
// Each line at PIXELS high (the font's ascent to descent), left-aligned with a margin, 1.6 lines apart; --flip turns
// the image 180 degrees. Printable ASCII only (one byte, one glyph). Glyphs come from stb_truetype.h, the PNG from
// stb_image_write.h (Debian's libstb-dev). Exit status 2 on a bad argument or an unreadable font.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#define STB_TRUETYPE_IMPLEMENTATION
#include "stb_truetype.h"
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include "stb_image_write.h"

int main(int argc, char** argv) {
  int a = 1;
  bool flip = argc > 1 && std::strcmp(argv[1], "--flip") == 0;
  a += flip;
  if (argc - a < 4) {
    std::fprintf(stderr, "usage: %s [--flip] FONT.ttf PIXELS OUT.png LINE...\n", argv[0]);
    return 2;
  }
  std::ifstream f(argv[a], std::ios::binary);
  std::vector<unsigned char> ttf((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  stbtt_fontinfo font;
  if (ttf.empty() || !stbtt_InitFont(&font, ttf.data(), stbtt_GetFontOffsetForIndex(ttf.data(), 0))) {
    std::fprintf(stderr, "render_text: %s: not a TrueType font\n", argv[a]);
    return 2;
  }
  float px = std::stof(argv[a + 1]);
  const char* out = argv[a + 2];
  std::vector<std::string> lines(argv + a + 3, argv + argc);

  float scale = stbtt_ScaleForPixelHeight(&font, px);
  int ascent = 0, descent = 0, gap = 0;
  stbtt_GetFontVMetrics(&font, &ascent, &descent, &gap);
  int margin = static_cast<int>(px), step = static_cast<int>(std::lround(px * 1.6f));
  auto advance = [&](const std::string& s, size_t i) {  // this glyph's advance plus the kerning to the next one
    int adv = 0, lsb = 0;
    stbtt_GetCodepointHMetrics(&font, s[i], &adv, &lsb);
    if (i + 1 < s.size()) adv += stbtt_GetCodepointKernAdvance(&font, s[i], s[i + 1]);
    return static_cast<float>(adv) * scale;
  };
  float widest = 0;
  for (const std::string& s : lines) {
    float w = 0;
    for (size_t i = 0; i < s.size(); i++) w += advance(s, i);
    widest = std::max(widest, w);
  }
  int W = static_cast<int>(std::ceil(widest)) + 2 * margin;
  int H = step * static_cast<int>(lines.size()) + 2 * margin - (step - static_cast<int>(px));
  std::vector<unsigned char> ink(static_cast<size_t>(W) * static_cast<size_t>(H));  // coverage, 0..255
  for (size_t l = 0; l < lines.size(); l++) {
    const std::string& s = lines[l];
    int baseline =
        margin + step * static_cast<int>(l) + static_cast<int>(std::lround(static_cast<float>(ascent) * scale));
    float x = static_cast<float>(margin);
    for (size_t i = 0; i < s.size(); i++) {
      int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
      float shift = x - std::floor(x);
      stbtt_GetCodepointBitmapBoxSubpixel(&font, s[i], scale, scale, shift, 0, &x0, &y0, &x1, &y1);
      int gw = x1 - x0, gh = y1 - y0;
      if (gw > 0 && gh > 0) {
        std::vector<unsigned char> glyph(static_cast<size_t>(gw) * static_cast<size_t>(gh));
        stbtt_MakeCodepointBitmapSubpixel(&font, glyph.data(), gw, gh, gw, scale, scale, shift, 0, s[i]);
        for (int gy = 0; gy < gh; gy++)
          for (int gx = 0; gx < gw; gx++) {
            int X = static_cast<int>(std::floor(x)) + x0 + gx, Y = baseline + y0 + gy;
            if (X < 0 || Y < 0 || X >= W || Y >= H) continue;
            unsigned char& dst = ink[static_cast<size_t>(Y) * static_cast<size_t>(W) + static_cast<size_t>(X)];
            dst = std::max(dst, glyph[static_cast<size_t>(gy) * static_cast<size_t>(gw) + static_cast<size_t>(gx)]);
          }
      }
      x += advance(s, i);
    }
  }
  if (flip) std::reverse(ink.begin(), ink.end());
  std::vector<unsigned char> rgb(ink.size() * 3);
  for (size_t i = 0; i < ink.size(); i++)
    rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = static_cast<unsigned char>(255 - ink[i]);
  if (!stbi_write_png(out, W, H, 3, rgb.data(), W * 3)) {
    std::fprintf(stderr, "render_text: cannot write %s\n", out);
    return 2;
  }
  return 0;
}
