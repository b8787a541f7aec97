// The flags of an option table (topology/base/options.hpp): each declared option becomes a CLI11 option whose
// help ends with what it takes and its default, its exclusions CLI11 `excludes`; once the words are
// parsed, apply() sets the config from the flags given, through the same `set` a workload file's field
// goes through. A command adds its tables and keeps only what is not a workload's option (--format,
// --trace, --set).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "topology/base/options.hpp"

namespace ultrasim {

template <class Config>
class DeclaredFlags {
 public:
  // Declares `table`'s flags on `app` (those named in `only`, if any), their help showing `defaults`,
  // under the heading `group` of --help (empty: the command's own "Options"); `table` (a registry's static
  // table) outlives the flags.
  void add(CLI::App& app, const OptionTable<Config>& table, const std::vector<std::string>& only = {},
           const Config& defaults = Config{}, const std::string& group = "") {
    table_ = &table;
    for (const auto& o : table) {
      if (!only.empty() && std::find(only.begin(), only.end(), o.name) == only.end()) continue;
      const std::string help =
          o.meaning + " (" + (o.boolean ? "a flag" : o.takes) + "; " +
          (o.required ? std::string("required") : "default " + o.default_text(defaults)) + ")";
      CLI::Option* flag = o.boolean    ? app.add_flag(o.cli_name(), on_[o.name], help)
                          : o.repeated ? app.add_option(o.cli_name(), list_[o.name], help)
                                       : app.add_option(o.cli_name(), text_[o.name], help);
      if (o.required) flag->required();
      if (!group.empty()) flag->group(group);
      options_[o.name] = flag;
    }
    for (const auto& o : table)
      for (const auto& other : o.excludes)
        if (options_.count(o.name) > 0 && options_.count(other) > 0)
          options_.at(o.name)->excludes(options_.at(other));
  }

  // Into `config`: each flag given, in table order (a fallback where none is).
  void apply(Config& config) const {
    const Config defaults{};
    for (const auto& o : *table_) {
      const std::string flag = o.cli_name();
      if (options_.count(o.name) == 0) continue;
      if (options_.at(o.name)->count() == 0) {
        if (!o.fallback.is_null()) o.set(config, o.fallback, flag);
        continue;
      }
      if (o.boolean) {
        o.set(config, !o.value(defaults).template get<bool>(), flag);
      } else {
        o.set(config, o.repeated ? nlohmann::json(list_.at(o.name)) : nlohmann::json(text_.at(o.name)), flag);
      }
    }
  }

  // The flags given on the command line, as typed ("--rate").
  std::vector<std::string> given() const {
    std::vector<std::string> out;
    for (const auto& o : *table_)
      if (was_given(o.name)) out.push_back(o.cli_name());
    return out;
  }

  // Whether the flag of option `name` was given.
  bool was_given(const std::string& name) const {
    return options_.count(name) > 0 && options_.at(name)->count() > 0;
  }

  // Into `fields`: each flag given, as its workload-file field (the flag's text; a list for a repeated
  // flag, true or false for a bool), for commands that hand the flags on as a workload object.
  void put_given(nlohmann::json& fields) const {
    const Config defaults{};
    for (const auto& o : *table_) {
      if (!was_given(o.name)) continue;
      fields[o.name] = o.boolean    ? nlohmann::json(!o.value(defaults).template get<bool>())
                       : o.repeated ? nlohmann::json(list_.at(o.name))
                                    : nlohmann::json(text_.at(o.name));
    }
  }

  // The CLI11 option of `name`, for exclusions with flags outside the table.
  CLI::Option* option(const std::string& name) const { return options_.at(name); }

 private:
  const OptionTable<Config>* table_ = nullptr;
  std::map<std::string, std::string> text_;
  std::map<std::string, std::vector<std::string>> list_;
  std::map<std::string, bool> on_;
  std::map<std::string, CLI::Option*> options_;
};

}  // namespace ultrasim
