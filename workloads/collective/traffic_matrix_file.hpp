// Reading an all-to-allv traffic matrix from a file (ultrasim run --traffic-matrix FILE).
//   JSON: {"bytes": [[0, 1024, ...], ...]} (other keys are ignored) or a bare array of arrays.
//         An entry is a whole number of bytes (4096, 1e6) or a string with a unit ("64KiB").
//   CSV:  one line per sender, comma-separated entries as in --size (4096, 64KiB, 1MB); blank lines and
//         lines starting with # are skipped; no header.
// Row = sender, column = receiver; p rows of p entries; the diagonal is each chip's own part.
// The format is JSON when the first non-blank character is { or [, CSV otherwise.
#pragma once

#include <string>

#include "collectives/traffic_matrix.hpp"

namespace ultrasim {

// Throws InputError naming the file and, where there is one, the line or row and column at fault: a
// missing or unreadable file, invalid JSON, an unparsable CSV field, a ragged or non-square matrix,
// a negative or fractional entry. The chip count is checked by prepare(), which knows the topology.
TrafficMatrix read_traffic_matrix(const std::string& path);

}  // namespace ultrasim
