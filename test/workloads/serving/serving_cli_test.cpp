// `ultrasim serve` and "workload": "serving": a model served on the fabric. Decode at batch 1 is its fixed
// costs plus the bytes it reads at the achievable HBM rate plus its communication (and, with the chip model
// reduced to the roofline, exactly what it was before the chip model), large-batch prefill is its FLOPs at
// the chip's rate, its MoE layers are `ultrasim moe`'s and its all-reduces `ultrasim run`'s, skew and
// placement move the tail the way they must, and what does not fit is refused.
#include <catch2/catch.hpp>

#include <fstream>

#include <algorithm>
#include <cmath>
#include <map>

#include "cli_runner.hpp"
#include "topology/base/units.hpp"
#include "workloads/moe/moe.hpp"

using namespace ultrasim::test;
using nlohmann::json;

namespace {

json serve_json(std::vector<std::string> args) {
  args.insert(args.begin(), "serve");
  args.insert(args.end(), {"--format", "json"});
  CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  json out = json::parse(r.out);
  CHECK(out["verified"] == true);
  return out;
}

constexpr double kHbm = 4.9e12;  // Trainium3's HBM bandwidth, B/s
// Compute and HBM as good as free: what is left of a step is its communication, simulated alone.
const std::vector<std::string> kFreeChip{"--set", "chip_flops=1e18", "--set", "hbm_bandwidth=1e18"};

// The chip model reduced to the plain roofline (sim/machine/chip_model.hpp): every FLOP at 60 % of the 8-bit
// peak, HBM at its full rate, no fixed costs, free overlap: the serving model before the chip model.
const std::vector<std::string> kRoofline{"--set", "compute_efficiency=0.6",
                                         "--set", "prefill_attention_efficiency=0.6",
                                         "--set", "decode_attention_efficiency=0.6",
                                         "--set", "gemm_half_rows=0",
                                         "--set", "hbm_efficiency=1",
                                         "--set", "bf16_flops_ratio=1",
                                         "--set", "kernel_overhead=0s",
                                         "--set", "layer_overhead=0s",
                                         "--set", "step_overhead=0s",
                                         "--set", "comm_share=0"};
const std::vector<std::string> kNoFixedCosts{"--set", "kernel_overhead=0s", "--set", "layer_overhead=0s",
                                             "--set", "step_overhead=0s",   "--set", "request_overhead=0s"};

std::vector<std::string> plus(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// What decode at batch 1 of DeepSeek-V3 reads from HBM on `p` chips (one request, on chip 0): per layer
// its attention weights (float8) and the KV latent of 1024 + 128 tokens (bfloat16); its dense FFN (layers
// 0-2) or its shared expert and router; and per MoE layer the experts the token runs on the busiest chip,
// drawn as ultrasim moe --seed l x 2^20 draws them; then the LM head.
double moe_decode_bytes(int p) {
  const double attention = 187105280.0 + 1152.0 * 1152, dense = 3.0 * 7168 * 18432;
  const double expert = 3.0 * 7168 * 2048, shared = expert + 7168.0 * 256;
  double bytes = 0;
  for (int layer = 0; layer < 61; ++layer) {
    bytes += attention;
    if (layer < 3) {
      bytes += dense;
      continue;
    }
    ultrasim::MoeConfig moe;
    moe.experts = 256, moe.top_k = 8, moe.hidden = 7168, moe.ffn = 2048, moe.router = "random";
    moe.tokens_per_chip = 1, moe.chip_tokens.assign(p, 0), moe.chip_tokens[0] = 1;
    moe.seed = static_cast<std::uint64_t>(layer) << 20;
    const ultrasim::MoeRouting routing = ultrasim::route_tokens(moe, p, 0);
    std::vector<int> running(p, 0);
    for (std::size_t i = 0; i < routing.instance_chip.size(); ++i)
      if (routing.instance_load[i] > 0) ++running[routing.instance_chip[i]];
    bytes += shared + *std::max_element(running.begin(), running.end()) * expert;
  }
  return bytes + 129280.0 * 7168;
}

// What decode at batch 1 of Llama-3-70B reads per chip at tp 4 or 8: a tp-th of every layer's weights
// (float8) and of its KV cache (1152 tokens, 8 KV heads), and of the LM head.
double dense_decode_bytes(int tp) {
  const double layer = 150994944.0 + 704643072.0 + 1152.0 * 4096;
  return (80 * layer + 128256.0 * 8192) / tp;
}

}  // namespace

TEST_CASE("decode at batch 1 of the MoE model reads its weights, experts and KV cache from HBM") {
  const std::vector<std::string> run =
      plus({"--model", "deepseek-v3", "--batch", "1", "--phase", "decode"}, kRoofline);
  const json step = serve_json(run);
  const json comm = serve_json(plus(run, kFreeChip));
  CHECK(step["bound"] == "hbm");
  const double expected = moe_decode_bytes(144) / kHbm + comm["tpot_s"].get<double>();
  // Within 2 %: the formula leaves out the activations, and a layer's combine starts on each chip when
  // its own experts are done, not when the slowest chip's are.
  CHECK(step["tpot_s"].get<double>() == Approx(expected).epsilon(0.02));
}

TEST_CASE("decode at batch 1 of the dense model reads a quarter of every layer per tp chip") {
  const std::vector<std::string> run =
      plus({"--model", "llama3-70b", "--tp", "4", "--batch", "1", "--phase", "decode"}, kRoofline);
  const json step = serve_json(run);
  const json comm = serve_json(plus(run, kFreeChip));
  CHECK(step["bound"] == "hbm");
  const double expected = dense_decode_bytes(4) / kHbm + comm["tpot_s"].get<double>();
  CHECK(step["tpot_s"].get<double>() == Approx(expected).epsilon(0.02));
  // Its communication: 160 tp all-reduces of one token, each as ultrasim run simulates it alone.
  REQUIRE(step["tp_allreduce"]["count"] == 160);
  CHECK(step["tp_allreduce"]["bytes"] == 8192 * 2);
}

TEST_CASE("decode at batch 1 on every chip profile: fixed costs + bytes at the achievable HBM rate + comm") {
  struct Case {
    std::vector<std::string> run;
    double bytes;
    int layers, kernels;  // on the busiest chip's path: 8 or 6 attention, 4 FFN, 5 shared, 3 experts, 3 head
  };
  const std::vector<Case> cases{
      // DeepSeek-V3 on eight chips of each fabric (the formula is the same on 144; the run 20x cheaper).
      {{"--model", "deepseek-v3", "--topology", "trn3@0-7"},
       moe_decode_bytes(8),
       61,
       61 * 8 + 3 * 4 + 58 * (5 + 3) + 3},
      {{"--model", "deepseek-v3", "--topology", "nvl72@0-7"},
       moe_decode_bytes(8),
       61,
       61 * 8 + 3 * 4 + 58 * 8 + 3},
      {{"--model", "llama3-70b", "--tp", "4"}, dense_decode_bytes(4), 80, 80 * (6 + 4) + 3},
      {{"--model", "llama3-70b", "--tp", "8", "--topology", "hgx-h100"},
       dense_decode_bytes(8),
       80,
       80 * 10 + 3},
      {{"--model", "llama3-70b", "--tp", "4", "--topology", "trn2-ultraserver"},
       dense_decode_bytes(4),
       80,
       80 * 10 + 3},
      {{"--model", "llama3-70b", "--tp", "8", "--topology", "hgx-h100", "--chip", "h200"},
       dense_decode_bytes(8),
       80,
       80 * 10 + 3},
      {{"--model", "llama3-70b", "--tp", "8", "--topology", "hgx-h100", "--chip", "h800"},
       dense_decode_bytes(8),
       80,
       80 * 10 + 3},
      {{"--model", "deepseek-v3", "--topology", "nvl72@0-7", "--chip", "b200"},
       moe_decode_bytes(8),
       61,
       61 * 8 + 3 * 4 + 58 * 8 + 3}};
  for (const Case& c : cases) {
    const std::vector<std::string> run = plus(c.run, {"--batch", "1", "--phase", "decode"});
    std::string what;
    for (const auto& w : c.run) what += w + " ";
    INFO(what);
    const json step = serve_json(run);
    const json comm = serve_json(plus(plus(run, kFreeChip), kNoFixedCosts));
    // The profile's own numbers, as `ultrasim list chips` gives them.
    CliResult list = run_cli({"list", "chips", "--format", "json"});
    REQUIRE(list.status == 0);
    std::map<std::string, std::string> v;
    const json chips = json::parse(list.out)["chips"];
    for (const auto& chip : chips)
      if (chip["name"] == step["chip"])
        for (const auto& x : chip["values"]) v[x["name"].get<std::string>()] = x["value"].get<std::string>();
    using ultrasim::parse_rate, ultrasim::parse_time;
    const double hbm = parse_rate(v["hbm_bandwidth"]) * std::stod(v["hbm_efficiency"]);
    const double fixed = c.kernels * parse_time(v["kernel_overhead"]) +
                         c.layers * parse_time(v["layer_overhead"]) + parse_time(v["step_overhead"]) +
                         parse_time(v["request_overhead"]);  // the host's one request
    const double expected = fixed + c.bytes / hbm + comm["tpot_s"].get<double>();
    CHECK(step["tpot_s"].get<double>() == Approx(expected).epsilon(0.02));
    // The fixed costs are the step's "overhead", but for the experts' kernels inside the MoE layers.
    const double experts = c.run[1] == "deepseek-v3" ? 58 * 3 * parse_time(v["kernel_overhead"]) : 0;
    CHECK(step["bound_s"]["overhead"].get<double>() == Approx(fixed - experts).epsilon(1e-9));
  }
}

TEST_CASE("large-batch prefill is compute-bound: its compute is its FLOPs at peak x efficiency") {
  // 72 requests of 2048 tokens on tp 4 x dp 36: 4096 tokens per group.
  const json r = serve_json(plus(
      {"--model", "llama3-70b", "--tp", "4", "--batch", "72", "--input-len", "2048", "--phase", "prefill"},
      kRoofline));
  CHECK(r["prefill_bound"] == "compute");
  const double tokens = 4096, positions = 2048.0 * 2049 / 2;  // a request's tokens attend 1..2048
  const double per_layer =
      (2 * 150994944.0 * tokens + 4.0 * 64 * 128 * positions * 2 + 2 * 704643072.0 * tokens) / 4;
  const double flops = 80 * per_layer + 2.0 * 128256 * 8192 / 4 * 2;  // + logits of each request's last token
  const double compute = flops / (2.517e15 * 0.6);
  const json& parts = r["prefill_parts_s"];
  const double simulated =
      parts["attention"].get<double>() + parts["ffn"].get<double>() + parts["lm head"].get<double>();
  CHECK(simulated == Approx(compute).epsilon(0.02));
  CHECK(r["prefill_mfu"].get<double>() < 0.6);  // compute_efficiency, less the all-reduces' share
}

TEST_CASE("a serving step's MoE layers are ultrasim moe's, and its all-reduces ultrasim run's") {
  // Under auto a contended layer is priced from its matrices (sim/README.md, engines): ultrasim moe's on
  // the matrix engine.
  const json r = serve_json({"--model", "deepseek-v3", "--batch", "144", "--phase", "decode", "--seed", "5"});
  REQUIRE(r["moe_layer_s"].size() == 58);
  CHECK(r["engine"] == "matrix");
  // ultrasim moe with trn3's chip profile (its defaults are the roofline's).
  CliResult list = run_cli({"list", "chips", "--format", "json"});
  REQUIRE(list.status == 0);
  std::vector<std::string> trn3;
  const json chips = json::parse(list.out)["chips"];
  for (const auto& v : chips[0]["values"])
    if (v["name"] != "hbm_capacity")  // serving's memory check, not a parameter of the layer
      trn3.insert(trn3.end(), {"--set", v["name"].get<std::string>() + "=" + v["value"].get<std::string>()});
  REQUIRE(chips[0]["name"] == "trn3");
  for (const auto& [index, layer] : {std::pair{0, 3}, std::pair{57, 60}}) {
    CliResult moe = run_cli(plus({"moe",
                                  "--topology",
                                  "trn3",
                                  "--experts",
                                  "256",
                                  "--top-k",
                                  "8",
                                  "--tokens-per-chip",
                                  "1",
                                  "--hidden",
                                  "7168",
                                  "--ffn",
                                  "2048",
                                  "--router",
                                  "random",
                                  "--seed",
                                  std::to_string(5 + (static_cast<long>(layer) << 20)),
                                  "--engine",
                                  "matrix",
                                  "--format",
                                  "json"},
                                 trn3));
    INFO(moe.err);
    REQUIRE(moe.status == 0);
    CHECK(r["moe_layer_s"][index].get<double>() ==
          Approx(json::parse(moe.out)["layer_time_s"].get<double>()).epsilon(1e-9));
  }
  // Nothing overlaps: the step is the sum of its parts, each simulated alone, and the fixed costs around
  // them: Trainium3's 165 us per layer, 437 us per step and 44.8 us per request of a group (one each).
  double sum = 0;
  for (const auto& [what, s] : r["parts_s"].items()) sum += s.get<double>();
  CHECK(r["tpot_s"].get<double>() == Approx(sum + 61 * 165e-6 + 437e-6 + 44.8e-6).epsilon(1e-12));

  const json d = serve_json({"--model", "llama3-70b", "--tp", "4", "--batch", "72", "--phase", "decode"});
  const json& tp = d["tp_allreduce"];
  REQUIRE(tp["bytes"] == 2 * 8192 * 2);  // each group's two tokens
  const json alone = run_json({"--topology", "trn3", "--collective", "allreduce", "--algorithm", "auto",
                               "--size", "32768", "--groups", "tp", "--layout", "tp=4,dp=36"});
  CHECK(tp["time_s"].get<double>() == Approx(alone["time_s"].get<double>()).epsilon(1e-12));
  CHECK(d["parts_s"]["tp"].get<double>() == Approx(160 * alone["time_s"].get<double>()).epsilon(1e-12));
}

TEST_CASE("serve prices contended layers on the matrix engine within 0.5 % of the exact one, and checks it") {
  // Four MoE layers of 16 experts (top-2) on eight chips, 256 tokens per chip: contended all-to-alls.
  const std::string model =
      temp_file("fast-model.json", R"({"layers": 4, "hidden": 1024, "vocab": 1000, "heads": 8,
      "experts": 16, "top_k": 2, "expert_ffn": 4096})");
  const std::vector<std::string> base{"--topology", "switch:8", "--model-file", model,
                                      "--batch",    "2048",     "--phase",      "decode"};
  const json fast = serve_json(plus(base, {"--check-engine", "3"}));
  const json exact = serve_json(plus(base, {"--engine", "flow"}));
  CHECK(fast["engine"] == "matrix");
  CHECK(fast["engine_error"].get<std::string>().find("p99") != std::string::npos);
  CHECK(fast["engine_check"]["engine"] == "matrix");
  CHECK(exact["engine"] == "flow");
  CHECK(std::abs(fast["tpot_s"].get<double>() / exact["tpot_s"].get<double>() - 1) < 0.005);
  const json& check = fast["engine_check"];
  CHECK(check["exchanges"] == 3);  // the first three layers' MoE all-to-alls
  CHECK(check["worst"].get<std::string>().find("moe of layer") == 0);
  CHECK(check["max_rel_diff"].get<double>() < 0.005);
  // The check's exact time of its worst layer is one of the exact run's layers.
  bool found = false;
  for (const auto& s : exact["moe_layer_s"])
    found = found || std::abs(s.get<double>() / check["worst_exact_s"].get<double>() - 1) < 1e-9;
  CHECK(found);
}

