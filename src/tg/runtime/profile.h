#pragma once
// PROFILE=1: every kernel run and copy with its device, start, duration and name, written as it happens to a Chrome
// trace-event file (the JSON array form, one event a line: Perfetto and chrome://tracing open it offline, and so does
// tinygrad-viz --profile). PROFILE_TRACE names the file (default $TMPDIR/tinygrad_profile_<pid>.json); its path is
// printed at exit. A device is a process of the trace, with a COMPUTE and a COPY thread, as tinygrad's.
#include <string>

namespace tg {

bool profile_enabled();  // PROFILE != 0, read once
// a range that started st_us microseconds after the profile began and lasted dur_us
void profile_range(const std::string& device, const std::string& name, double st_us, double dur_us, bool is_copy);
double profile_now_us();  // microseconds since the profile began

}  // namespace tg
