// Named trace shapes (`--trace-shape`): each draws its public trace's median and mean lengths, no length
// past its cap, and gaps between arrivals as bursty as the trace's (the gamma shape's CV); an unknown
// name is refused with a hint, and a shape does not mix with lengths given another way.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "topology/base/errors.hpp"
#include "workloads/serving/requests.hpp"

using namespace ultrasim;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (const double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace

TEST_CASE("a trace shape draws its trace's median and mean lengths, capped at its longest") {
  // The Azure LLM inference trace 2023, computed from its rows: conversation prompts median 1,020, mean
  // 1,155, outputs median 129, mean 211; code prompts median 1,469, mean 2,048, outputs median 13, mean 27.9.
  struct Expected {
    const char* shape;
    double prompt_median, prompt_mean, output_median, output_mean;
  };
  for (const Expected& e :
       {Expected{"conversation", 1020, 1155, 129, 211}, Expected{"code", 1469, 2048, 13, 27.9}}) {
    RequestGenerator g;
    g.rate = 10, g.count = 200000, g.shape = e.shape, g.seed = 5;
    const auto requests = generate_requests(g);
    std::vector<double> prompt, output;
    for (const ServingRequest& r : requests)
      prompt.push_back(static_cast<double>(r.prompt)), output.push_back(static_cast<double>(r.output));
    const NamedTraceShape& s = trace_shape_named(e.shape);
    INFO(e.shape);
    CHECK(median(prompt) == Approx(e.prompt_median).epsilon(0.02));
    CHECK(mean(prompt) == Approx(e.prompt_mean).epsilon(0.02));
    CHECK(median(output) == Approx(e.output_median).epsilon(0.08));  // a median of a few tokens: whole tokens
    CHECK(mean(output) == Approx(e.output_mean).epsilon(0.02));
    CHECK(*std::max_element(prompt.begin(), prompt.end()) <= s.input_max);
    CHECK(*std::max_element(output.begin(), output.end()) <= s.output_max);
  }
}

TEST_CASE("a trace shape's arrivals are as bursty as its trace") {
  // Gamma gaps of shape k have CV 1 / sqrt(k): conversation's 0.835 is near Poisson (1.09), code's 0.0058
  // the trace's 13.2.
  for (const char* shape : {"conversation", "code"}) {
    RequestGenerator g;
    g.rate = 4, g.count = 400000, g.shape = shape, g.seed = 9;
    const auto requests = generate_requests(g);
    std::vector<double> gaps;
    for (std::size_t i = 1; i < requests.size(); ++i)
      gaps.push_back(requests[i].arrival_s - requests[i - 1].arrival_s);
    const double m = mean(gaps);
    double var = 0;
    for (const double x : gaps) var += (x - m) * (x - m);
    var /= static_cast<double>(gaps.size() - 1);
    INFO(shape);
    CHECK(m == Approx(1.0 / 4).epsilon(0.05));
    CHECK(std::sqrt(var) / m == Approx(1 / std::sqrt(trace_shape_named(shape).burstiness)).epsilon(0.1));
  }
}

TEST_CASE("trace shapes: the table, an unknown name, and lengths given another way") {
  REQUIRE(trace_shapes().size() == 5);
  for (const NamedTraceShape& s : trace_shapes()) {
    CHECK(!s.source.empty());
    CHECK(s.input_max >= s.input_mean);
    CHECK(s.burstiness > 0);
  }
  CHECK_THROWS_WITH(trace_shape_named("conversaton"), Catch::Contains("did you mean 'conversation'"));
  RequestGenerator g;
  g.rate = 1, g.shape = "code", g.length_dist = "lognormal:0.5";
  CHECK_THROWS_WITH(g.validate(), Catch::Contains("--trace-shape code draws the lengths"));
}
