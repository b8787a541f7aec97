// sim/app/commands/declared_options.hpp: the flags of moe and serve and the fields of their workload files
// are one declaration, so a run from flags and a run from the file with the same fields give the same result;
// `--help`, `ultrasim list options` and the reference show every option.
#include <catch2/catch.hpp>

#include <map>

#include "cli_runner.hpp"
#include "workloads/moe/moe_options.hpp"
#include "workloads/serving/production_run.hpp"

using namespace ultrasim::test;

namespace {

// The JSON result of `args` (a command of any kind), which must succeed.
nlohmann::json json_of(std::vector<std::string> args) {
  args.push_back("--format");
  args.push_back("json");
  const CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

// The result of `args`, and of a workload file of `fields`, without the command lines that differ.
void check_same(std::vector<std::string> args, const nlohmann::json& fields) {
  nlohmann::json by_flags = json_of(args);
  const std::string file = temp_file("options.json", fields.dump());
  nlohmann::json by_file = json_of({"workload", file});
  by_flags.erase("command"), by_file.erase("command");
  CHECK(by_flags == by_file);
}

}  // namespace

TEST_CASE("a run from flags equals the run from a workload file with the same fields") {
  check_same({"moe",       "--topology", "switch:8",    "--experts",
              "16",        "--top-k",    "2",           "--tokens-per-chip",
              "32",        "--hidden",   "256",         "--router",
              "random",    "--zipf",     "1.2",         "--capacity-factor",
              "1.5",       "--no-dedup", "--seed",      "5",
              "--batches", "3",          "--placement", "balanced"},
             {{"workload", "moe"},
              {"topology", "switch:8"},
              {"experts", 16},
              {"top_k", 2},
              {"tokens_per_chip", 32},
              {"hidden", 256},
              {"router", "random"},
              {"zipf", 1.2},
              {"capacity_factor", 1.5},
              {"dedup", false},
              {"seed", 5},
              {"batches", 3},
              {"placement", "balanced"}});
  check_same({"serve",  "--topology",    "switch:8", "--model",       "llama3-70b", "--tp",
              "2",      "--batch",       "2,4",      "--input-len",   "64",         "--output-len",
              "8",      "--phase",       "decode",   "--seed",        "3",          "--kv-dtype",
              "float8", "--tpot-target", "50ms",     "--tpot-target", "1s"},
             {{"workload", "serving"},
              {"topology", "switch:8"},
              {"model", "llama3-70b"},
              {"tp", 2},
              {"batch", {2, 4}},
              {"input_len", 64},
              {"output_len", 8},
              {"phase", "decode"},
              {"seed", 3},
              {"kv_dtype", "float8"},
              {"tpot_target", {"50ms", 1}}});
  check_same(
      {"serve", "--topology",     "switch:8", "--model",     "llama3-70b", "--tp",         "8", "--rate",
       "20",    "--num-requests", "12",       "--input-len", "32",         "--output-len", "4", "--max-batch",
       "4",     "--slo-ttft",     "2s",       "--scheduler", "chunked"},
      {{"workload", "serving"},
       {"topology", "switch:8"},
       {"model", "llama3-70b"},
       {"tp", 8},
       {"rate", 20},
       {"num_requests", 12},
       {"input_len", 32},
       {"output_len", 4},
       {"max_batch", 4},
       {"slo_ttft", "2s"},
       {"scheduler", "chunked"}});
}

TEST_CASE("a flag and its field are refused alike, each naming itself") {
  expect_input_error({"serve", "--tp", "0"}, "--tp must be an integer between 1 and 4096, not '0'");
  const std::string file = temp_file("tp0.json", R"({"workload": "serving", "tp": 0})");
  expect_input_error({"workload", file}, "field 'tp' must be an integer between 1 and 4096, not 0");
  const std::string typo = temp_file("typo.json", R"({"workload": "moe", "experts": 8, "top_kk": 2})");
  expect_input_error({"workload", typo}, "unknown field 'top_kk'; did you mean 'top_k'?");
  // An arrival or pool option without arrivals would be ignored: it is refused instead.
  expect_input_error({"serve", "--scheduler", "chunked"},
                     "--scheduler is for request arrivals (--requests or --rate)");
  expect_input_error({"serve", "--requests", "r.csv", "--rate", "5"},
                     "--requests and --rate are mutually exclusive; give one");
}

TEST_CASE("help and `ultrasim list options` show every declared option with its default") {
  const nlohmann::json listing = json_of({"list", "options"});
  std::map<std::string, int> per_command;
  std::map<std::string, std::string> help;
  for (const auto& o : listing["options"]) {
    const std::string command = o["command"].get<std::string>();
    if (per_command[command]++ == 0) help[command] = run_cli({command, "--help"}).out;
    INFO(o.dump());
    CHECK_THAT(help[command], Catch::Contains(o["flag"].get<std::string>() + " "));
    CHECK_THAT(help[command], Catch::Contains(o["description"].get<std::string>()));
  }
  CHECK(per_command["moe"] == static_cast<int>(ultrasim::moe_options().size()));
  CHECK(per_command["serve"] ==
        static_cast<int>(ultrasim::serving_options().size() + ultrasim::production_options().size()));
  const auto tp = std::find_if(listing["options"].begin(), listing["options"].end(),
                               [](const auto& o) { return o["flag"] == "--tp"; });
  REQUIRE(tp != listing["options"].end());
  CHECK((*tp)["default"] == "1");
  CHECK((*tp)["takes"] == "integer in [1, 4096]");
}

TEST_CASE(
    "serve's help lists the options for request arrivals under their own heading, after the static ones") {
  const std::string help = run_cli({"serve", "--help"}).out;
  const auto heading = help.find("\nRequest arrivals (with --rate or --requests");
  REQUIRE(heading != std::string::npos);
  for (const auto& o : ultrasim::serving_options()) {
    INFO(o.name);
    const auto at = help.find("  " + o.cli_name() + " ");
    REQUIRE(at != std::string::npos);
    CHECK(at < heading);
  }
  for (const auto& o : ultrasim::production_options()) {
    INFO(o.name);
    CHECK(help.find("  " + o.cli_name() + " ", heading) != std::string::npos);
  }
  CHECK(help.find("  --timeline ", heading) != std::string::npos);
  CHECK(help.find("  --requests-out ", heading) != std::string::npos);
}

TEST_CASE(
    "the activation dtype option sets the model's activations: a tp all-reduce carries one byte an element") {
  const std::vector<std::string> serve{"serve",  "--topology", "switch:8", "--model", "llama3-70b",
                                       "--tp",   "8",          "--batch",  "8",       "--phase",
                                       "decode", "--stack",    "ideal"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = serve;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const nlohmann::json bf16 = json_of(serve), fp8 = json_of(with({"--activation-dtype", "float8"}));
  CHECK(bf16["model"]["activation_dtype"] == "bfloat16");
  CHECK(fp8["model"]["activation_dtype"] == "float8");
  CHECK(bf16["points"][0]["tp_allreduce"]["bytes"] == 8 * 8192 * 2);  // tokens x hidden x bytes
  CHECK(fp8["points"][0]["tp_allreduce"]["bytes"] == 8 * 8192 * 1);
  check_same(with({"--activation-dtype", "float8"}), {{"workload", "serving"},
                                                      {"topology", "switch:8"},
                                                      {"model", "llama3-70b"},
                                                      {"tp", 8},
                                                      {"batch", 8},
                                                      {"phase", "decode"},
                                                      {"set", {{"stack", "ideal"}}},
                                                      {"activation_dtype", "float8"}});
  expect_input_error(with({"--activation-dtype", "float9"}),
                     "--activation-dtype: unknown dtype 'float9'; did you mean");
}