TEST_CASE("with skewed experts the balancing placement lowers the tail of TPOT") {
  // Four MoE layers of 16 experts (top-2) on eight chips, 256 tokens per chip, Zipf 1.2.
  const std::string model =
      temp_file("skew-model.json", R"({"layers": 4, "hidden": 1024, "vocab": 1000, "heads": 8,
      "experts": 16, "top_k": 2, "expert_ffn": 4096})");
  const std::vector<std::string> base{"--topology", "switch:8", "--model-file", model,       "--batch",
                                      "2048",       "--phase",  "decode",       "--batches", "8"};
  const std::vector<std::string> run = plus(base, {"--zipf", "1.2"});
  const json contiguous = serve_json(run);
  // Same inputs and seed, the same bytes (its MoE layers simulated in child processes, in any order).
  std::vector<std::string> words = plus(run, {"--format", "json"});
  words.insert(words.begin(), "serve");
  CliResult again = run_cli(words);
  REQUIRE(again.status == 0);
  CHECK(json::parse(again.out) == contiguous);
  const json balanced = serve_json(plus(run, {"--placement", "balanced"}));
  const json spread = serve_json(plus(run, {"--placement", "round-robin"}));
  CHECK(balanced["tpot_p99_s"].get<double>() < contiguous["tpot_p99_s"].get<double>());
  CHECK(balanced["tpot_p99_s"].get<double>() <= spread["tpot_p99_s"].get<double>());
  CHECK(balanced["tpot_p50_s"].get<double>() < contiguous["tpot_p50_s"].get<double>());
  // Unskewed, the tail is shorter still.
  const json flat = serve_json(plus(base, {"--zipf", "0"}));
  CHECK(flat["tpot_p99_s"].get<double>() < contiguous["tpot_p99_s"].get<double>());
}

