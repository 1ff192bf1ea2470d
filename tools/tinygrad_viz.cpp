// tinygrad-viz: the VIZ explorer for a trace that VIZ=1 or VIZ=-1 wrote (and a PROFILE=1 timeline)
//   tinygrad-viz TRACE [--profile PROFILE]              serve it on http://127.0.0.1:$PORT (default 8000)
//   tinygrad-viz --profile PROFILE                      serve only the timeline
//   tinygrad-viz export TRACE DIR [--profile PROFILE]   write it to DIR as files that open from file://
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/viz/server.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  tg::viz::ServeOpts opts;
  opts.host = tg::getenv_str("VIZ_HOST", "127.0.0.1");
  std::vector<std::string> pos;
  for (size_t i = 0; i < args.size(); i++) {
    if (args[i] == "--profile" && i + 1 < args.size())
      opts.profile = args[++i];
    else if (args[i] == "-h" || args[i] == "--help" || args[i].rfind("--", 0) == 0) {
      std::cerr << "usage: tinygrad-viz TRACE [--profile PROFILE]\n"
                   "       tinygrad-viz --profile PROFILE\n"
                   "       tinygrad-viz export TRACE DIR [--profile PROFILE]\n"
                   "env: PORT (default 8000), VIZ_HOST (default 127.0.0.1)\n";
      return args[i] == "-h" || args[i] == "--help" ? 0 : 2;
    } else
      pos.push_back(args[i]);
  }
  try {
    if (!pos.empty() && pos[0] == "export") {
      if (pos.size() != 3) throw tg::Error("usage: tinygrad-viz export TRACE DIR [--profile PROFILE]");
      opts.trace = pos[1];
      tg::viz::export_static(opts, pos[2]);
      std::cout << "*** wrote the explorer to " << pos[2] << "/index.html (open it in a browser)" << std::endl;
      return 0;
    }
    if (pos.size() > 1 || (pos.empty() && opts.profile.empty()))
      throw tg::Error("usage: tinygrad-viz TRACE [--profile PROFILE] (or export TRACE DIR)");
    if (!pos.empty()) opts.trace = pos[0];
    opts.port = static_cast<int>(tg::getenv("PORT", 8000));
    tg::viz::serve(opts);
  } catch (const std::exception& e) {
    std::cerr << "tinygrad-viz: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
