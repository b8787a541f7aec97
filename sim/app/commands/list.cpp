// `ultrasim list [WHAT] [--format text|json]`: the registries (topologies, collectives, algorithms, stacks,
// workloads); JSON adds every parameter's default, unit, meaning and source.
#include <cstdio>
#include <iostream>

#include "collectives/algorithm.hpp"
#include "collectives/stack.hpp"
#include "sim/app/commands/command.hpp"
#include "sim/engines/engines.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"
#include "workloads/moe/moe_options.hpp"
#include "workloads/registry.hpp"
#include "workloads/serving/production_run.hpp"
#include "workloads/serving/requests.hpp"
#include "workloads/serving/schedulers/scheduler.hpp"
#include "workloads/serving/serving.hpp"
#include "workloads/training/pipeline_schedule.hpp"
#include "workloads/training/train_config.hpp"

namespace ultrasim {
namespace {

nlohmann::ordered_json params_json(const std::vector<ParamSpec>& specs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& p : specs)
    out.push_back({{"name", p.name},
                   {"default", p.default_value},
                   {"unit", unit_name(p.unit)},
                   {"range", range_of(p) ? nlohmann::ordered_json(range_text(p)) : nlohmann::ordered_json()},
                   {"meaning", p.meaning},
                   {"source", p.source}});
  return out;
}

nlohmann::ordered_json algorithms_json() {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& a : algorithms())
    list.push_back({{"collective", a.collective},
                    {"name", a.name},
                    {"description", a.description},
                    {"parameters", params_json(a.params)}});
  list.push_back({{"collective", "any"},
                  {"name", "auto"},
                  {"description", "the algorithm with the smallest model_s for the topology and size"},
                  {"parameters", nlohmann::ordered_json::array()}});
  list.push_back(
      {{"collective", "any"},
       {"name", "file:PATH"},
       {"description", "a JSON schedule, run and verified like a built-in (README: algorithms as data)"},
       {"parameters", nlohmann::ordered_json::array()}});
  return list;
}

// The named trace shapes: their lengths, burstiness and source.
nlohmann::ordered_json shapes_json() {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const NamedTraceShape& e : trace_shapes())
    list.push_back({{"name", e.name},
                    {"description", e.description},
                    {"input_mean", e.input_mean},
                    {"input_sigma", e.input_sigma},
                    {"output_mean", e.output_mean},
                    {"output_sigma", e.output_sigma},
                    {"input_max", e.input_max},
                    {"output_max", e.output_max},
                    {"burstiness", e.burstiness},
                    {"source", e.source}});
  return list;
}

// A chip profile: its values with their sources, and which kernel classes its tables price (where a
// shape lies inside them) and which the roofline always prices.
nlohmann::ordered_json chip_json(const ChipProfile& c) {
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  std::string tables = "none";
  for (const ChipValue& v : c.values) {
    values.push_back({{"name", v.name}, {"value", v.value}, {"source", v.source}});
    if (v.name == "kernel_tables") tables = v.value;
  }
  const unsigned tabled = kernel_tables(tables)->classes();
  return {{"name", c.name},
          {"description", c.description},
          {"topologies", c.topologies},
          {"values", values},
          {"kernels_tabled", kernel_class_names(tabled)},
          {"kernels_roofline", kernel_class_names(~tabled & ((1u << kKernelClasses) - 1))}};
}

nlohmann::ordered_json registries_json(const std::string& what) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  auto wanted = [&](const char* section) { return what == "all" || what == section; };
  if (wanted("topologies")) {
    auto& list = out["topologies"] = nlohmann::ordered_json::array();
    for (const auto& g : topology_generators())
      list.push_back({{"name", g.name},
                      {"syntax", g.syntax},
                      {"description", g.description},
                      {"example", g.example_spec()},
                      {"stack", g.stack},
                      {"parameters", params_json(g.params)}});
  }
  if (wanted("collectives")) {
    auto& list = out["collectives"] = nlohmann::ordered_json::array();
    for (const auto& c : collectives()) list.push_back({{"name", c.name}, {"description", c.description}});
  }
  if (wanted("algorithms")) out["algorithms"] = algorithms_json();
  if (wanted("stacks")) {
    auto& list = out["stacks"] = nlohmann::ordered_json::array();
    for (const Stack& s : builtin_stacks()) list.push_back(nlohmann::ordered_json(s.to_json()));
  }
  if (wanted("workloads")) {
    auto& list = out["workloads"] = nlohmann::ordered_json::array();
    for (const WorkloadKind& w : workload_kinds())
      list.push_back({{"name", w.name},
                      {"description", w.description},
                      {"command", w.subcommand.empty() ? "workload FILE" : w.subcommand + ", workload FILE"},
                      {"formats", w.formats}});
  }
  if (wanted("models")) {
    auto& list = out["models"] = nlohmann::ordered_json::array();
    for (const ModelShape& m : model_shapes()) {
      nlohmann::ordered_json entry{{"name", m.name}, {"description", m.description}};
      const nlohmann::ordered_json shape = model_json(m);
      for (const auto& [k, v] : shape.items())
        if (k != "name") entry[k] = v;
      list.push_back(entry);
    }
  }
  if (wanted("engines")) {
    auto& list = out["engines"] = nlohmann::ordered_json::array();
    for (const EngineEntry& e : engine_table())
      list.push_back({{"name", e.name},
                      {"description", e.description},
                      {"declines", e.declines},
                      {"exact", e.exact},
                      {"error", e.error},
                      {"bytes_per_flow", e.bytes_per_flow}});
  }
  if (wanted("schedulers")) {
    auto& list = out["schedulers"] = nlohmann::ordered_json::array();
    for (const SchedulerEntry& e : serving_schedulers())
      list.push_back({{"name", e.name}, {"description", e.rule}, {"pools", e.pools}});
  }
  if (wanted("shapes")) out["shapes"] = shapes_json();
  if (wanted("pipelines")) {
    auto& list = out["pipelines"] = nlohmann::ordered_json::array();
    for (const PipelineSchedule& e : pipeline_schedules())
      list.push_back({{"name", e.name}, {"description", e.description}, {"source", e.source}});
  }
  if (wanted("chips")) {
    auto& list = out["chips"] = nlohmann::ordered_json::array();
    for (const ChipProfile& c : serving_chips()) list.push_back(chip_json(c));
  }
  if (wanted("options")) {
    auto& list = out["options"] = nlohmann::ordered_json::array();
    for (const auto& tables :
         {options_json("moe", moe_options()), options_json("serve", serving_options()),
          options_json("serve", production_options()), options_json("train", train_options())})
      for (const auto& o : tables) list.push_back(o);
  }
  return out;
}

