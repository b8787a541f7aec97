// The serving workload's model shapes, deployment and plan, without the fabric: the shapes count what
// their published configs say, the plan's rooflines are the formulas of workloads/serving/serving.hpp,
// and what does not fit is refused saying by how much.
#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "workloads/serving/serving.hpp"

using namespace ultrasim;

namespace {

ModelShape shape(const std::string& name) {
  return model_from_json(nlohmann::json(name), "test");
}

// The parameters a serving run on Trainium3 has (the defaults of serving_params()).
ParamSet trn3_params() {
  return ParamSet(serving_params());
}

}  // namespace

TEST_CASE("the built-in shapes count the weights of their published configs") {
  // Hand counts (norms left out): DeepSeek-V3's MLA is q_a 7168x1536 + q_b 1536x128x192 + kv_a 7168x576
  // + kv_b 512x128x256 + o 128x128x7168 per layer.
  const ModelShape ds = shape("deepseek-v3");
  CHECK(ds.attention_params() == 187105280.0);
  CHECK(ds.total_params() == 671025397760.0);  // published 671 B: 0.004 % over
  CHECK(ds.kv_bytes_per_token() == 1152.0);    // the latent, 512 + 64, in bfloat16
  CHECK(ds.moe_layers() == 58);
  const ModelShape ll = shape("llama3-70b");
  CHECK(ll.attention_params() == 150994944.0);
  CHECK(ll.total_params() == 70552387584.0);  // 70.55 B
  CHECK(ll.kv_bytes_per_token() == 4096.0);   // 2 x 8 KV heads x 128, bfloat16
  const ModelShape qw = shape("qwen3-235b");
  CHECK(qw.total_params() == 235092836352.0);  // published 235 B
  // Active: attention, 8 of 128 experts and the router per layer, the LM head (with the embedding's
  // 0.62 B too: 22.19 B, published 22 B).
  CHECK(qw.active_params() == 21567635456.0);
  CHECK(qw.kv_bytes_per_token() == 2048.0);
  // Scores: GQA 4 n d per context token; MLA decode attends the latent, prefill the expanded heads.
  CHECK(ll.score_flops(1, true) == 4.0 * 64 * 128);
  CHECK(ds.score_flops(1, true) == 2.0 * 128 * 576 + 2.0 * 128 * 512);
  CHECK(ds.score_flops(1, false) == 2.0 * 128 * 192 + 2.0 * 128 * 128);
}

TEST_CASE("a model given as an object is checked field by field") {
  const nlohmann::json tiny{{"layers", 2},   {"hidden", 64}, {"vocab", 100}, {"heads", 4},
                            {"kv_heads", 2}, {"experts", 8}, {"top_k", 2},   {"expert_ffn", 32}};
  const ModelShape m = model_from_json(tiny, "f");
  CHECK(m.dense_layers == 0);
  CHECK(m.head_dim == 16);
  CHECK(m.attention_params() == 64.0 * 16 * (8 + 4));
  auto broken = [&](const char* key, nlohmann::json value, const std::string& fragment) {
    nlohmann::json j = tiny;
    j[key] = value;
    CHECK_THROWS_WITH(model_from_json(j, "f"), Catch::Contains(fragment));
  };
  broken("top_k", 9, "'top_k' must be between 1 and 'experts'");
  broken("kv_heads", 3, "'kv_heads' must divide 'heads' (4)");
  broken("attention", "flash",
         "f, field 'model': field 'attention': unknown value 'flash'; known: mha, gqa, mla");
  broken("layer", 2, "unknown field 'layer'; did you mean 'layers'?");
  broken("heads", 0, "f, field 'model': field 'heads' must be an integer between 1 and 4096, not 0");
  broken("expert_zipf", 101, "field 'expert_zipf' must be a number between 0 and 100, not 101");
  CHECK_THROWS_WITH(model_from_json(nlohmann::json("deepseek-v4"), "f"), Catch::Contains("did you mean"));
}

TEST_CASE("a deployment divides the chips and the layers") {
  ServingConfig c;
  c.model = shape("llama3-70b");
  c.tp = 4;
  const ServingLayout l = serving_layout(c, 144);
  CHECK(l.dp == 36);
  CHECK(l.ep == 144);
  c.tp = 5;
  CHECK_THROWS_WITH(serving_layout(c, 144), "--tp 5 x --pp 1 does not divide the topology's 144 chips");
  c.tp = 1, c.pp = 3;
  CHECK_THROWS_WITH(serving_layout(c, 144), "--pp 3 does not divide the model's 80 layers");
}

