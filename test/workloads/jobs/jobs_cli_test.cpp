// Several jobs on one fabric (workloads/jobs/jobs_run.cpp): each job alone on its chips takes the time of its
// workload on that part of the fabric; jobs that share no link take exactly their alone times; jobs whose
// flows cross one link share it max-min, as worked by hand.
#include <catch2/catch.hpp>

#include <fstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;
using nlohmann::json;

namespace {

const double kJobsBandwidth = 100e9, kJobsLinkLatency = 500e-9;  // the generators' defaults

json collective(const char* name, const char* size) {
  return {{"workload", "collective"},
          {"collective", name},
          {"algorithm", name == std::string("alltoall") ? "direct" : "ring"},
          {"size", size}};
}

json job(const char* name, const char* chips, json workload, json start = nullptr) {
  json j{{"name", name}, {"chips", chips}, {"workload", std::move(workload)}};
  if (!start.is_null()) j["start"] = start;
  return j;
}

}  // namespace

TEST_CASE("a part of a fabric (SPEC@CHIPS) runs like the fabric of its chips where no route leaves them") {
  // switch:16's first 8 chips and their switch are switch:8: the same time to the last bit.
  const json part = run_json(
      {"--topology", "switch:16@0-7", "--collective", "allreduce", "--algorithm", "ring", "--size", "1MiB"});
  const json whole = run_json(
      {"--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring", "--size", "1MiB"});
  CHECK(part["chips"] == 8);
  CHECK(part["topology"] == "switch:16@0-7");
  CHECK(part["time_s"].get<double>() == whole["time_s"].get<double>());
  // Chips 0 and 2 of ring:8: the route between them forwards through chip 1, two links each way.
  const json pair = run_json(
      {"--topology", "ring:8@0,2", "--collective", "allreduce", "--algorithm", "ring", "--size", "1MiB"});
  CHECK(pair["time_s"].get<double>() ==
        Approx(2 * (2 * kJobsLinkLatency + 524288 / kJobsBandwidth)).epsilon(1e-12));
  expect_input_error({"run", "--topology", "ring:8@0-8", "--collective", "allreduce", "--algorithm", "ring",
                      "--size", "1MiB"},
                     "chip 8 is not on this topology");
}

TEST_CASE("jobs on disjoint halves of switch:16 take exactly their standalone times") {
  const json r = workload_json(json{{"workload", "jobs"},
                                    {"topology", "switch:16"},
                                    {"jobs",
                                     {job("a", "0-7", collective("allreduce", "1MiB")),
                                      job("b", "8-15", collective("alltoall", "4MiB"), "3us")}}}
                                   .dump(),
                               "halves.json");
  REQUIRE(r["verified"] == true);
  REQUIRE(r["jobs"].size() == 2);
  const json& a = r["jobs"][0];
  const json& b = r["jobs"][1];
  // Each alone, and each as `ultrasim run` on switch:8 (the same fabric as its half): the same times.
  const json a_run = run_json(
      {"--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring", "--size", "1MiB"});
  const json b_run = run_json(
      {"--topology", "switch:8", "--collective", "alltoall", "--algorithm", "direct", "--size", "4MiB"});
  CHECK(a["time_s"].get<double>() == a["alone_s"].get<double>());
  CHECK(b["time_s"].get<double>() == Approx(b["alone_s"].get<double>()).epsilon(1e-12));
  CHECK(a["alone_s"].get<double>() == a_run["time_s"].get<double>());
  CHECK(b["alone_s"].get<double>() == b_run["time_s"].get<double>());
  CHECK(a["slowdown"].get<double>() == 1.0);
  CHECK(b["slowdown"].get<double>() == Approx(1.0).epsilon(1e-12));
  // Each job's result is its kind's, from its own chips: ranks 0-7, its bytes, its busbw.
  CHECK(a["result"]["topology"] == "switch:16@0-7");
  CHECK(a["result"]["chips"] == 8);
  CHECK(a["result"]["busbw_GBps"].get<double>() == Approx(a_run["busbw_GBps"].get<double>()).epsilon(1e-12));
  CHECK(b["result"]["bytes_sent"] == b_run["bytes_sent"]);
  CHECK(b["start_s"].get<double>() == Approx(3e-6));
  // The makespan: b starts 3 us late.
  CHECK(r["time_s"].get<double>() ==
        Approx(std::max(a["time_s"].get<double>(), 3e-6 + b["time_s"].get<double>())).epsilon(1e-12));
}

