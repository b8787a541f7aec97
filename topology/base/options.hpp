// A workload's options, each declared once: its workload-file field, its flag, what it takes, its default,
// its meaning and where the default comes from, and how it sets the typed field of the config it fills.
// One table per workload (moe_options(), serving_options(), production_options(), chakra_options(), and
// a model object's fields) feeds the command's flags (sim/app/commands/declared_options.hpp), the workload
// file's reader (read_options), `ultrasim list options` and the generated reference; code reads the
// config's typed fields.
//
// A value reaches `set` as JSON: a workload file's value as written, a flag's text as a JSON string (a
// repeated flag's as an array of strings, a bool flag's as true or false). The readers below take either,
// so `"tp": 8` and `--tp 8` go through one check, and every error names the option as the user wrote it:
// "--tp must be an integer between 1 and 4096, not 0", "workload file 'w.json': field 'tp' must be ...".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {

template <class Config>
struct Option {
  std::string name;   // the workload-file field; the flag is --NAME with '-' for '_' (--no-NAME: see boolean)
  std::string takes;  // the value's form, for help and the reference: "integer in [1, 4096]", "time"
  std::string meaning;  // what it sets, as --help and the reference say it
  std::string source;   // where the default comes from: a paper, a document, "the model's", "assumption"
  std::function<void(Config&, const nlohmann::json& value, const std::string& where)> set{};
  std::function<nlohmann::json(const Config&)> value{};  // its value in a config; the default is Config{}'s
  std::string unset = "none";           // what a null value means, for the default column ("unlimited")
  nlohmann::json fallback = nullptr;    // applied when neither the flag nor the field is given
  bool required = false;                // a flag and a field the run cannot do without
  bool repeated = false;                // a flag given several times makes a list
  bool boolean = false;                 // a flag without a value: it sets `set` with `!default`
  std::vector<std::string> excludes{};  // options it cannot be given with
  std::string why{};                    // why they exclude each other
  std::string cli_name() const;         // "--tp"
  std::string default_text(const Config& defaults) const;  // "1024", "the model's", "none"
};

template <class Config>
using OptionTable = std::vector<Option<Config>>;

// The readers every `set` uses: a JSON value or a flag's text (a JSON string), checked, else InputError
// "<where> must be ..., not <value>".
std::int64_t option_integer(const nlohmann::json& v, const std::string& where, std::int64_t lo,
                            std::int64_t hi);
double option_number(const nlohmann::json& v, const std::string& where, double lo, double hi);
double option_time(const nlohmann::json& v, const std::string& where);
std::uint64_t option_seed(const nlohmann::json& v, const std::string& where);
std::string option_text(const nlohmann::json& v, const std::string& where);
// One of `choices` ("did you mean" for a near miss).
std::string option_choice(const nlohmann::json& v, const std::string& where,
                          const std::vector<std::string>& choices);
bool option_bool(const nlohmann::json& v, const std::string& where);
// A list: the items of a JSON array or a flag given several times, or one value alone.
std::vector<nlohmann::json> option_items(const nlohmann::json& v);

