// Typed parameters: a struct whose fields are parameters, each declared once, next to the member it fills.
//
//   struct RingParams { double bandwidth = 0, latency = 0; };
//   const ParamTable<RingParams>& ring_table() {
//     static const ParamTable<RingParams> table = ParamTable<RingParams>{}
//         .add({"link_bandwidth", "100GBps", Unit::kRate, "...", "assumption"}, &RingParams::bandwidth)
//         .add({"link_latency", "500ns", Unit::kTime, "...", "assumption"}, &RingParams::latency);
//     return table;
//   }
//   ParamSet params(ring_table().specs());           // --set, `list`, the reference: the declarations
//   RingParams p = ring_table().read(params);        // the code: typed fields, no name
//
// A parameter's name appears only in its declaration; code reads members. The member's type follows the
// spec's unit: double for bytes, rates, times and ratios; int or long for counts; bool for kBool;
// std::string for kChoice; std::optional<double> for kOptRate (nullopt: unset, the cost is free). A
// mismatch is a programming error: add() throws std::logic_error when the table is built.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "topology/base/params.hpp"

namespace ultrasim {

namespace param_table_detail {
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

// One declaration and how it fills a T.
template <class T>
struct Entry {
  ParamSpec spec;
  bool optional = false;
  std::function<void(T&, const ParamSet&)> fill;
};

// Whether a member of type M can hold a parameter of `unit`.
template <class M>
bool holds(Unit unit) {
  if constexpr (std::is_same_v<M, bool>)
    return unit == Unit::kBool;
  else if constexpr (std::is_integral_v<M>)
    return unit == Unit::kCount;
  else if constexpr (std::is_same_v<M, double>)
    return unit == Unit::kBytes || unit == Unit::kRate || unit == Unit::kTime || unit == Unit::kRatio ||
           unit == Unit::kCount;
  else if constexpr (std::is_same_v<M, std::string>)
    return unit == Unit::kChoice;
  else if constexpr (std::is_same_v<M, std::optional<double>>)
    return unit == Unit::kOptRate;
  else
    return false;
}

// The value of parameter `name` in `params`, as an M.
template <class M>
M value(const ParamSet& params, const std::string& name) {
  if constexpr (std::is_same_v<M, bool>)
    return params.flag(name);
  else if constexpr (std::is_integral_v<M>)
    return static_cast<M>(params.number(name));
  else if constexpr (std::is_same_v<M, double>)
    return params.number(name);
  else if constexpr (std::is_same_v<M, std::string>)
    return params.text(name);
  else
    return params.optional_rate(name);
}
}  // namespace param_table_detail

template <class S>
class ParamTable {
 public:
  // Declares `spec`, read into `member`. Every ParamSet read with this table must declare it (it does
  // when it was made from specs()).
  template <class M>
  ParamTable&& add(ParamSpec spec, M S::*member) && {
    return std::move(*this).add_entry(std::move(spec), member, false);
  }
  // Declares `spec` for a parameter that only some sets declare (a preset's own, a job's): where a set
  // does not, read() leaves `member` at S's default, and `declared` (when given) records which.
  template <class M>
  ParamTable&& add_optional(ParamSpec spec, M S::*member, bool S::*declared = nullptr) && {
    return std::move(*this).add_entry(std::move(spec), member, true, declared);
  }
  // Declares every parameter of `inner`, read into the member `part` (shared groups: a link tier's rate,
  // latency and efficiency).
  template <class I>
  ParamTable&& nest(const ParamTable<I>& inner, I S::*part) && {
    for (const Entry<I>& e : inner.entries_)
      entries_.push_back(
          {e.spec, e.optional, [fill = e.fill, part](S& s, const ParamSet& p) { fill(s.*part, p); }});
    return std::move(*this);
  }

  // The declarations, in order: what a ParamSet is made of.
  std::vector<ParamSpec> specs() const {
    std::vector<ParamSpec> out;
    for (const Entry<S>& e : entries_) out.push_back(e.spec);
    return out;
  }
  // The values in effect, typed. A set that lacks a required parameter is a programming error
  // (ParamSet::number's std::out_of_range / InputError naming it).
  S read(const ParamSet& params, S out = {}) const {
    for (const Entry<S>& e : entries_)
      if (!e.optional || params.has(e.spec.name)) e.fill(out, params);
    return out;
  }

 private:
  template <class T>
  friend class ParamTable;
  template <class T>
  using Entry = param_table_detail::Entry<T>;

  template <class M>
  ParamTable&& add_entry(ParamSpec spec, M S::*member, bool optional, bool S::*declared = nullptr) && {
    if (!param_table_detail::holds<M>(spec.unit))
      throw std::logic_error("parameter " + spec.name + ": its member's type cannot hold a " +
                             unit_name(spec.unit));
    std::string name = spec.name;
    entries_.push_back({std::move(spec), optional, [name, member, declared](S& s, const ParamSet& p) {
                          s.*member = param_table_detail::value<M>(p, name);
                          if (declared) s.*declared = true;
                        }});
    return std::move(*this);
  }

  std::vector<Entry<S>> entries_;
};

}  // namespace ultrasim
