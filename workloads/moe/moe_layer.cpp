#include "workloads/moe/moe_layer.hpp"

#include <algorithm>

#include "collectives/chip.hpp"
#include "collectives/collective.hpp"
#include "collectives/cost.hpp"

namespace ultrasim {

MoeLayer::MoeLayer(std::vector<std::vector<double>> compute_s, TrafficMatrix dispatch, TrafficMatrix combine)
    : compute_s_(std::move(compute_s)),
      dispatch_(std::move(dispatch)),
      combine_(std::move(combine)),
      chunks_(compute_s_.empty() ? 1 : static_cast<int>(compute_s_.front().size())),
      finals_(dispatch_.p()) {}

void MoeLayer::run(Transport& transport) {
  const int p = transport.size(), r = transport.rank(), m = chunks_;
  Layout layout = make_layout(CollectiveKind::kAlltoallv, dispatch_.busiest_load(), p, p, r, &dispatch_);
  // The layer only moves and copies tokens: it never reduces, so no reduction rate.
  Chip me(transport, std::move(layout.slot_bytes), std::move(layout.initial), std::nullopt);
  auto part = [m](std::uint64_t bytes, int c) { return even_chunks(bytes, m)[c]; };
  // receives[c]: chunk c of the dispatch from every sender; results: the combine coming back.
  std::vector<std::vector<RequestPtr>> receives(m);
  std::vector<RequestPtr> results, sent;
  for (int c = 0; c < m; ++c)
    for (int k = 1; k < p; ++k) {
      const int peer = (r + p - k) % p;
      if (part(dispatch_.bytes(peer, r), c) > 0) receives[c].push_back(me.recv(peer, 2 * c));
      if (part(combine_.bytes(peer, r), c) > 0) results.push_back(me.recv(peer, 2 * c + 1));
    }
  for (int c = 0; c < m; ++c)
    for (int k = 1; k < p; ++k) {
      const int dst = (r + k) % p;
      if (const auto bytes = part(dispatch_.bytes(r, dst), c); bytes > 0)
        sent.push_back(me.send_sized(dst, 2 * c, dst, p + r, bytes));
    }
  if (dispatch_.bytes(r, r) > 0) me.copy_local(r, p + r);  // own tokens stay on the chip
  for (int c = 0; c < m; ++c) {
    me.wait(receives[c]);
    for (const auto& in : receives[c]) me.copy(in);
    if (compute_s_[r][c] > 0) me.compute(compute_s_[r][c], "experts");
    for (int k = 1; k < p; ++k) {
      const int src = (r + p - k) % p;
      if (const auto bytes = part(combine_.bytes(r, src), c); bytes > 0)
        sent.push_back(me.send_sized(src, 2 * c + 1, p + src, r, bytes));
    }
  }
  sent.insert(sent.end(), results.begin(), results.end());
  me.wait(sent);
  for (const auto& in : results) me.copy(in);
  finals_[r] = me.slots();
}

Verdict MoeLayer::verdict() const {
  const int p = dispatch_.p();
  return verify(CollectiveKind::kAlltoallv, p, p, finals_, &dispatch_);
}

std::unique_ptr<MoeLayer> make_moe_layer(const MoeRouting& routing, const MoeConfig& config,
                                         const ParamSet& params, bool compute) {
  const int p = routing.p, m = config.micro_chunks;
  std::vector<std::vector<double>> seconds(p, std::vector<double>(m, 0.0));
  if (compute)
    for (int c = 0; c < p; ++c)
      std::fill(seconds[c].begin(), seconds[c].end(), expert_compute(routing, c, config, params, m).seconds);
  const MoeSizes sizes = moe_sizes(config);
  return std::make_unique<MoeLayer>(std::move(seconds),
                                    dispatch_matrix(routing, config.hidden, sizes.dispatch),
                                    combine_matrix(routing, config.hidden, sizes.combine));
}

std::vector<MatrixPhase> MoeLayer::matrix_form() const {
  if (chunks_ != 1) return {};
  std::vector<double> experts;
  for (const auto& chip : compute_s_) experts.push_back(chip.front());
  return {MatrixPhase{&dispatch_, 0, {}, {}}, MatrixPhase{&combine_, 1, std::move(experts), "experts"}};
}

std::string MoeLayer::matrix_refusal() const {
  return "a layer of " + std::to_string(chunks_) +
         " micro-chunks overlaps its phases; it prices one chunk's dispatch, compute and combine only";
}

double MoeLayer::model_s(const CostInput& in) const {
  double slowest = 0;
  for (const auto& chip : compute_s_) {
    double total = 0;
    for (double s : chip) total += s;
    slowest = std::max(slowest, total);
  }
  const auto dispatch = [&](int s, int d) { return dispatch_.bytes(s, d); };
  const auto combine = [&](int s, int d) { return combine_.bytes(s, d); };
  return concurrent_flows_time(in, dispatch) + slowest + concurrent_flows_time(in, combine);
}

}  // namespace ultrasim