TEST_CASE("two micro-batches hide communication behind compute, never below either stream") {
  // Prefill, where the tp all-reduces of 4096 tokens take a third of the step.
  const std::vector<std::string> run{"--model", "llama3-70b",  "--tp", "4",       "--batch",
                                     "72",      "--input-len", "2048", "--phase", "prefill"};
  const json plain = serve_json(run);
  const json overlap = serve_json(plus(run, {"--micro-batches", "2"}));
  const json& parts = overlap["prefill_parts_s"];  // each half's segments, each alone
  const double compute =
      parts["attention"].get<double>() + parts["ffn"].get<double>() + parts["lm head"].get<double>();
  const double comm = parts["tp"].get<double>();
  CHECK(overlap["ttft_s"].get<double>() < plain["ttft_s"].get<double>());
  CHECK(overlap["ttft_s"].get<double>() >= std::max(compute, comm) * (1 - 1e-12));
  CHECK(overlap["ttft_s"].get<double>() < compute + comm);
  // Overlap that costs something: with comm_share 0.3 the compute beside each all-reduce runs at 70 %.
  // Every layer is compute-bound here (C + 0.3 M > M), so each costs C + 0.3 M: the step is the compute
  // plus 0.3 x the communication, longer than max(compute, communication) of any layer.
  const json shared = serve_json(plus(plus(run, {"--micro-batches", "2"}), {"--set", "comm_share=0.3"}));
  const json& p = shared["prefill_parts_s"];
  const double c = p["attention"].get<double>() + p["ffn"].get<double>() + p["lm head"].get<double>();
  const double m = p["tp"].get<double>();
  CHECK(shared["ttft_s"].get<double>() == Approx(c + 0.3 * m + 80 * 2 * 165e-6 + 437e-6 + 2 * 44.8e-6)
                                              .epsilon(1e-9));  // + 2 passes' layer costs, the step's,
  CHECK(shared["ttft_s"].get<double>() > overlap["ttft_s"].get<double>());
  // Decode is HBM-bound: each half reads every weight again, and the overlap is slower.
  const std::vector<std::string> decode{"--model", "llama3-70b", "--tp",    "4",
                                        "--batch", "1152",       "--phase", "decode"};
  CHECK(serve_json(plus(decode, {"--micro-batches", "2"}))["tpot_s"].get<double>() >
        serve_json(decode)["tpot_s"].get<double>());
}

