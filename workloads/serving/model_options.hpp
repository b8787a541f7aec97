// The model options every workload that runs a model from the model table declares (serve, train): --model
// (a built-in name, or an object in a workload file) and --model-file, declared once for any config with a
// `ModelShape model` field.
#pragma once

#include <string>

#include "topology/base/input_files.hpp"
#include "topology/base/options.hpp"
#include "workloads/serving/model.hpp"

namespace ultrasim {

template <class C>
void add_model_options(OptionTable<C>& t, const std::string& default_model, const std::string& source) {
  Option<C> model{"model", "a built-in name (ultrasim list models), or an object in a workload file",
                  "the model's shape", source};
  model.set = [](C& c, const nlohmann::json& v, const std::string& where) {
    c.model = model_from_json(v, where);
  };
  model.value = [](const C& c) {
    return c.model.name.empty() ? nlohmann::json() : nlohmann::json(c.model.name);
  };
  model.fallback = default_model;
  t.push_back(model);
  Option<C> file{"model_file", "file", "a model's shape as a JSON object (workloads/serving/README.md)",
                 "none: --model"};
  file.set = [](C& c, const nlohmann::json& v, const std::string& where) {
    const std::string path = option_text(v, where);
    const std::string name = "model file '" + path + "'";
    c.model = model_from_json(
        parse_json_text(read_input_file(path, name, "a JSON object of a model's shape"), name), name);
  };
  file.value = [](const C&) { return nlohmann::json(); };
  file.excludes = {"model"};
  file.why = "a model is a built-in name or a file";
  t.push_back(file);
}

}  // namespace ultrasim
