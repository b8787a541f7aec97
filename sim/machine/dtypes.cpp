#include "sim/machine/dtypes.hpp"

#include <utility>
#include <vector>

#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {

int dtype_size(const std::string& dtype) {
  static const std::vector<std::pair<std::string, int>> kTypes{
      {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"float8", 1}, {"int8", 1},
      {"int32", 4},   {"uint8", 1},   {"float64", 8},  {"int64", 8}};
  std::vector<std::string> known;
  for (const auto& [name, size] : kTypes) {
    if (name == dtype) return size;
    known.push_back(name);
  }
  throw InputError(unknown_name_message("dtype", dtype, known));
}

}  // namespace ultrasim