TEST_CASE("a batch frontier answers the best batch size under a p99 TPOT target") {
  const json r = serve_json({"--model", "llama3-70b", "--tp", "4", "--batch", "36:576:x2", "--phase",
                             "decode", "--tpot-target", "30ms", "--tpot-target", "1us"});
  REQUIRE(r["points"].size() == 5);
  double best = 0;
  std::uint64_t batch = 0;
  double last = 0;
  for (const auto& p : r["points"]) {
    CHECK(p["tokens_per_s_per_chip"].get<double>() > last);  // more requests, more tokens per step
    last = p["tokens_per_s_per_chip"].get<double>();
    if (p["tpot_p99_s"].get<double>() <= 0.030 && p["tokens_per_s_per_chip"].get<double>() > best)
      best = p["tokens_per_s_per_chip"].get<double>(), batch = p["batch"].get<std::uint64_t>();
  }
  REQUIRE(batch > 0);
  CHECK(r["frontier"][0]["batch"] == batch);
  CHECK(r["frontier"][1]["batch"].is_null());  // no step takes a microsecond
}

TEST_CASE("a serving trace shows one step: every chip's segments and every transfer, on the whole fabric") {
  const std::string trace = temp_path("serve.trace.json");
  const json r = serve_json({"--topology", "switch:8", "--model", "llama3-70b", "--tp", "4", "--batch", "2",
                             "--phase", "decode", "--trace", trace});
  const json events = json::parse(read_file(trace))["traceEvents"];
  double last_end = 0;
  int attention = 0, transfers = 0;
  for (const auto& e : events) {
    if (e["ph"] != "X") continue;
    last_end = std::max(last_end, e["ts"].get<double>() + e["dur"].get<double>());
    attention += e["name"] == "attention";
    transfers += e.contains("args") && e["args"].contains("bytes");  // on its sender's and receiver's lanes
  }
  CHECK(attention == 80 * 8);  // each layer's attention on every chip (one request per tp group)
  CHECK(transfers == 2 * static_cast<int>(r["transfers"].get<std::uint64_t>()));
  CHECK(last_end == Approx(r["tpot_s"].get<double>() * 1e6).epsilon(1e-9));  // the step, in microseconds
}