TEST_CASE("batch sizes: geometric, arithmetic and listed") {
  CHECK(parse_batch_sizes("1:1024:x2").size() == 11);
  CHECK(parse_batch_sizes("8:32:+8") == std::vector<std::uint64_t>{8, 16, 24, 32});
  CHECK(parse_batch_sizes("1,8,64") == std::vector<std::uint64_t>{1, 8, 64});
  CHECK_THROWS_WITH(parse_batch_sizes("0"), "--batch: invalid count '0'; expected a positive integer");
  CHECK_THROWS_WITH(parse_batch_sizes("1:8:x1"),
                    "invalid --batch '1:8:x1': needs FROM > 0 and a factor >= 2");
  CHECK_THROWS_WITH(parse_batch_sizes("1:100:+1"), "--batch '1:100:+1' has more than 64 batch sizes");
}

TEST_CASE("the decode plan's rooflines: weights, KV and scores of the requests on each chip") {
  ServingConfig c;
  c.model = shape("llama3-70b");
  c.tp = 4, c.input_len = 1000, c.output_len = 200;
  const ServingLayout l = serving_layout(c, 8);  // dp 2
  // Three requests: group 0 holds two, group 1 one; every context is 1000 + 100.
  const StepPlan plan = plan_step(c, l, draw_requests(c, 3, 0), true, 0);
  CHECK(plan.tokens == 3);
  const Segment& attention = plan.segments.front();
  REQUIRE(attention.what == "attention");
  const double weights = 150994944.0 / 4;  // float8, split four ways
  const double kv = 4096.0 * 1100 / 4;     // a request's context, its 8 KV heads split over 4 chips
  CHECK(attention.chips[0].bytes == Approx(weights + 2 * kv + 2 * 2 * 8192 * 2.0).epsilon(1e-12));
  CHECK(attention.chips[4].bytes == Approx(weights + kv + 2 * 8192 * 2.0).epsilon(1e-12));
  CHECK(attention.chips[0].flops() ==
        Approx((2 * 150994944.0 * 2 + 4.0 * 64 * 128 * 2 * 1101) / 4).epsilon(1e-12));
  // Per layer: attention, tp, ffn, tp (80 layers), then the LM head.
  CHECK(plan.segments.size() == 80 * 4 + 1);
  CHECK(plan.segments[1].kind == Segment::kAllreduce);
  CHECK(plan.segments[1].bytes == 2 * 8192 * 2);  // the busiest group's two tokens, bfloat16
  const Segment& head = plan.segments.back();
  CHECK(head.chips[0].flops() == Approx(2.0 * 128256 * 8192 / 4 * 2).epsilon(1e-12));
}

TEST_CASE("the balanced placement puts the heaviest experts apart, keeping the counts per chip") {
  std::vector<double> w(8);
  for (int e = 0; e < 8; ++e) w[e] = 1.0 / (e + 1);  // Zipf 1, unnormalised
  CHECK(place_experts(8, 4, "contiguous", w) == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(place_experts(8, 4, "round-robin", w) == std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3});
  // Heaviest first to the lightest chip with room: 0..3 one each, 4 -> chip 3 (1/4), 5 -> chip 2 (1/3),
  // 6 -> chip 1 (1/2), 7 -> chip 0, the only one with room left: loads 1.125, 0.643, 0.5, 0.45 against
  // contiguous's 1.5, 0.583, 0.367, 0.268.
  CHECK(place_experts(8, 4, "balanced", w) == std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0});
}

TEST_CASE("a model that does not fit, or a batch whose KV cache does not, is refused by how much") {
  ServingConfig c;
  c.model = shape("deepseek-v3");
  const ParamSet params = trn3_params();
  const MemoryUse four = memory_use(c, serving_layout(c, 4), params, 1);
  CHECK(four.weights > four.capacity);
  CHECK_THROWS_WITH(check_memory(four, 1), Catch::Contains("the model does not fit in HBM: chip 0 holds") &&
                                               Catch::Contains("GiB short"));
  ServingConfig l;
  l.model = shape("llama3-70b");
  l.tp = 8;
  const MemoryUse use = memory_use(l, serving_layout(l, 8), params, 4096);
  // Paged: 4096 requests at the decode's mean context, 1024 + 128 = 1152 tokens (72 blocks of 16), 80
  // layers x 4096 B split 8 ways; not at their longest (1280), which continuous batching never holds.
  CHECK(use.kv == Approx(4096.0 * 1152 * 80 * 4096 / 8).epsilon(1e-12));
  l.input_len = 1000, l.output_len = 101;  // 1050 tokens: 66 blocks
  CHECK(memory_use(l, serving_layout(l, 8), params, 1).kv == Approx(1056.0 * 80 * 4096 / 8).epsilon(1e-12));
  l.phase = "prefill";  // the prompt only
  CHECK(memory_use(l, serving_layout(l, 8), params, 1).kv == Approx(1008.0 * 80 * 4096 / 8).epsilon(1e-12));
  CHECK_THROWS_WITH(check_memory(use, 4096), Catch::Contains("the KV cache of batch 4096 does not fit"));
}