// One line per entry; algorithms show their parameters with defaults.
void print_text(const nlohmann::ordered_json& out) {
  for (const auto& [section, items] : out.items()) {
    std::cout << section << ":\n";
    for (const auto& item : items) {
      std::string name =
          item.contains("syntax") ? item["syntax"].get<std::string>() : item["name"].get<std::string>();
      std::string description = item["description"].get<std::string>();
      if (item.contains("protocols")) {  // a stack: its protocols' terms
        for (const auto& p : item["protocols"])
          description += " [" + p["name"].get<std::string>() + ": launch " +
                         fixed_text(p["launch_latency_s"].get<double>() * 1e6, 1) + " us, step " +
                         fixed_text(p["step_latency_s"].get<double>() * 1e6, 1) + " us, efficiency " +
                         fixed_text(p["efficiency"].get<double>(), 2) + "]";
      }
      if (item.contains("values")) {  // a chip profile: the defaults it sets
        if (item["topologies"].empty()) {
          description += " (--chip " + item["name"].get<std::string>() + ":";
        } else {
          description += " (default on";
          for (const auto& t : item["topologies"]) description += " " + t.get<std::string>();
          description += ":";
        }
        for (const auto& v : item["values"])
          description += " " + v["name"].get<std::string>() + "=" + v["value"].get<std::string>();
        description += ")";
        auto names = [&](const char* key) {
          std::string text;
          for (const auto& c : item[key]) text += (text.empty() ? "" : ", ") + c.get<std::string>();
          return text.empty() ? std::string("none") : text;
        };
        description +=
            " [tabled: " + names("kernels_tabled") + "; roofline: " + names("kernels_roofline") + "]";
      }
      if (item.contains("input_mean"))  // a trace shape: its lengths and burstiness
        description += " [input " + fixed_text(item["input_mean"].get<double>(), 0) + " tokens (sigma " +
                       fixed_text(item["input_sigma"].get<double>(), 2) + "), output " +
                       fixed_text(item["output_mean"].get<double>(), 0) + " (sigma " +
                       fixed_text(item["output_sigma"].get<double>(), 2) + "), burstiness " +
                       shortest_number(item["burstiness"].get<double>()) + "]";
      if (item.contains("pools"))  // a serving scheduler: its chip pools
        description += item["pools"] == 2 ? " [two pools: prefill, decode]" : " [one pool]";
      if (item.contains("declines"))  // an engine: what it declines and its error
        description += " [declines: " + item["declines"].get<std::string>() +
                       "; error: " + item["error"].get<std::string>() + "]";
      if (item.contains("takes"))  // a command's option: the command, what it takes, its default
        name = item["command"].get<std::string>() + " " + item["flag"].get<std::string>(),
        description +=
            " (" + item["takes"].get<std::string>() + "; " +
            (item["required"] == true ? "required" : "default " + item["default"].get<std::string>()) + ")";
      if (item.contains("collective")) {
        name = item["collective"].get<std::string>() + " " + name;
        for (const auto& p : item["parameters"])
          description += " [--set " + p["name"].get<std::string>() + "=" + p["default"].get<std::string>() +
                         (p["range"].is_null() ? "" : ", " + p["range"].get<std::string>()) + "]";
      }
      std::printf("  %-32s %s\n", name.c_str(), description.c_str());
    }
  }
}

}  // namespace

Command list_command() {
  return {"list",
          "list topologies, collectives, algorithms, stacks, workloads, models, chips, engines, schedulers, "
          "trace shapes, "
          "pipeline schedules or the options of moe, serve and train",
          [](CLI::App& app) {
            auto what = std::make_shared<std::string>("all");
            auto format = std::make_shared<std::string>("text");
            app.add_option("what", *what,
                           "topologies|collectives|algorithms|stacks|workloads|models|chips|engines|"
                           "schedulers|shapes|pipelines|options (default: all)");
            app.add_option("--format", *format, "text|json");
            return [=](const std::string&) {
              check_choice("list", *what,
                           {"all", "topologies", "collectives", "algorithms", "stacks", "workloads", "models",
                            "chips", "engines", "schedulers", "shapes", "pipelines", "options"});
              check_choice("format", *format, {"text", "json"});
              const nlohmann::ordered_json out = registries_json(*what);
              if (*format == "json") {
                std::cout << json_text(out, 2) << "\n";
              } else {
                print_text(out);
              }
              return 0;
            };
          }};
}

}  // namespace ultrasim