TEST_CASE("a serving workload file runs as ultrasim serve does") {
  const json file = workload_json(R"({"workload": "serving", "model": "llama3-70b", "tp": 4, "batch": 72,
                                      "phase": "decode", "input_len": 512, "output_len": 64})",
                                  "serving.json");
  const json cli = serve_json({"--model", "llama3-70b", "--tp", "4", "--batch", "72", "--phase", "decode",
                               "--input-len", "512", "--output-len", "64"});
  CHECK(file["tpot_s"] == cli["tpot_s"]);
  CHECK(file["workload"] == "serving");
}

TEST_CASE("serving refuses what cannot be deployed, saying by how much") {
  expect_input_error({"serve", "--tp", "5"}, "--tp 5 x --pp 1 does not divide the topology's 144 chips");
  expect_input_error({"serve", "--topology", "switch:4"}, "the model does not fit in HBM: chip 0 holds");
  expect_input_error(
      {"serve", "--model", "llama3-70b", "--topology", "switch:8", "--tp", "8", "--batch", "4096"},
      "the KV cache of batch 4096 does not fit");
  expect_input_error({"serve", "--model", "deepseek-v4"}, "unknown model 'deepseek-v4'; did you mean");
  expect_input_error({"serve", "--batch", "0"}, "--batch must be an integer between 1 and 16777216, not '0'");
  expect_input_error({"serve", "--micro-batches", "3"},
                     "--micro-batches must be an integer between 1 and 2, not '3'");
  expect_input_error({"serve", "--phase", "train"},
                     "--phase: unknown value 'train'; known: prefill, decode, both");
  expect_input_error({"serve", "--engine", "simgrid"}, "--engine simgrid: serve runs many simulations");
  expect_input_error({"serve", "--tpot-target", "0"}, "--tpot-target must be a time in (0, 1e6] s");
  expect_input_error({"serve", "--micro-batches", "2", "--batch", "8", "--trace", temp_path("t.json")},
                     "--trace shows one step's segments in order");
  const std::string load = temp_file("load.csv", "1,2,3\n");
  expect_input_error({"serve", "--expert-load", load}, "has 3 values; the model has 256 experts");
  const std::string lengths = temp_file("lengths.csv", "128,16\n64\n");
  expect_input_error({"serve", "--lengths", lengths}, "line 2: expected 'input,output'");
}