TEST_CASE("two ring all-reduces crossing one ring:8 link share it max-min, on the flow engine and SimGrid") {
  // Job a on chips 0 and 2, job b on chips 1 and 3: a's messages (0 <-> 2, through chip 1) and b's
  // (1 <-> 3, through chip 2) both cross link 1-2, in each direction at the same moments. A 2-chip ring
  // all-reduce of n bytes is two steps of n/2: alone each step takes 2 links' latency + (n/2)/B; shared,
  // the two jobs' flows split the link, (n/2)/(B/2).
  const double n = 1048576;
  const double alone = 2 * (2 * kJobsLinkLatency + n / 2 / kJobsBandwidth);
  const double shared = 2 * (2 * kJobsLinkLatency + n / kJobsBandwidth);
  for (const char* engine : {"auto", "flow", "simgrid"}) {
    INFO(engine);
    const json r = workload_json(json{{"workload", "jobs"},
                                      {"topology", "ring:8"},
                                      {"engine", engine},
                                      {"jobs",
                                       {job("a", "0,2", collective("allreduce", "1MiB")),
                                        job("b", "1,3", collective("allreduce", "1MiB"))}}}
                                     .dump(),
                                 "crossing.json");
    REQUIRE(r["verified"] == true);
    for (const json& j : r["jobs"]) {
      CHECK(j["alone_s"].get<double>() == Approx(alone).epsilon(1e-12));
      CHECK(j["time_s"].get<double>() == Approx(shared).epsilon(1e-12));
      CHECK(j["slowdown"].get<double>() == Approx(shared / alone).epsilon(1e-12));
      CHECK(j["result"]["model_s"].get<double>() == Approx(alone).epsilon(1e-12));  // the model: alone
    }
    CHECK(r["engine"] == (std::string(engine) == "simgrid" ? "simgrid" : "flow"));
    // The fabric's links: link 1-2 carried both jobs' bytes in each direction, at full rate throughout.
    bool found = false;
    for (const json& hot : r["links"]["hot"])
      if (hot["link"] == "chip1-chip2") {
        found = true;
        CHECK(hot["bytes"] == 2 * 1048576);
        CHECK(hot["peak_util"].get<double>() == Approx(1.0).epsilon(1e-9));
      }
    CHECK(found);
  }
}

TEST_CASE("a hierarchical collective on groups inside a job splits them by the job's own topology") {
  // Job chips 4-11 of cluster:2:hgx-h100 are its topology cluster:2:hgx-h100@4-11 (servers 0-3 | 4-7);
  // its group 0-5 splits 4 + 2 by server. Read as the fabric's chips 4-9 instead, the labels would not
  // fit and the group would fall back to blocks of 2 (2.054 ms, not 1.804 ms).
  json hierarchical = collective("allreduce", "64MiB");
  hierarchical["algorithm"] = "hierarchical";
  hierarchical["groups"] = "chips:0-5";
  const json r = workload_json(json{{"workload", "jobs"},
                                    {"topology", "cluster:2:hgx-h100"},
                                    {"jobs", {job("h", "4-11", hierarchical)}}}
                                   .dump(),
                               "hierarchical_job.json");
  REQUIRE(r["verified"] == true);
  const json part = run_json({"--topology", "cluster:2:hgx-h100@4-11", "--collective", "allreduce",
                              "--algorithm", "hierarchical", "--size", "64MiB", "--groups", "chips:0-5"});
  CHECK(r["jobs"][0]["time_s"].get<double>() == Approx(part["time_s"].get<double>()).epsilon(1e-12));
  CHECK(part["time_s"].get<double>() == Approx(1.8043518735135135e-3).epsilon(1e-9));
}

