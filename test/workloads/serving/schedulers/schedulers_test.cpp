// The serving schedulers on pools whose iterations cost what a closed form says: one request at a time
// under Poisson arrivals waits what M/D/1 says (Pollaczek-Khinchine), the KV cache is never overfilled and
// preemption recomputes as documented, chunked prefill cuts prompts by the token budget, and the
// disaggregated pools hand requests over after their KV transfer.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "topology/base/errors.hpp"
#include "workloads/serving/requests.hpp"
#include "workloads/serving/schedulers/scheduler.hpp"

using namespace ultrasim;

namespace {

// A pool of `groups` groups whose iteration costs `seconds`, recording what it ran.
struct Recorder {
  std::vector<std::vector<StepItem>> steps;
  ServingPool pool(int groups, std::uint64_t blocks,
                   std::function<double(const std::vector<StepItem>&)> cost) {
    ServingPool p;
    p.groups = groups, p.kv_blocks = blocks;
    p.step = [this, cost](const std::vector<StepItem>& items) {
      steps.push_back(items);
      return cost(items);
    };
    return p;
  }
};

double constant(const std::vector<StepItem>&) {
  return 1.0;
}

}  // namespace

TEST_CASE("one request at a time under Poisson arrivals waits what M/D/1 says") {
  // Static batches of one, every request one token (its prefill): a constant service time S = 1 s.
  // Pollaczek-Khinchine: the mean wait is rho S / (2 (1 - rho)), rho = lambda S.
  for (const double rho : {0.3, 0.6}) {
    RequestGenerator g;
    g.rate = rho, g.count = 200000, g.input_len = 16, g.output_len = 1, g.seed = 7;
    const auto requests = generate_requests(g);
    Recorder rec;
    std::vector<ServingPool> pools{rec.pool(1, 1000, constant)};
    SchedulerOptions o;
    o.max_batch = 1;
    const ServingSchedule s = schedule_static(requests, pools, o);
    // Batch means over 20 batches: the wait and its standard error.
    const std::size_t batches = 20, per = requests.size() / batches;
    std::vector<double> means;
    for (std::size_t b = 0; b < batches; ++b) {
      double sum = 0;
      for (std::size_t i = b * per; i < (b + 1) * per; ++i)
        sum += s.requests[i].first_token_s - s.requests[i].arrival_s - 1.0;
      means.push_back(sum / static_cast<double>(per));
    }
    double mean = 0, var = 0;
    for (const double m : means) mean += m / batches;
    for (const double m : means) var += (m - mean) * (m - mean) / (batches - 1);
    const double se = std::sqrt(var / batches), expected = rho / (2 * (1 - rho));
    INFO("rho " << rho << ": wait " << mean << " +- " << se << ", M/D/1 " << expected);
    CHECK(se < 0.03 * expected);
    CHECK(std::abs(mean - expected) < 4 * se);
    CHECK(rec.steps.size() == requests.size());  // one iteration each, never two at once
  }
}

TEST_CASE("continuous batching fills the KV cache to its edge and preempts the last admitted beyond it") {
  // Two requests of a 16-token prompt (one block) and 4 output tokens: each needs 2 blocks at its
  // longest (16 + 3 tokens with KV). Four blocks hold both; three do not, and the second is preempted.
  std::vector<ServingRequest> requests{{0, 16, 4}, {0, 16, 4}};
  SchedulerOptions o;
  SECTION("four blocks: both run, the cache full at the edge") {
    Recorder rec;
    std::vector<ServingPool> pools{rec.pool(1, 4, constant)};
    const ServingSchedule s = schedule_continuous(requests, pools, o);
    std::uint64_t most = 0;
    for (const auto& it : s.iterations) most = std::max(most, it.kv_blocks);
    CHECK(most == 4);                       // the edge, never past it
    CHECK(s.iterations.size() == 4);        // prefill both, then 3 decode iterations of both
    CHECK(s.iterations[1].kv_blocks == 4);  // after the first decode both hold two blocks
    CHECK(s.iterations[3].kv_blocks == 0);  // and at the end every finished request has freed them
    CHECK(s.requests[0].preemptions == 0);
    CHECK(s.requests[1].preemptions == 0);
    CHECK(s.requests[1].finish_s == 4.0);
  }
  SECTION("three blocks: the second is preempted, recomputes its 17 tokens and finishes after the first") {
    Recorder rec;
    std::vector<ServingPool> pools{rec.pool(1, 3, constant)};
    const ServingSchedule s = schedule_continuous(requests, pools, o);
    for (const auto& it : s.iterations) CHECK(it.kv_blocks <= 3);
    CHECK(s.requests[0].preemptions == 0);
    CHECK(s.requests[1].preemptions == 1);
    // 1: prefill both; 2-4: request 0 decodes alone (it ends at 4); 5: request 1 recomputes its prompt
    // and first token (17 tokens) and gets its second; 6-7: its third and fourth.
    REQUIRE(rec.steps.size() == 7);
    CHECK(rec.steps[1].size() == 1);
    CHECK(rec.steps[4].size() == 1);
    CHECK_FALSE(rec.steps[4][0].decode);
    CHECK(rec.steps[4][0].tokens == 17);
    CHECK(s.requests[0].finish_s == 4.0);
    CHECK(s.requests[1].first_token_s == 1.0);  // its first token stands
    CHECK(s.requests[1].finish_s == 7.0);
  }
}

