// A stack's terms as a prepared collective carries them: in model_s (launch + per-transfer step latency,
// links scaled by the protocol's efficiency), not in bound_s, and the protocol auto picks.
#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "workloads/collective/collective_job.hpp"

using namespace ultrasim;

namespace {
using Sets = std::vector<std::pair<std::string, std::string>>;
PreparedJob prepared(const std::string& topology, const std::string& algorithm, std::uint64_t bytes,
                     Sets sets, const std::string& collective = "allreduce") {
  return prepare(CollectiveJob{topology, collective, algorithm, bytes, "float32", 0, std::move(sets)});
}
double model_of(const PreparedJob& job) {
  return compute_metrics(job, 1).model_s;
}
double bound_of(const PreparedJob& job) {
  return compute_metrics(job, 1).bound_s;
}
}  // namespace

TEST_CASE("each topology has its default stack: presets their vendor's library, generic fabrics ideal") {
  CHECK(prepared("switch:8", "ring", 1024, {}).stack->name == "ideal");
  CHECK(prepared("hgx-h100", "ring", 1024, {}).stack->name == "nccl");
  CHECK(prepared("nvl72", "ring", 1024, {}).stack->name == "nccl");
  CHECK(prepared("trn3", "ring", 1024, {}).stack->name == "neuron");
  CHECK(prepared("trn2", "ring", 1024, {}).stack->name == "neuron");
  CHECK(prepared("cluster:2:hgx-h100", "ring", 1024, {}).stack->name == "nccl");
  CHECK(prepared("hgx-h100", "ring", 1024, {{"stack", "ideal"}}).stack->name == "ideal");
  CHECK_THROWS_WITH(prepared("switch:8", "ring", 1024, {{"stack", "ncl"}}),
                    Catch::Contains("did you mean 'nccl'"));
  CHECK_THROWS_WITH(prepared("switch:8", "ring", 1024, {{"stack", "nccl"}, {"protocol", "LL64"}}),
                    Catch::Contains("unknown protocol of stack nccl 'LL64'"));
}

TEST_CASE("a protocol adds its launch latency once and its step latency to every transfer, bound_s stays") {
  // Simple moves data at the full rate: the ring's model is the ideal one with 3.4 us more per transfer,
  // plus 8.4 us of launch (NCCL's ring/Simple terms).
  const PreparedJob simple =
      prepared("hgx-h100", "ring", 1 << 20, {{"stack", "nccl"}, {"protocol", "Simple"}});
  const PreparedJob fabric =
      prepared("hgx-h100", "ring", 1 << 20, {{"stack", "ideal"}, {"transfer_overhead", "3.4us"}});
  CHECK(model_of(simple) == Approx(8.4e-6 + model_of(fabric)).epsilon(1e-12));
  CHECK(bound_of(simple) ==
        Approx(bound_of(prepared("hgx-h100", "ring", 1 << 20, {{"stack", "ideal"}}))).epsilon(1e-12));
  // LL halves every link's rate: the same as links of half the efficiency, 0.6 us per transfer, 6.6 us
  // launch.
  const PreparedJob ll = prepared("switch:8", "ring", 1 << 20, {{"stack", "nccl"}, {"protocol", "LL"}});
  const PreparedJob half =
      prepared("switch:8", "ring", 1 << 20,
               {{"stack", "ideal"}, {"link_efficiency", "0.5"}, {"transfer_overhead", "0.6us"}});
  CHECK(model_of(ll) == Approx(6.6e-6 + model_of(half)).epsilon(1e-12));
  // The bound is the fabric's own: no launch, no step latency, the links' full rate.
  CHECK(bound_of(ll) == Approx(bound_of(prepared("switch:8", "ring", 1 << 20, {}))).epsilon(1e-12));
  // The user's transfer_overhead adds to the step latency.
  const PreparedJob both = prepared("switch:8", "ring", 1 << 20,
                                    {{"stack", "nccl"}, {"protocol", "LL"}, {"transfer_overhead", "1us"}});
  CHECK(both.cost_input().transfer_overhead == Approx(1.6e-6).epsilon(1e-12));
}