TEST_CASE("a drafted token per step: tokens per step 1 + a + ..., the step verifying them and the draft") {
  // Llama-3-70B, tp 4, batch 1, the roofline: the step verifies 1 + 2 tokens (the weights read once), and
  // the draft runs two passes of one layer shaped like the last (a quarter of its weights) and the LM head.
  const std::vector<std::string> run =
      plus({"--model", "llama3-70b", "--tp", "4", "--batch", "1", "--phase", "decode"}, kRoofline);
  const std::vector<std::string> mtp = plus(run, {"--draft-tokens", "2", "--acceptance", "0.5"});
  const json plain = serve_json(run), drafted = serve_json(mtp);
  CHECK(drafted["tokens_per_step"].get<double>() == 1.75);  // 1 + 0.5 + 0.25
  CHECK(drafted["draft_tokens"] == 2);
  const json comm = serve_json(plus(mtp, kFreeChip));
  const double layer = (150994944.0 + 704643072.0 + 1152.0 * 4096) / 4, head = 128256.0 * 8192 / 4;
  const double step =
      (dense_decode_bytes(4) + 2 * (layer + head)) / kHbm + comm["tpot_s"].get<double>() * 1.75;
  CHECK(drafted["tpot_s"].get<double>() * 1.75 == Approx(step).epsilon(0.02));
  CHECK(drafted["tpot_s"].get<double>() < plain["tpot_s"].get<double>());
  // Cost and energy per token count the tokens a step yields.
  CHECK(drafted["tokens_per_s"].get<double>() == Approx(1 / drafted["tpot_s"].get<double>()).epsilon(1e-12));
  // Acceptance 0: the draft is paid for and nothing gained.
  const json wasted = serve_json(plus(run, {"--draft-tokens", "2", "--acceptance", "0"}));
  CHECK(wasted["tpot_s"].get<double>() > plain["tpot_s"].get<double>());
}

TEST_CASE("4-bit weights read a quarter of 16-bit's bytes plus their scales, on chips that have them") {
  const std::vector<std::string> run{"--model",   "llama3-70b", "--tp", "4",       "--topology",
                                     "nvl72@0-3", "--batch",    "1",    "--phase", "decode"};
  const json fp4 = serve_json(plus(run, {"--weight-dtype", "nvfp4"}));
  CHECK(fp4["chip"] == "gb200");
  CHECK(fp4["model"]["weight_dtype"] == "nvfp4");
  const json bf16 = serve_json(plus(run, {"--weight-dtype", "bfloat16"}));
  CHECK(fp4["weights_bytes_per_chip"].get<double>() ==
        Approx(bf16["weights_bytes_per_chip"].get<double>() * 0.5625 / 2).epsilon(1e-12));
  // The HBM part of the step: the weights dominate it (the KV cache stays bfloat16).
  CHECK(fp4["bound_s"]["hbm"].get<double>() < 0.3 * bf16["bound_s"]["hbm"].get<double>());
  expect_input_error({"serve", "--model", "llama3-70b", "--topology", "hgx-h100", "--weight-dtype", "mxfp4"},
                     "the model's weight_dtype on h100: dtype mxfp4: this chip has no 4-bit units");
}

TEST_CASE("serve reads a chip profile file, and refuses a bad one naming the field") {
  CliResult list = run_cli({"list", "chips", "--format", "json"});
  REQUIRE(list.status == 0);
  json profile;
  const json chips = json::parse(list.out)["chips"];
  for (const auto& chip : chips)
    if (chip["name"] == "trn3") {
      profile["name"] = "my-trn3";
      for (const auto& v : chip["values"]) profile["values"][v["name"].get<std::string>()] = v["value"];
    }
  for (const char* rest : {"switch_power", "link_energy"})  // what the built-in leaves at the defaults
    profile["values"][rest] = std::string(rest) == "switch_power" ? "100" : "5";
  const std::string file = temp_file("my-trn3.json", profile.dump());
  const std::vector<std::string> run{"--model", "llama3-70b", "--tp",    "4",
                                     "--batch", "8",          "--phase", "decode"};
  const json mine = serve_json(plus(run, {"--chip", file}));
  CHECK(mine["chip"] == "my-trn3");
  CHECK(mine["chip_file"] == file);
  CHECK(mine["tpot_s"] == serve_json(run)["tpot_s"]);
  json bad = profile;
  bad["values"]["hbm_efficiency"] = 1.5;
  expect_input_error({"serve", "--chip", temp_file("bad-chip.json", bad.dump())},
                     "field 'values.hbm_efficiency': parameter hbm_efficiency: '1.5' is out of range");
  bad = profile;
  bad["values"].erase("comm_share");
  expect_input_error({"serve", "--chip", temp_file("missing-chip.json", bad.dump())},
                     "missing field 'values.comm_share'");
  expect_input_error({"serve", "--acceptance", "1.5", "--draft-tokens", "1"},
                     "--acceptance must be a number between 0 and 1");
  expect_input_error({"serve", "--acceptance", "-0.2"}, "--acceptance");
  expect_input_error({"serve", "--draft-tokens", "17"}, "--draft-tokens must be an integer between 0 and 16");
  expect_input_error({"serve", "--max-nodes-per-token", "4"}, "--max-nodes-per-token needs --node-chips");
  expect_input_error({"serve", "--weight-dtype", "float5"}, "--weight-dtype: unknown dtype 'float5'");
}