TEST_CASE("chunked prefill cuts a long prompt by the token budget and mixes it with decode tokens") {
  // Request 0: 8 prompt tokens, 6 output; request 1 arrives at 0.5 with a 100-token prompt; budget 32.
  std::vector<ServingRequest> requests{{0, 8, 6}, {0.5, 100, 2}};
  Recorder rec;
  std::vector<ServingPool> pools{rec.pool(1, 100, constant)};
  SchedulerOptions o;
  o.token_budget = 32;
  const ServingSchedule s = schedule_chunked(requests, pools, o);
  // ServingIteration 1 [0,1): request 0's prompt. Then each iteration: request 0's decode token and a chunk
  // of 31.
  REQUIRE(rec.steps.size() >= 5);
  CHECK(rec.steps[1].size() == 2);
  CHECK(rec.steps[1][1].tokens == 31);
  CHECK(rec.steps[1][1].context == 0);
  CHECK(rec.steps[2][1].context == 31);
  CHECK(rec.steps[3][1].context == 62);
  CHECK(rec.steps[4][1].tokens == 7);  // 100 = 31 + 31 + 31 + 7
  CHECK(rec.steps[4][1].last);
  CHECK(s.requests[1].first_token_s == 5.0);
  for (const auto& step : rec.steps) {
    std::uint64_t tokens = 0;
    for (const auto& i : step) tokens += i.tokens;
    CHECK(tokens <= 32);
  }
}

TEST_CASE("static batches: one request prefills whole, then decodes at each context in turn") {
  std::vector<ServingRequest> requests{{0, 100, 5}};
  Recorder rec;
  std::vector<ServingPool> pools{rec.pool(1, 100, constant)};
  schedule_static(requests, pools, SchedulerOptions{});
  REQUIRE(rec.steps.size() == 5);  // the prefill yields token 1; four decodes yield tokens 2-5
  CHECK_FALSE(rec.steps[0][0].decode);
  CHECK(rec.steps[0][0].tokens == 100);
  for (std::size_t k = 1; k < 5; ++k) CHECK(rec.steps[k][0].context == 100 + k - 1);
}

TEST_CASE("disaggregated pools: the first token at the prefill's end, the next after the KV transfer") {
  std::vector<ServingRequest> requests{{0, 64, 3}};
  Recorder pre, dec;
  std::vector<ServingPool> pools{pre.pool(2, 100, [](const auto&) { return 2.0; }),
                                 dec.pool(2, 100, [](const auto&) { return 0.5; })};
  pools[0].name = "prefill", pools[1].name = "decode";
  SchedulerOptions o;
  std::vector<KvMove> seen;
  o.transfer = [&](const std::vector<KvMove>& m) {
    seen = m;
    return 0.25;
  };
  const ServingSchedule s = schedule_disaggregated(requests, pools, o);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].tokens == 64);
  CHECK(s.requests[0].first_token_s == 2.0);
  CHECK(s.requests[0].kv_transfer_s == 0.25);
  CHECK(s.requests[0].finish_s == 2.0 + 0.25 + 0.5 + 0.5);
  REQUIRE(dec.steps.size() == 2);
  CHECK(dec.steps[0][0].context == 64);  // its first decode reads the prompt's KV, moved
}

TEST_CASE("requests that can never fit are refused before anything runs") {
  std::vector<ServingRequest> requests{{0, 1000, 10}};
  Recorder rec;
  std::vector<ServingPool> pools{rec.pool(1, 10, constant)};
  CHECK_THROWS_WITH(schedule_continuous(requests, pools, SchedulerOptions{}),
                    Catch::Contains("needs 64 KV blocks; a group of the pool pool holds 10"));
  SchedulerOptions o;
  o.token_budget = 512;
  pools[0].kv_blocks = 100;
  CHECK_THROWS_WITH(schedule_continuous(requests, pools, o), Catch::Contains("over the token budget of 512"));
  CHECK(rec.steps.empty());
  CHECK_THROWS_WITH(scheduler_entry("continous"), Catch::Contains("did you mean 'continuous'"));
}

TEST_CASE("the scheduler table: one row per scheduler, found by name, an unknown one refused with a hint") {
  const auto& table = serving_schedulers();
  REQUIRE(table.size() == 4);
  std::set<std::string> names;
  for (const SchedulerEntry& e : table) {
    INFO(e.name);
    CHECK(!e.rule.empty());
    CHECK((e.pools == 1 || e.pools == 2));
    CHECK(e.run != nullptr);
    CHECK(&scheduler_entry(e.name) == &e);
    names.insert(e.name);
  }
  CHECK(names == std::set<std::string>{"static", "continuous", "chunked", "disaggregated"});
  CHECK(scheduler_entry("disaggregated").pools == 2);
  CHECK(scheduler_entry("chunked").pools == 1);
  CHECK_THROWS_WITH(scheduler_entry("continous"), Catch::Contains("did you mean 'continuous'"));
  CHECK_THROWS_AS(scheduler_entry(""), InputError);
}
