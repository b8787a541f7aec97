#include <catch2/catch.hpp>

#include <map>

#include "topology/base/errors.hpp"
#include "workloads/collective/collective_job.hpp"

using namespace ultrasim;

namespace {
CollectiveJob job(std::string topology, std::string collective, std::string algorithm, std::uint64_t bytes,
                  std::string dtype = "float32", std::vector<std::pair<std::string, std::string>> sets = {}) {
  return CollectiveJob{topology, collective, algorithm, bytes, dtype, 0, sets};
}
}  // namespace

TEST_CASE("prepare checks every name and value before anything is simulated") {
  CHECK_THROWS_WITH(prepare(job("switch:4", "allreduce", "rign", 64)),
                    Catch::Contains("did you mean 'ring'"));
  CHECK_THROWS_WITH(prepare(job("switch:4", "alltoal", "direct", 64)),
                    Catch::Contains("did you mean 'alltoall'"));
  CHECK_THROWS_WITH(prepare(job("switch:4", "alltoall", "recursive-doubling", 64)),
                    Catch::Contains("(for alltoall)"));
  CHECK_THROWS_AS(prepare(job("switch:4", "allreduce", "ring", 64, "float33")), InputError);
  CHECK_THROWS_AS(prepare(job("switch:4", "allreduce", "ring", 64, "float32", {{"bogus", "1"}})), InputError);
  PreparedJob ok =
      prepare(job("switch:4", "allreduce", "ring", 64, "float32", {{"transfer_overhead", "1us"}}));
  CHECK(ok.p() == 4);
  CHECK(ok.cost_input().transfer_overhead == Approx(1e-6));
  CHECK_FALSE(ok.cost_input().reduce_bandwidth.has_value());
}

TEST_CASE("metrics follow nccl-tests: algbw = size / time, busbw = algbw x the collective's factor") {
  PreparedJob allreduce = prepare(job("switch:8", "allreduce", "ring", 1 << 30, "bfloat16"));
  Metrics m = compute_metrics(allreduce, 0.01);
  CHECK(m.count == (1 << 29));
  CHECK(*m.algbw_GBps == Approx((1 << 30) / 0.01 / 1e9));
  CHECK(*m.busbw_GBps == Approx(*m.algbw_GBps * 2 * 7 / 8.0));
  PreparedJob alltoall = prepare(job("switch:8", "alltoall", "direct", 1 << 30));
  CHECK(*compute_metrics(alltoall, 0.01).busbw_GBps == Approx((1 << 30) / 0.01 / 1e9 * 7 / 8.0));
}

TEST_CASE("one chip takes no time and has no bandwidth to report") {
  Metrics m = compute_metrics(prepare(job("switch:1", "allreduce", "ring", 4096)), 0.0);
  CHECK_FALSE(m.algbw_GBps.has_value());
  CHECK_FALSE(m.busbw_GBps.has_value());
  CHECK(m.model_s == 0.0);
  CHECK(m.bound_s == 0.0);
}

TEST_CASE("auto picks the algorithm with the smallest model_s and keeps the ranking") {
  PreparedJob picked = prepare(job("trn3", "allreduce", "auto", 1 << 20, "float32", {{"stack", "ideal"}}));
  REQUIRE(picked.auto_ranking.size() ==
          8);  // every all-reduce algorithm but switch-reduce (no reducing switch)
  for (std::size_t i = 1; i < picked.auto_ranking.size(); ++i)
    CHECK(picked.auto_ranking[i - 1].model_s <= picked.auto_ranking[i].model_s);
  CHECK(picked.entry->name == picked.auto_ranking.front().algorithm);
  CHECK(picked.algorithm->model_s(picked.cost_input()) == picked.auto_ranking.front().model_s);
  // Each candidate is ranked with its own defaults: the ring with pipeline_chunks=1 and the double
  // binary tree with 16, the model_s `ultrasim run` reports for each (results/demo, results/catalogue).
  std::map<std::string, double> ranked;
  for (const AutoCandidate& c : picked.auto_ranking) ranked[c.algorithm] = c.model_s;
  CHECK(ranked.at("ring") == Approx(4.393925050e-4).epsilon(1e-9));
  CHECK(ranked.at("double-binary-tree") == Approx(6.036992e-5).epsilon(1e-9));
  CHECK(prepare(job("switch:8", "allreduce", "auto", 1 << 20, "float32", {{"switch_reduction", "true"}}))
            .auto_ranking.size() == 10);  // with switch-reduce and nvls
  CHECK(prepare(job("switch:8", "alltoall", "auto", 1 << 20)).auto_ranking.size() == 5);
  CHECK(prepare(job("switch:8", "allreduce", "ring", 1 << 20)).auto_ranking.empty());
}

TEST_CASE("auto ranks each candidate with its own parameter defaults, or the values the user set") {
  // ring (pipeline_chunks 1) and double-binary-tree (16) share the parameter's name, not its default.
  auto model_of = [](const PreparedJob& job, const std::string& name) {
    for (const AutoCandidate& c : job.auto_ranking)
      if (c.algorithm == name) return c.model_s;
    return -1.0;
  };
  auto with = [](const PreparedJob& job, const std::string& name, const std::string& chunks) {
    const AlgorithmEntry& entry = find_algorithm("allreduce", name);
    ParamSet params(entry.params);
    params.apply({{"pipeline_chunks", chunks}});
    return entry.make(params)->model_s(job.cost_input());
  };
  PreparedJob defaults = prepare(job("switch:16", "allreduce", "auto", 1 << 24));
  CHECK(model_of(defaults, "ring") == with(defaults, "ring", "1"));
  CHECK(model_of(defaults, "double-binary-tree") == with(defaults, "double-binary-tree", "16"));
  PreparedJob set =
      prepare(job("switch:16", "allreduce", "auto", 1 << 24, "float32", {{"pipeline_chunks", "4"}}));
  CHECK(model_of(set, "ring") == with(set, "ring", "4"));
  CHECK(model_of(set, "double-binary-tree") == with(set, "double-binary-tree", "4"));
  // Named algorithms run with, and report, their own defaults.
  CHECK(prepare(job("switch:16", "allreduce", "ring", 64)).algorithm_params.number("pipeline_chunks") == 1);
  CHECK(prepare(job("switch:16", "allreduce", "double-binary-tree", 64))
            .algorithm_params.number("pipeline_chunks") == 16);
}

TEST_CASE("an algorithm's parameters are its own: the topology holds only the hardware's and the model's") {
  PreparedJob picked =
      prepare(job("switch:16", "allreduce", "auto", 1 << 24, "float32", {{"pipeline_chunks", "4"}}));
  CHECK_FALSE(picked.topology->params().has("pipeline_chunks"));
  CHECK(picked.topology->params().has("multipath"));  // the model's
  CHECK(picked.algorithm_params.number("pipeline_chunks") == 4);
  // What a run reports is both, by name.
  CHECK(picked.parameters()["pipeline_chunks"] == 4);
  CHECK(picked.parameters()["link_bandwidth"] == 1e11);
  // A misspelt algorithm parameter is still found among every owner's names.
  CHECK_THROWS_WITH(prepare(job("switch:16", "allreduce", "ring", 64, "float32", {{"pipline_chunks", "4"}})),
                    Catch::Contains("did you mean 'pipeline_chunks'"));
}
