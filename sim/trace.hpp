// Chrome Trace Event JSON ({"traceEvents": [...]}) that Perfetto and chrome://tracing open: one process
// per chip (pid = rank), a track per destination for its transfers and one for compute, complete events
// ("ph": "X", ts/dur in microseconds) with args {src, dst, bytes, step, path}, metadata naming chips,
// switches and the run. Flow arrows and utilisation counters come with the observability issue.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/runner.hpp"

namespace ultrasim {

nlohmann::json chrome_trace(const PreparedJob& job, const SimResult& result, const nlohmann::json& run);

}  // namespace ultrasim
