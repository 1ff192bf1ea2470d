#pragma once
// The VIZ explorer's web server (tinygrad's viz/serve.py): the page files built into the program, and a trace's
// contexts and steps as the reference's endpoints serve them:
//   GET /                 the explorer          GET /profiler    the timeline of a PROFILE=1 run
//   GET /ctxs             the contexts and their steps (JSON)
//   GET /ctxs?ctx=&idx=   one step's graphs, one server-sent event per rewrite, then "data: END"
//   GET /get_profile      the Chrome trace-event JSON of a PROFILE=1 run (404 without one)
// It listens on 127.0.0.1 only (VIZ_HOST to change it), port $PORT (default 8000), one request at a time, until
// SIGINT or SIGTERM.
#include <cstdint>
#include <optional>
#include <string>

#include "tg/helpers/json.h"

namespace tg::viz {

struct ServeOpts {
  std::string trace;    // a VIZ trace file; "" for none
  std::string profile;  // a PROFILE=1 trace-event file; "" for none
  std::string host = "127.0.0.1";
  int port = 8000;
};

// serves until SIGINT/SIGTERM; Error when the port is taken or the files are unreadable
void serve(const ServeOpts& opts);
// writes the page and every step's data into dir as files that open from file:// without a server
void export_static(const ServeOpts& opts, const std::string& dir);

// a PROFILE=1 file as /get_profile serves it ({"traceEvents": [...]}), from either trace-event form; a file cut short
// (a killed program's array without its closing bracket) is read up to its last whole event
std::optional<json::Value> load_profile(const std::string& path);

}  // namespace tg::viz