TEST_CASE("node-limited routing keeps a token's experts on few nodes: less traffic off the node") {
  // DeepSeek-V3 on two HGX nodes (16 H100), 1024 requests: at most one node per token keeps the
  // dispatch inside the node, off the NICs.
  const std::vector<std::string> run{"--model", "deepseek-v3", "--topology", "cluster:2:hgx-h100",
                                     "--batch", "1024",        "--phase",    "decode"};
  const json any = serve_json(run);
  const json one = serve_json(plus(run, {"--max-nodes-per-token", "1", "--node-chips", "8"}));
  CHECK(one["max_nodes_per_token"] == 1);
  CHECK(any["chip"] == "h100");  // the scale-up preset's chip inside a cluster spec
  CHECK(one["tpot_s"].get<double>() < any["tpot_s"].get<double>());
}

TEST_CASE("energy per token: idle = busy and no host is the old figure, and power follows the step bounds") {
  const std::vector<std::string> run{"--model",      "llama3-70b",
                                     "--tp",         "4",
                                     "--topology",   "hgx-h100@0-3",
                                     "--batch",      "8",
                                     "--input-len",  "512",
                                     "--output-len", "128",
                                     "--set",        "switch_power=0",
                                     "--set",        "link_energy=0"};
  const std::vector<std::string> flat{"--set", "idle_power_share=1",
                                      "--set", "hbm_power_share=1",
                                      "--set", "wait_power_share=1",
                                      "--set", "host_power=0",
                                      "--set", "pue=1"};
  // Every chip at chip_power (700 W), decode steps alone: p x chip_power x step / tokens, as before.
  const json old = serve_json(plus(run, flat));
  const double tpot = old["tpot_s"].get<double>(), ttft = old["ttft_s"].get<double>();
  CHECK(old["chip_power_w"].get<double>() == 700);
  CHECK(old["decode_energy_per_token_j"].get<double>() == Approx(4 * 700 * tpot / 8).epsilon(1e-12));
  // Prefill counts: the batch's prefill over the batch's output tokens.
  CHECK(old["energy_per_token_j"].get<double>() ==
        Approx(4 * 700 * tpot / 8 + 4 * 700 * ttft / (8 * 128)).epsilon(1e-12));
  CHECK(old["energy_per_token_facility_j"] == old["energy_per_token_j"]);
  // The h100 profile: 700 W while compute-bound, x 0.54 while HBM-bound, x 0.83 otherwise; one host of
  // 1,500 W; PUE 1.14.
  const json p = serve_json(run);
  auto watts = [](const json& bounds) {
    double s = 0, w = 0;
    for (const auto& [k, v] : bounds.items()) {
      const double share = k == "compute" ? 1 : k == "hbm" ? 0.54 : 0.83;
      s += v.get<double>(), w += v.get<double>() * share;
    }
    return 700 * w / s;
  };
  const double decode_w = watts(p["bound_s"]), prefill_w = watts(p["prefill_bound_s"]);
  CHECK(decode_w < 700);
  CHECK(p["chip_power_w"].get<double>() == Approx(decode_w).epsilon(1e-12));
  CHECK(p["prefill_chip_power_w"].get<double>() == Approx(prefill_w).epsilon(1e-12));
  const double chips_j = 4 * decode_w * tpot / 8 + 4 * prefill_w * ttft / (8 * 128);
  CHECK(p["energy_per_token_chips_j"].get<double>() == Approx(chips_j).epsilon(1e-12));
  CHECK(p["energy_per_token_j"].get<double>() ==
        Approx(chips_j + 1500 * tpot / 8 + 1500 * ttft / (8 * 128)).epsilon(1e-12));
  CHECK(p["energy_per_token_facility_j"].get<double>() ==
        Approx(1.14 * p["energy_per_token_j"].get<double>()).epsilon(1e-12));
  // A cap bounds the power (not the speed).
  const json capped = serve_json(plus(run, {"--set", "power_cap=300"}));
  CHECK(capped["chip_power_w"].get<double>() == 300);
  CHECK(capped["tpot_s"] == p["tpot_s"]);
}

TEST_CASE(
    "the host's time per step: step_overhead + request_overhead per request of the busiest group, "
    "hidden behind the chips by an overlap scheduler") {
  // Llama-3-70B on 8 H100, tp 2: 4 data-parallel groups; 70 requests put 18 on the busiest.
  const std::vector<std::string> run{"--model",  "llama3-70b", "--tp", "2",       "--topology",
                                     "hgx-h100", "--batch",    "70",   "--phase", "decode"};
  const json none = serve_json(plus(run, {"--set", "step_overhead=0s", "--set", "request_overhead=0s"}));
  const json host = serve_json(plus(run, {"--set", "step_overhead=1ms", "--set", "request_overhead=100us"}));
  const double chips = none["tpot_s"].get<double>();
  CHECK(host["tpot_s"].get<double>() == Approx(chips + 1e-3 + 18 * 100e-6).epsilon(1e-12));
  CHECK(host["bound_s"]["overhead"].get<double>() - none["bound_s"]["overhead"].get<double>() ==
        Approx(1e-3 + 18 * 100e-6).epsilon(1e-9));
  // An overlap scheduler: the host prepares the next step while the chips run this one.
  const json hidden = serve_json(plus(
      run, {"--set", "step_overhead=1ms", "--set", "request_overhead=100us", "--set", "host_overlap=1"}));
  CHECK(hidden["tpot_s"].get<double>() == Approx(chips).epsilon(1e-12));  // 2.8 ms of host < the chips' step
  const json longer = serve_json(plus(run, {"--set", "step_overhead=1s", "--set", "host_overlap=1"}));
  CHECK(longer["tpot_s"].get<double>() == Approx(1 + 18 * 44.8e-6).epsilon(1e-12));  // the host bounds it
  const json half = serve_json(plus(
      run, {"--set", "step_overhead=1ms", "--set", "request_overhead=100us", "--set", "host_overlap=0.5"}));
  CHECK(half["tpot_s"].get<double>() == Approx(chips + 0.5 * (1e-3 + 18 * 100e-6)).epsilon(1e-12));
}