TEST_CASE("a training step and an MoE layer as jobs report what they report alone") {
  const json training{
      {"workload", "training"},
      {"layout", "tp=4,dp=4"},
      {"stages",
       {{{"name", "bwd"},
         {"compute_s", 2e-5},
         {"collectives",
          {{{"collective", "allreduce"}, {"algorithm", "ring"}, {"size", "16MiB"}, {"groups", "dp"}}}}}}}};
  const json moe{{"workload", "moe"}, {"experts", 16},      {"top_k", 2}, {"tokens_per_chip", 64},
                 {"hidden", 1024},    {"router", "random"}, {"seed", 3}};
  const json r = workload_json(json{{"workload", "jobs"},
                                    {"topology", "switch:32"},
                                    {"jobs", {job("t", "0-15", training), job("m", "16-31", moe)}}}
                                   .dump(),
                               "mixed.json");
  REQUIRE(r["verified"] == true);
  // Alone: the same workloads as files on the same parts of the fabric.
  json t_alone = training, m_alone = moe;
  t_alone["topology"] = "switch:32@0-15";
  m_alone["topology"] = "switch:32@16-31";
  const json t = workload_json(t_alone.dump(), "t.json");
  const json m = workload_json(m_alone.dump(), "m.json");
  const json& tj = r["jobs"][0]["result"];
  const json& mj = r["jobs"][1]["result"];
  // switch:32's chips share no link: every figure is the alone run's.
  for (const char* key : {"step_time_s", "compute_s", "exposed_comm_s", "link_bytes", "energy_j"})
    CHECK(tj[key].get<double>() == Approx(t[key].get<double>()).epsilon(1e-12));
  for (const char* key : {"layer_time_s", "dispatch_s", "expert_s", "combine_s", "imbalance", "link_bytes"})
    CHECK(mj[key].get<double>() == Approx(m[key].get<double>()).epsilon(1e-12));
  CHECK(mj["dispatch_bytes"] == m["dispatch_bytes"]);
  CHECK(r["jobs"][0]["alone_s"].get<double>() == Approx(t["step_time_s"].get<double>()).epsilon(1e-12));
  CHECK(r["jobs"][1]["alone_s"].get<double>() == Approx(m["layer_time_s"].get<double>()).epsilon(1e-12));
}

TEST_CASE("a jobs file that cannot run is refused in one line") {
  auto refused = [](const json& file, const std::string& fragment) {
    const std::string path = temp_path("bad_jobs.json");
    {
      std::ofstream out(path);
      out << file.dump();
    }
    expect_input_error({"workload", path}, fragment);
  };
  const json a = collective("allreduce", "1MiB");
  refused(
      {{"workload", "jobs"}, {"topology", "switch:8"}, {"jobs", {job("x", "0-4", a), job("y", "4-7", a)}}},
      "chip 4 is in jobs 'x' and 'y'");
  refused({{"workload", "jobs"}, {"topology", "switch:8"}, {"jobs", {job("x", "0-8", a)}}},
          "chip 8 is not on this topology");
  refused({{"workload", "jobs"}, {"topology", "switch:8"}, {"jobs", json::array()}}, "field 'jobs'");
  json other = a;
  other["topology"] = "ring:8";
  refused({{"workload", "jobs"}, {"topology", "switch:8"}, {"jobs", {job("x", "0-3", other)}}},
          "leave 'topology' out");
  json faster = a;
  faster["set"] = {{"link_bandwidth", "400GBps"}};
  refused({{"workload", "jobs"}, {"topology", "switch:8"}, {"jobs", {job("x", "0-3", faster)}}},
          "changes a parameter of the fabric");
  refused({{"workload", "jobs"},
           {"topology", "switch:8"},
           {"jobs", {job("x", "0-3", {{"workload", "pingpong"}, {"size", "1MiB"}})}}},
          "a pingpong workload cannot run as a job");
  refused({{"workload", "jobs"},
           {"topology", "switch:8"},
           {"jobs",
            {job("x", "0-3",
                 {{"workload", "moe"},
                  {"experts", 4},
                  {"top_k", 1},
                  {"tokens_per_chip", 8},
                  {"hidden", 64},
                  {"batches", 4}})}}},
          "a job runs one batch");
  refused({{"workload", "jobs"}, {"topology", "switch:8"}, {"jobs", {job("x", "0-3", a, -1)}}},
          "field 'start'");
  refused({{"workload", "jobs"}, {"topology", "switch:8@0-3"}, {"jobs", {job("x", "0-3", a)}}},
          "a whole topology");
}
