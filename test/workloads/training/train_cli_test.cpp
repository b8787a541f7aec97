// `ultrasim train`: a step of a model in a Megatron layout. On an ideal chip (every efficiency 1, no fixed
// costs, HBM unbounded) the model FLOPs are the chips' FLOPs; the pipeline's bubble is its schedule's; the
// data-parallel volumes are ZeRO's; groups across scale-up domains run hierarchically, as `ultrasim run`
// does.
#include <catch2/catch.hpp>

#include "cli_runner.hpp"

using namespace ultrasim::test;
using nlohmann::json;

namespace {

// A small dense model: 8 layers, H 1024, 8 heads, FFN 4096, a vocabulary of 8 (the LM head costs nothing).
const std::string kModel = R"({"name": "tiny", "layers": 8, "dense_layers": 8, "hidden": 1024, "vocab": 8,
  "attention": "gqa", "heads": 8, "kv_heads": 8, "head_dim": 128, "ffn": 4096, "weight_dtype": "bfloat16"})";

// An ideal chip: the plain roofline at 1 PFLOP/s bf16, HBM at 1 PB/s, no fixed costs.
const std::vector<std::string> kIdealChip{"--set", "chip_flops=1e15",
                                          "--set", "bf16_flops_ratio=1",
                                          "--set", "compute_efficiency=1",
                                          "--set", "gemm_half_rows=0",
                                          "--set", "prefill_attention_efficiency=1",
                                          "--set", "kernel_overhead=0",
                                          "--set", "layer_overhead=0",
                                          "--set", "hbm_bandwidth=1e18",
                                          "--set", "kernel_tables=none",
                                          "--set", "hbm_efficiency=1",
                                          "--set", "training_efficiency=1"};

json train(std::vector<std::string> args) {
  args.insert(args.begin(), {"train", "--format", "json", "--model-file", temp_file("tiny.json", kModel)});
  args.insert(args.end(), kIdealChip.begin(), kIdealChip.end());
  const CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("train: on an ideal chip with no communication the step is its model FLOPs at the peak (MFU 1)") {
  const json r = train({"--topology", "switch:1", "--global-batch", "4", "--seq-len", "2048"});
  CHECK(r["mfu"].get<double>() == Approx(1).epsilon(1e-4));  // the optimizer's HBM time: 1e-6 of the step
  const double flops_per_token =
      8 * (6 * (4.0 * 1024 * 1024 + 3.0 * 1024 * 4096) + 3.5 * 4 * 8 * 128 * 1024.0) +
      6.0 * 8 * 1024;  // layers (weights, causal scores over s / 2), LM head
  CHECK(r["model_flops_per_step"].get<double>() == Approx(flops_per_token * 4 * 2048).epsilon(1e-12));
  CHECK(r["bubble_fraction"].get<double>() == Approx(0).margin(1e-12));
}

TEST_CASE("train: full recompute runs the forward again: HFU = MFU x (3 + 1) / 3 on the layers' GEMMs") {
  const json none = train({"--topology", "switch:1", "--global-batch", "4", "--seq-len", "128"});
  const json full =
      train({"--topology", "switch:1", "--global-batch", "4", "--seq-len", "128", "--recompute", "full"});
  CHECK(full["hfu"].get<double>() / full["mfu"].get<double>() ==
        Approx(4.0 / 3).epsilon(2e-3));  // scores: 4.5 / 3.5
  CHECK(none["step_time_s"].get<double>() * 4 / 3 == Approx(full["step_time_s"].get<double>()).epsilon(2e-3));
}

TEST_CASE("train: exposed pp is what the sends add to the step, 2 (p - 1) sends under gpipe") {
  // Uniform stages: gpipe's span is (m + p - 1)(f + b) + 2 (p - 1) sends (pipeline_schedule_test).
  const json r = train({"--topology", "switch:4", "--pp", "4", "--global-batch", "8", "--seq-len", "512",
                        "--schedule", "gpipe", "--set", "link_bandwidth=1e9"});
  double send = 0;
  for (const json& c : r["collectives"])
    if (c["kind"] == "pp") send = c["time_s"].get<double>();
  REQUIRE(send > 1e-4);
  CHECK(r["exposed_comm_s"]["pp"].get<double>() == Approx(2 * 3 * send).epsilon(1e-9));
}

TEST_CASE(
    "train: a 1f1b pipeline of uniform stages idles (p - 1) / (m + p - 1), interleaved (p - 1) / (v m + p - "
    "1)") {
  // pp 4 on 4 chips of one switch, sends of a micro-batch's activations made free by a huge link.
  const std::vector<std::string> base{"--topology", "switch:4",      "--pp", "4",     "--global-batch",
                                      "8",          "--seq-len",     "512",  "--set", "link_bandwidth=1e18",
                                      "--set",      "link_latency=0"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return train(more);
  };
  const json one = with({"--schedule", "1f1b"});
  CHECK(one["layout"]["micro_batches"] == 8);
  CHECK(one["bubble_fraction"].get<double>() == Approx(3.0 / 11).epsilon(1e-3));
  CHECK(one["exposed_comm_s"]["pp"].get<double>() == Approx(0).margin(1e-9));  // the bubble is not a send
  const json inter = with({"--schedule", "interleaved", "--vp", "2"});
  CHECK(inter["bubble_fraction"].get<double>() == Approx(3.0 / 19).epsilon(1e-3));
  CHECK(inter["step_time_s"].get<double>() < one["step_time_s"].get<double>());
}

TEST_CASE(
    "train: ZeRO's data-parallel volume per chip and step: 0 all-reduces 4 B, 1 adds the 2 B gather, 3 moves "
    "8 B per micro-batch") {
  const std::vector<std::string> base{"--topology", "switch:8", "--global-batch", "16", "--seq-len", "256"};
  auto at = [&](const std::string& zero) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--zero", zero});
    return train(args);
  };
  // The weights per chip: the 8 layers, the embedding and the LM head (8 x 1024 each).
  const double weights = 8 * (4.0 * 1024 * 1024 + 3.0 * 1024 * 4096) + 2 * 8 * 1024;
  CHECK(at("0")["comm_volume_bytes"]["dp"].get<double>() == Approx(4 * weights).epsilon(1e-9));
  CHECK(at("1")["comm_volume_bytes"]["dp"].get<double>() == Approx(6 * weights).epsilon(1e-9));
  const json z3 = at("3");
  CHECK(z3["layout"]["micro_batches"] == 2);
  CHECK(z3["comm_volume_bytes"]["dp"].get<double>() == Approx(2 * 8 * weights).epsilon(1e-9));
  CHECK(z3["memory_per_chip"][0]["weights_bytes"].get<double>() == Approx(2 * weights / 8).epsilon(1e-9));
}

