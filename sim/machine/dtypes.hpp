// The element types a run may name (--dtype, a model's weights, activations and KV cache, an exchange's
// dispatch and combine), one table: their sizes in bytes.
#pragma once

#include <string>

namespace ultrasim {

// Bytes per element of a dtype name (float32, bfloat16, float8, ...); throws InputError if unknown.
int dtype_size(const std::string& dtype);

}  // namespace ultrasim
