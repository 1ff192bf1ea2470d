#pragma once
// the explorer's page files, built into the program (cmake/embed_viz_assets.cmake writes their definition)
#include <cstddef>
#include <span>
#include <string_view>

namespace tg::viz {

struct Asset {
  std::string_view path;  // the URL path: "/index.html", "/js/index.js", "/vendor/dagre.min.js"
  std::string_view data;
};
std::span<const Asset> assets();
const Asset* find_asset(std::string_view path);  // "/" finds /index.html; null when there is none

}  // namespace tg::viz