TEST_CASE(
    "train: a data-parallel group across two scale-up domains reduces hierarchically, as ultrasim run does") {
  const CliResult r =
      run_cli({"train", "--format", "json", "--model-file", temp_file("tiny.json", kModel), "--topology",
               "cluster:2:hgx-h100", "--tp", "8", "--zero", "0", "--global-batch", "2", "--seq-len", "128"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json t = json::parse(r.out);
  json dp;
  for (const auto& c : t["collectives"])
    if (c["kind"] == "dp") dp = c;
  REQUIRE(dp["algorithm"] == "hierarchical");
  CHECK(dp["group_size"] == 2);
  CHECK(dp["groups"] == 8);
  const json run = run_json({"--topology", "cluster:2:hgx-h100", "--collective", "allreduce", "--algorithm",
                             "hierarchical", "--size", std::to_string(dp["bytes"].get<std::uint64_t>()),
                             "--groups", "dp", "--layout", "tp=8,dp=2", "--set", "groups=domain", "--set",
                             "protocol=Simple"});  // train prices under the stack's bulk protocol
  CHECK(dp["time_s"].get<double>() == Approx(run["time_s"].get<double>()).epsilon(1e-12));
}

TEST_CASE(
    "train: a layout, batch or schedule that cannot run, or a step that does not fit, is refused before "
    "simulating") {
  expect_input_error({"train", "--topology", "trn3", "--tp", "5"}, "does not divide the 144 chips");
  expect_input_error(
      {"train", "--topology", "trn3", "--tp", "4", "--pp", "4", "--global-batch", "18"},
      "schedule 1f1b needs at least as many micro-batches as pipeline stages: 2 micro-batches for pp 4");
  expect_input_error({"train", "--schedule", "1fb1"}, "did you mean '1f1b'");
  expect_input_error(
      {"train", "--topology", "switch:1", "--model", "llama3-8b", "--global-batch", "16777216"},
      "16777216 pipeline passes, over the limit of 4194304");
  expect_input_error({"train", "--topology", "hgx-h100", "--model", "llama3-70b"},
                     "the step does not fit: pipeline stage 0 needs");
  expect_input_error({"train", "--topology", "trn3", "--vp", "2"}, "--vp 2 needs --schedule interleaved");
  expect_input_error({"train", "--model", "llama3-70b", "--ep", "8"}, "apply to MoE models");
  expect_input_error({"train", "--topology", "trn3", "--model", "deepseek-v3", "--ep", "7"},
                     "does not divide the 144 ranks of a pipeline stage");
  expect_input_error(
      {"train", "--topology", "hgx-h100", "--precision", "fp4", "--model", "llama3-8b", "--tp", "8"},
      "no 4-bit units");
}

TEST_CASE(
    "train: routed experts wait for the busiest rank: Zipf popularity over contiguous experts, closed form") {
  // 16 experts, top-1, on 4 expert ranks of 4 experts each: rank 0 holds the 4 most popular.
  const std::string moe = R"({"name": "tiny-moe", "layers": 2, "dense_layers": 0, "hidden": 256, "vocab": 8,
    "attention": "gqa", "heads": 4, "kv_heads": 4, "head_dim": 64, "experts": 16, "top_k": 1,
    "expert_ffn": 256, "weight_dtype": "bfloat16"})";
  auto run = [&](const std::string& zipf) {
    const CliResult r =
        run_cli({"train", "--format", "json", "--model-file", temp_file("moe.json", moe), "--topology",
                 "switch:4", "--ep", "4", "--global-batch", "4", "--seq-len", "4096", "--zipf", zipf});
    INFO(r.err);
    REQUIRE(r.status == 0);
    return json::parse(r.out);
  };
  const json flat = run("0"), skewed = run("1");
  CHECK(flat["expert_skew"]["compute"] == 1.0);
  double top = 0, all = 0;
  for (int i = 1; i <= 16; ++i) (i <= 4 ? top : all) += 1.0 / i;
  all += top;
  CHECK(skewed["expert_skew"]["compute"].get<double>() == Approx(4 * top / all).epsilon(1e-3));
  // Rank 0 receives 3 N s0 of the 4 x 3 N / 4 tokens exchanged (s0 = its experts' share): 4 s0 again.
  CHECK(skewed["expert_skew"]["exchange"].get<double>() == Approx(4 * top / all).epsilon(1e-3));
  CHECK(skewed["step_time_s"].get<double>() > flat["step_time_s"].get<double>());
}
