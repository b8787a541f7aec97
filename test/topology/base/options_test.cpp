// topology/base/options.hpp: one declaration per option. A flag's text and a workload file's value go through
// the same reader; a table reads a file with its exclusions, required fields and fallbacks; every option
// of moe and serve has a flag, a field, a default and a source.
#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "topology/base/errors.hpp"
#include "workloads/moe/moe_options.hpp"
#include "workloads/serving/production_run.hpp"
#include "workloads/serving/serving.hpp"

using namespace ultrasim;
using json = nlohmann::json;

TEST_CASE("a flag's text and a file's value are read by one reader, and refused in one message") {
  CHECK(option_integer(json(8), "--tp", 1, 4096) == 8);
  CHECK(option_integer(json("8"), "--tp", 1, 4096) == 8);
  CHECK_THROWS_WITH(option_integer(json("0"), "--tp", 1, 4096),
                    "--tp must be an integer between 1 and 4096, not '0'");
  CHECK_THROWS_WITH(option_integer(json(0), "field 'tp'", 1, 4096),
                    "field 'tp' must be an integer between 1 and 4096, not 0");
  for (const json& bad : {json("8x"), json(" 8"), json(8.5), json(true), json::array({8}), json(UINT64_MAX)})
    CHECK_THROWS_AS(option_integer(bad, "--tp", 1, 4096), InputError);
  CHECK(option_number(json("60/64"), "--zipf", 0, 100) == 0.9375);
  CHECK(option_number(json(1.5), "--zipf", 0, 100) == 1.5);
  CHECK_THROWS_WITH(option_number(json("-1"), "--zipf", 0, 100),
                    "--zipf must be a number between 0 and 100, not '-1'");
  CHECK(option_time(json("50ms"), "--slo-tpot") == Approx(0.05).epsilon(1e-15));
  CHECK(option_time(json(2), "--slo-ttft") == 2);
  CHECK_THROWS_AS(option_time(json(2e6), "--slo-ttft"), InputError);
  CHECK(option_seed(json("9999999999999999999"), "--seed") == 9999999999999999999ull);
  CHECK_THROWS_AS(option_seed(json("18446744073709551615"), "--seed"), InputError);  // 20 digits
  CHECK(option_seed(json(7u), "--seed") == 7);
  CHECK_THROWS_WITH(option_seed(json(-1), "--seed"),
                    "--seed must be a whole number from 0 to 9999999999999999999, not -1");
  CHECK_THROWS_WITH(option_choice(json("balance"), "--placement", {"contiguous", "round-robin", "balanced"}),
                    "--placement: unknown value 'balance'; did you mean 'balanced'? known: contiguous, "
                    "round-robin, balanced");
  CHECK(option_bool(json("off"), "--exact-steps") == false);
  CHECK(option_items(json::array({1, 2})).size() == 2);
  CHECK(option_items(json("50ms")).size() == 1);
}

TEST_CASE("a table reads a workload file: did-you-mean, exclusive fields, required fields, fallbacks") {
  const std::string where = "workload file 'w.json'";
  const std::vector<std::string> extra{"workload", "description", "set"};
  ServingConfig s;
  read_options(serving_options(), json::parse(R"({"workload": "serving", "tp": 4, "batch": [1, 8]})"), where,
               extra, s);
  CHECK(s.tp == 4);
  CHECK(s.batch_sizes == std::vector<std::uint64_t>{1, 8});
  CHECK(s.model.name == "deepseek-v3");  // the fallback, as `ultrasim serve` without --model
  ServingConfig u;
  CHECK_THROWS_WITH(read_options(serving_options(), json::parse(R"({"tpp": 4})"), where, extra, u),
                    Catch::StartsWith("workload file 'w.json': unknown field 'tpp'; did you mean 'tp'?"));
  CHECK_THROWS_WITH(
      read_options(serving_options(), json::parse(R"({"lengths": "x.csv", "input_len": 9})"), where, extra,
                   u),
      "workload file 'w.json': fields 'lengths' and 'input_len' are exclusive: the lengths file "
      "gives each request's");
  MoeConfig m;
  CHECK_THROWS_WITH(read_options(moe_options(), json::parse(R"({"experts": 8, "top_k": 2, "hidden": 64})"),
                                 where, extra, m),
                    "workload file 'w.json': missing field 'tokens_per_chip' (integer in [1, 1073741824])");
  read_options(moe_options(),
               json::parse(R"({"experts": 8, "top_k": 2, "hidden": 64, "tokens_per_chip": 4, "dedup": false,
                               "capacity_factor": "unlimited", "expert_load": [1, 2, 3, 4, 5, 6, 7, 8]})"),
               where, extra, m);
  CHECK(m.dedup == false);
  CHECK(!m.capacity_factor);
  CHECK(m.expert_load.size() == 8);
  CHECK(m.expert_load_source == "workload file 'w.json': field 'expert_load'");
}

namespace {

template <class Config>
void check_declared(const OptionTable<Config>& table, std::set<std::string>& names) {
  const std::regex field("[a-z][a-z0-9_]*");
  const Config defaults{};
  for (const auto& o : table) {
    INFO(o.name);
    CHECK(std::regex_match(o.name, field));
    CHECK(names.insert(o.name).second);  // one declaration per name
    std::string flag = "--" + o.name;
    std::replace(flag.begin(), flag.end(), '_', '-');
    CHECK((o.cli_name() == flag || (o.boolean && o.cli_name() == "--no-" + flag.substr(2))));
    CHECK(!o.meaning.empty());
    CHECK(!o.source.empty());
    CHECK(!o.takes.empty());
    CHECK(o.set);
    CHECK(o.value);
    CHECK(!o.default_text(defaults).empty());
    for (const auto& other : o.excludes) {
      const bool declared =
          std::any_of(table.begin(), table.end(), [&](const auto& x) { return x.name == other; });
      CHECK(declared);
    }
  }
}

}  // namespace

TEST_CASE("every option of moe and serve has one declaration: a flag, a field, a default and a source") {
  std::set<std::string> moe, serve;
  check_declared(moe_options(), moe);
  check_declared(serving_options(), serve);
  check_declared(production_options(), serve);  // serve's arrivals: no name shared with the rest of serve
  CHECK(moe.size() == moe_options().size());    // no name twice
  CHECK(serve.size() == serving_options().size() + production_options().size());
  for (const auto& name : kArrivalOptions) CHECK(serve.count(name) == 1);
}