// The declarations' common shapes, bound to a typed field of the config: `field` is a member pointer
// (&ServingConfig::tp) or a function of the config returning the field ([](auto& p) -> auto& { return
// p.generator.rate; }); the *_option forms take member pointers, the *_field forms anything std::invoke
// calls.
template <class Config, class Field>
Option<Config> integer_field(std::string name, Field field, std::int64_t lo, std::int64_t hi,
                             std::string meaning, std::string source) {
  using Int = std::remove_cvref_t<std::invoke_result_t<Field, Config&>>;
  Option<Config> o{std::move(name), "integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]",
                   std::move(meaning), std::move(source)};
  o.set = [=](Config& c, const nlohmann::json& v, const std::string& where) {
    std::invoke(field, c) = static_cast<Int>(option_integer(v, where, lo, hi));
  };
  o.value = [=](const Config& c) { return nlohmann::json(std::invoke(field, c)); };
  return o;
}
template <class Config, class Int>
Option<Config> integer_option(std::string name, Int Config::*field, std::int64_t lo, std::int64_t hi,
                              std::string meaning, std::string source) {
  return integer_field<Config>(std::move(name), field, lo, hi, std::move(meaning), std::move(source));
}
// A double or std::optional<double> field in [lo, hi].
template <class Config, class Field>
Option<Config> number_field(std::string name, Field field, double lo, double hi, std::string meaning,
                            std::string source) {
  using Number = std::remove_cvref_t<std::invoke_result_t<Field, Config&>>;
  Option<Config> o{std::move(name), "number in [" + shortest_number(lo) + ", " + shortest_number(hi) + "]",
                   std::move(meaning), std::move(source)};
  o.set = [=](Config& c, const nlohmann::json& v, const std::string& where) {
    std::invoke(field, c) = option_number(v, where, lo, hi);
  };
  o.value = [=](const Config& c) {
    const auto& x = std::invoke(field, c);
    if constexpr (std::is_same_v<Number, std::optional<double>>)
      return x ? nlohmann::json(*x) : nlohmann::json();
    else
      return nlohmann::json(x);
  };
  return o;
}
template <class Config, class Number>
Option<Config> number_option(std::string name, Number Config::*field, double lo, double hi,
                             std::string meaning, std::string source) {
  return number_field<Config>(std::move(name), field, lo, hi, std::move(meaning), std::move(source));
}
// A time field (seconds; "50ms" or a number of seconds).
template <class Config, class Field>
Option<Config> time_field(std::string name, Field field, std::string meaning, std::string source) {
  Option<Config> o{std::move(name), "time (50ms, 2s)", std::move(meaning), std::move(source)};
  o.set = [=](Config& c, const nlohmann::json& v, const std::string& where) {
    std::invoke(field, c) = option_time(v, where);
  };
  o.value = [=](const Config& c) { return nlohmann::json(std::invoke(field, c)); };
  return o;
}
// A string field, one of `choices` (any text when there are none).
template <class Config, class Field>
Option<Config> text_field(std::string name, Field field, std::vector<std::string> choices,
                          std::string meaning, std::string source) {
  std::string takes = "text";
  if (!choices.empty()) {
    takes.clear();
    for (const auto& choice : choices) takes += (takes.empty() ? "" : " | ") + choice;
  }
  Option<Config> o{std::move(name), std::move(takes), std::move(meaning), std::move(source)};
  o.set = [=](Config& c, const nlohmann::json& v, const std::string& where) {
    std::invoke(field, c) = choices.empty() ? option_text(v, where) : option_choice(v, where, choices);
  };
  o.value = [=](const Config& c) {
    const std::string& x = std::invoke(field, c);
    return x.empty() ? nlohmann::json() : nlohmann::json(x);
  };
  return o;
}
template <class Config>
Option<Config> text_option(std::string name, std::string Config::*field, std::vector<std::string> choices,
                           std::string meaning, std::string source) {
  return text_field<Config>(std::move(name), field, std::move(choices), std::move(meaning),
                            std::move(source));
}
// A bool field; its flag is --NAME, or --no-NAME when it is on by default.
template <class Config>
Option<Config> bool_option(std::string name, bool Config::*field, std::string meaning, std::string source) {
  Option<Config> o{std::move(name), "true | false", std::move(meaning), std::move(source)};
  o.set = [=](Config& c, const nlohmann::json& v, const std::string& where) {
    c.*field = option_bool(v, where);
  };
  o.value = [=](const Config& c) { return nlohmann::json(c.*field); };
  o.boolean = true;
  return o;
}

// Into `config`: the fields of workload file `w` (`where` names it) that `table` declares, in table order,
// each exclusion checked first; a required field missing is an InputError, as is a field neither the table
// nor `extra` ("workload", "description", "set") knows.
template <class Config>
void read_options(const OptionTable<Config>& table, const nlohmann::json& w, const std::string& where,
                  const std::vector<std::string>& extra, Config& config);

// The table as `ultrasim list --format json` and the reference show it, an entry per option: command,
// name, flag, takes, default, description (its meaning), source, excludes.
template <class Config>
nlohmann::ordered_json options_json(const std::string& command, const OptionTable<Config>& table);

// ---- implementation of the templates ----

void check_fields_known(const nlohmann::json& w, const std::vector<std::string>& names,
                        const std::string& where);
std::string flag_of(const std::string& name);

template <class Config>
std::string Option<Config>::cli_name() const {
  return boolean && value && value(Config{}) == true ? "--no-" + flag_of(name).substr(2) : flag_of(name);
}

template <class Config>
std::string Option<Config>::default_text(const Config& defaults) const {
  nlohmann::json v = fallback.is_null() ? value(defaults) : fallback;
  if (v.is_null() || (v.is_array() && v.empty())) return unset;
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return shortest_number(v.get<double>());
  return v.dump();
}

template <class Config>
void read_options(const OptionTable<Config>& table, const nlohmann::json& w, const std::string& where,
                  const std::vector<std::string>& extra, Config& config) {
  std::vector<std::string> names = extra;
  for (const auto& o : table) names.push_back(o.name);
  check_fields_known(w, names, where);
  for (const auto& o : table)
    for (const auto& other : o.excludes)
      if (w.contains(o.name) && w.contains(other))
        throw InputError(where + ": fields '" + o.name + "' and '" + other + "' are exclusive: " + o.why);
  for (const auto& o : table) {
    const std::string field = where + ": field '" + o.name + "'";
    if (w.contains(o.name))
      o.set(config, w.at(o.name), field);
    else if (!o.fallback.is_null())
      o.set(config, o.fallback, field);
    else if (o.required)
      throw InputError(where + ": missing field '" + o.name + "' (" + o.takes + ")");
  }
}

template <class Config>
nlohmann::ordered_json options_json(const std::string& command, const OptionTable<Config>& table) {
  const Config defaults{};
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& o : table)
    out.push_back({{"command", command},
                   {"name", o.name},
                   {"flag", o.cli_name()},
                   {"takes", o.takes},
                   {"default",
                    o.required ? nlohmann::ordered_json() : nlohmann::ordered_json(o.default_text(defaults))},
                   {"required", o.required},
                   {"description", o.meaning},
                   {"source", o.source},
                   {"excludes", o.excludes}});
  return out;
}

}  // namespace ultrasim