TEST_CASE("protocol auto picks, per size, the algorithm x protocol pair of lowest model, among the stack's") {
  // 8 GPUs: at 8 bytes LL's small latencies win; at 4 GiB Simple's full rate.
  const PreparedJob small = prepared("hgx-h100", "auto", 8, {});
  CHECK(small.protocol.name == "LL");
  const PreparedJob large = prepared("hgx-h100", "auto", std::uint64_t{1} << 32, {});
  CHECK(large.protocol.name == "Simple");
  CHECK(large.entry->name == "nvls");
  CHECK_THROWS_WITH(prepared("hgx-h100", "nvls", 8, {{"protocol", "LL"}}),
                    "protocol LL of stack nccl does not run nvls; set protocol=auto or another protocol");
  CHECK(prepared("hgx-h100", "nvls", 8, {}).protocol.name == "Simple");
  // Every pair of the stack's all-reduce algorithms with each protocol that runs it: ring and
  // double-binary-tree with LL, LL128 and Simple, nvls with Simple only.
  REQUIRE(small.auto_ranking.size() == 7);
  for (std::size_t i = 1; i < small.auto_ranking.size(); ++i)
    CHECK(small.auto_ranking[i - 1].model_s <= small.auto_ranking[i].model_s);
  // The ranking is the stack's prediction with every channel open (NCCL's); the run opens 1 of 24 for 8
  // bytes: its 14 transfers of 1 byte go at 0.5/24 of a GPU's 370 GB/s instead of 0.5.
  CHECK(model_of(small) - small.auto_ranking.front().model_s == Approx(14 / 370e9 * (48 - 2)).epsilon(1e-6));
  // A fixed algorithm still gets its best protocol.
  const PreparedJob ring = prepared("hgx-h100", "ring", 8, {});
  CHECK(ring.protocol.name == "LL");
  CHECK(ring.auto_ranking.empty());
  for (const char* protocol : {"LL", "LL128", "Simple"})
    CHECK(model_of(ring) <= model_of(prepared("hgx-h100", "ring", 8, {{"protocol", protocol}})));
  // The ideal stack keeps the whole catalogue: one-shot wins small all-reduces there, or switch-reduce
  // where the switches reduce (NVSwitch does: only nccl's list leaves switch-reduce out).
  CHECK(prepared("hgx-h100", "auto", 8, {{"stack", "ideal"}}).entry->name == "switch-reduce");
  CHECK(prepared("hgx-h100", "auto", 8, {{"stack", "ideal"}, {"switch_reduction", "false"}}).entry->name ==
        "one-shot");
}

TEST_CASE("a small message opens few channels: nccl's LL one per 4 KiB x ranks, LL128 one per 5 KiB, of 24") {
  auto scale = [](std::uint64_t bytes, const std::string& protocol, Sets sets = {}) {
    sets.push_back({"protocol", protocol});
    return prepared("hgx-h100", "ring", bytes, sets).link_scale();
  };
  CHECK(scale(8, "LL") == 0.5 / 24);                  // one channel, however small
  CHECK(scale(64 << 10, "LL") == 0.5 * 2 / 24);       // 64 KiB / (4 KiB x 8 ranks) = 2
  CHECK(scale(1 << 20, "LL") == 0.5);                 // 32 channels' worth: all 24
  CHECK(scale(64 << 10, "LL128") == 0.92 * 12 / 24);  // floor(64 / 5) = 12
  CHECK(scale(64 << 10, "Simple") == 1);              // Simple: not modelled (it runs where all are open)
  // The ranks are the collective's: on 2 chips, 64 KiB / (4 KiB x 2) = 8 channels.
  CHECK(find_stack("nccl").protocol("LL").open_channels(64 << 10, 2) == 8);
  // The run costs what the channels it lacks cost: the ring's 14 transfers of 8 KiB, striped over a GPU's
  // 370 GB/s, at 0.5 x 2/24 of it instead of 0.5 (the same stack with every channel open).
  CollectiveJob job{"hgx-h100", "allreduce", "ring", 64 << 10, "float32", 0, {{"protocol", "LL"}}};
  const double few = model_of(prepare(job));
  Stack open = find_stack("nccl");
  for (Protocol& p : open.protocols) p.channels = 0;
  job.stack = std::make_shared<const Stack>(open);
  CHECK(few - model_of(prepare(job)) == Approx(14 * 8192.0 / 370e9 * (24 - 2)).epsilon(1e-9));
}

TEST_CASE("between scale-up domains a transfer pays the protocol's network step latency once") {
  const PreparedJob ideal = prepared("cluster:2:switch:4", "ring", 1024, {{"stack", "ideal"}});
  const PreparedJob neuron = prepared("cluster:2:switch:4", "ring", 1024, {{"stack", "neuron"}});
  // Chips 0-3 are domain 0, 4-7 domain 1.
  CHECK(neuron.routes->route_latency(0, 1) == Approx(ideal.routes->route_latency(0, 1)).epsilon(1e-12));
  CHECK(neuron.routes->route_latency(0, 5) ==
        Approx(ideal.routes->route_latency(0, 5) + 15e-6).epsilon(1e-12));
  CHECK(neuron.cost_input().alpha(0, 5) ==
        Approx(ideal.cost_input().alpha(0, 5) + 15e-6 + 1.5e-6).epsilon(1e-12));
}
