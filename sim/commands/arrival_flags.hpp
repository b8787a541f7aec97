// The request-arrival options `ultrasim serve` and `ultrasim plan` share, declared once: their names,
// defaults and help (the values stay text until each command reads them into its own form: serve into a
// ProductionConfig, plan into the serving workload its deployments run).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace ultrasim {

struct ArrivalFlags {
  std::string requests, rate, num_requests, burstiness = "1", length_dist = "fixed", slo_ttft, slo_tpot,
                                            max_batch = "256", token_budget = "8192";
};

inline void add_arrival_options(CLI::App& app, ArrivalFlags& f, const std::string& num_requests) {
  f.num_requests = num_requests;
  app.add_option("--requests", f.requests,
                 "request arrivals from a trace: CSV or JSON Lines of arrival, prompt and output tokens");
  app.add_option("--rate", f.rate, "request arrivals generated at this many requests/s (with --seed)");
  app.add_option("--num-requests", f.num_requests,
                 "requests --rate generates (default " + num_requests + ")");
  app.add_option("--burstiness", f.burstiness,
                 "gamma shape of the gaps between arrivals: 1 Poisson (default), < 1 burstier");
  app.add_option("--length-dist", f.length_dist,
                 "generated lengths around --input-len/--output-len: fixed (default) | uniform:R | "
                 "lognormal:SIGMA");
  app.add_option("--max-batch", f.max_batch, "requests a data-parallel group runs at once (default 256)");
  app.add_option("--token-budget", f.token_budget,
                 "tokens of a data-parallel group in one iteration (default 8192)");
  app.add_option("--slo-ttft", f.slo_ttft, "goodput: a request's TTFT within this (2s)");
  app.add_option("--slo-tpot", f.slo_tpot, "goodput: a request's TPOT within this (50ms)");
}

}  // namespace ultrasim
