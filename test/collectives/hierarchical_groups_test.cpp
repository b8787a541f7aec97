// Hierarchical collectives on groups of chips (--groups): a group's members split by their own levels,
// inner phases among members of one server or domain, outer phases across them, as the whole-topology
// algorithm does for every chip.
#include <catch2/catch.hpp>

#include "cli_runner.hpp"

using ultrasim::test::run_json;

namespace {

nlohmann::json run_64mib(const std::string& topology, const std::string& collective,
                         const std::string& algorithm, std::vector<std::string> more = {}) {
  std::vector<std::string> args{"--topology",  topology,  "--collective", collective,
                                "--algorithm", algorithm, "--size",       "64MiB"};
  args.insert(args.end(), more.begin(), more.end());
  return run_json(args);
}
double time_s_of(const nlohmann::json& j) {
  return j["time_s"].get<double>();
}
double model_s_of(const nlohmann::json& j) {
  return j["model_s"].get<double>();
}

}  // namespace

TEST_CASE("a hierarchical group spanning two servers runs as those chips do as a topology of their own",
          "[hierarchical][groups]") {
  // cluster:2:hgx-h100: two 8-GPU servers joined by rails. Chips 1,3,5 | 8,10,12: two groups of 3 by
  // server (blocks of floor(sqrt 6) = 2 would be three); 0-4 | 8-10: unequal groups of 5 and 3.
  for (const char* chips : {"1,3,5,8,10,12", "0-4,8-10"})
    for (const char* collective : {"allreduce", "allgather", "reducescatter"}) {
      INFO(chips << " " << collective);
      const auto group = run_64mib("cluster:2:hgx-h100", collective, "hierarchical",
                                   {"--groups", std::string("chips:") + chips});
      const auto own = run_64mib(std::string("cluster:2:hgx-h100@") + chips, collective, "hierarchical");
      CHECK(group["verified"] == true);
      CHECK(own["verified"] == true);
      CHECK(time_s_of(group) == Approx(time_s_of(own)).epsilon(1e-9));
      CHECK(model_s_of(group) == Approx(model_s_of(own)).epsilon(1e-9));
      CHECK(group["transfers"] == own["transfers"]);
    }
  // The figures: 1.228 ms and 1.476 ms for the all-reduces; blocks of 2 would take 5.410 ms on the first.
  const auto three =
      run_64mib("cluster:2:hgx-h100", "allreduce", "hierarchical", {"--groups", "chips:1,3,5,8,10,12"});
  CHECK(time_s_of(three) == Approx(1.2277866356756755e-3).epsilon(1e-9));
  const auto blocks = run_64mib("cluster:2:hgx-h100", "allreduce", "hierarchical",
                                {"--groups", "chips:1,3,5,8,10,12", "--set", "groups=2"});
  CHECK(time_s_of(blocks) > 4 * time_s_of(three));
  // Every chip as one group is the whole topology.
  const auto all = run_64mib("cluster:2:hgx-h100", "allreduce", "hierarchical", {"--groups", "chips:0-15"});
  CHECK(time_s_of(all) ==
        Approx(time_s_of(run_64mib("cluster:2:hgx-h100", "allreduce", "hierarchical"))).epsilon(1e-12));
}

TEST_CASE("a layout's data-parallel groups across domains: hierarchical beats the ring and meets its model",
          "[hierarchical][groups]") {
  // cluster:4:switch:4, tp=2: two dp groups of 8 chips, 2 in each of 4 domains. G = 4 groups of g = 2:
  // 2(g-1)(a + n/(g B)) inside (1 us, 100 GB/s) + 2(G-1)(a' + n/(p B')) across (15 us, 25 GB/s rails).
  const double n = 67108864;
  const auto cluster =
      run_64mib("cluster:4:switch:4", "allreduce", "hierarchical", {"--groups", "dp", "--layout", "tp=2"});
  const auto cluster_ring =
      run_64mib("cluster:4:switch:4", "allreduce", "ring", {"--groups", "dp", "--layout", "tp=2"});
  CHECK(cluster["verified"] == true);
  CHECK(cluster["groups"] == 2);
  CHECK(time_s_of(cluster) == Approx(2 * (1e-6 + n / 2 / 100e9) + 6 * (15e-6 + n / 8 / 25e9)).epsilon(1e-9));
  CHECK(std::abs(time_s_of(cluster) - model_s_of(cluster)) <= 1e-3 * model_s_of(cluster));
  CHECK(time_s_of(cluster) < 0.6 * time_s_of(cluster_ring));  // 2.776 against 4.714 ms
  // cluster:2:hgx-h100, tp=2 (2 groups of 4 + 4) and tp=4 (4 groups of 2 + 2): NVLink inside, rails across.
  for (const char* layout : {"tp=2", "tp=4"}) {
    INFO(layout);
    const auto h =
        run_64mib("cluster:2:hgx-h100", "allreduce", "hierarchical", {"--groups", "dp", "--layout", layout});
    const auto ring =
        run_64mib("cluster:2:hgx-h100", "allreduce", "ring", {"--groups", "dp", "--layout", layout});
    CHECK(h["verified"] == true);
    CHECK(std::abs(time_s_of(h) - model_s_of(h)) <= 1e-3 * model_s_of(h));
    CHECK(time_s_of(h) < 0.4 * time_s_of(ring));  // 1.041 against 4.739 ms; 1.605 against 4.068 ms
  }
}

TEST_CASE("a hierarchical group inside one server is one group: the inner ring alone, the ring's time",
          "[hierarchical][groups]") {
  for (const char* layout : {"tp=8", "tp=4"})
    for (const char* collective : {"allreduce", "allgather", "reducescatter"}) {
      INFO(layout << " " << collective);
      const auto h =
          run_64mib("cluster:2:hgx-h100", collective, "hierarchical", {"--groups", "tp", "--layout", layout});
      const auto ring =
          run_64mib("cluster:2:hgx-h100", collective, "ring", {"--groups", "tp", "--layout", layout});
      CHECK(h["verified"] == true);
      CHECK(time_s_of(h) == Approx(time_s_of(ring)).epsilon(1e-12));
      CHECK(model_s_of(h) == Approx(model_s_of(ring)).epsilon(1e-12));
      CHECK(h["transfers"] == ring["transfers"]);  // no outer step: not one message more
    }
}