TEST_CASE(
    "a static batch may draw its lengths, and the balance of the attention over the groups is reported") {
  // Llama-3-70B on 8 H100 at tp 2: 4 data-parallel groups of 16 requests each.
  const std::vector<std::string> run{"--model",     "llama3-70b", "--tp",         "2",
                                     "--topology",  "hgx-h100",   "--batch",      "64",
                                     "--input-len", "2000",       "--output-len", "200"};
  const json fixed = serve_json(run);
  CHECK(fixed["length_dist"] == "fixed");
  CHECK(fixed["attention_balance"] == 1.0);  // every group the same contexts
  CHECK(fixed["prefill_attention_balance"] == 1.0);
  const json drawn = serve_json(plus(run, {"--length-dist", "lognormal:0.8"}));
  CHECK(drawn["length_dist"] == "lognormal:0.8");
  const double balance = drawn["attention_balance"].get<double>();
  CHECK(balance > 0.5);
  CHECK(balance < 0.99);
  CHECK(serve_json(plus(run, {"--length-dist", "lognormal:0.8"})) == drawn);  // same seed, same draws
  CHECK(serve_json(plus(run, {"--length-dist", "lognormal:0.8", "--seed", "1"}))["attention_balance"] !=
        balance);
  expect_input_error(plus({"serve"}, plus(run, {"--length-dist", "lognormal:9"})),
                     "--length-dist lognormal:SIGMA needs SIGMA in [0, 4]");
}

TEST_CASE("calibrate-chip --tables writes a profile that carries its table, and serve prices from it") {
  // Two rows of Llama-3-70B's FFN gate-up GEMM at tp 8 (n 2 x 28672 / 8, k 8192), far slower than the
  // roofline: at batch 1 (m 1, a row) each of the 80 layers' gate-up costs the row's 1 ms.
  const std::string table = temp_file(
      "slow-gemm.csv", "operation,m,n,k,seconds\ngemm,1,7168,8192,1e-3\ngemm,1024,7168,8192,2e-3\n");
  const std::string profile = temp_file("h800-tabled.json", "");
  CliResult fit = run_cli({"calibrate-chip", "--chip", "h800", "--tables", table, "-o", profile});
  INFO(fit.err);
  REQUIRE(fit.status == 0);
  std::ifstream in(profile);
  const json written = json::parse(in);
  CHECK(written["values"]["kernel_tables"] == "inline");
  REQUIRE(written["tables"].size() == 2);
  CHECK(written["tables"][1]["seconds"] == 2e-3);
  const std::vector<std::string> run{"--model",  "llama3-70b", "--tp", "8",       "--topology",
                                     "hgx-h100", "--batch",    "1",    "--phase", "decode"};
  const json tabled = serve_json(plus(run, {"--chip", profile}));
  const json roofline = serve_json(plus(run, {"--chip", profile, "--set", "kernel_tables=none"}));
  CHECK(tabled["kernels_tabled"] == json::array({"gemm"}));
  CHECK(roofline["kernels_tabled"].empty());
  // The profile's roofline is refitted on the same rows, so it reproduces them: with or without the table
  // the step is nearly the same.
  CHECK(tabled["tpot_s"].get<double>() == Approx(roofline["tpot_s"].get<double>()).epsilon(1e-3));
  // On the built-in h800 the table is 80 x (1 ms - the roofline's share of that GEMM: its 59 MB of weights,
  // about 18 us) slower than the roofline.
  const json h800 = serve_json(plus(run, {"--chip", "h800", "--set", "kernel_tables=none"}));
  const json slow = serve_json(plus(run, {"--chip", "h800", "--set", "kernel_tables=" + table}));
  const double more = slow["tpot_s"].get<double>() - h800["tpot_s"].get<double>();
  CHECK(more > 80 * (1e-3 - 30e-6));
  CHECK(more < 80 * 1e-3);
  // A bad table is refused naming the file, the row and the field.
  const std::string bad = temp_file("bad-gemm.csv", "operation,m,n,k,seconds\ngemm,1,7168,8192,-1e-3\n");
  CliResult refused = run_cli({"calibrate-chip", "--chip", "h800", "--tables", bad});
  CHECK(refused.status == 2);
  CHECK_THAT(refused.err, Catch::Contains(bad) && Catch::Contains("line 2: field 'seconds'"));
}
