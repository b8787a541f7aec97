#include "workloads/serving/schedulers/pool.hpp"

#include <algorithm>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {

PoolRun::PoolRun(int index, const ServingPool& pool, const std::vector<ServingRequest>& requests,
                 ServingSchedule& out, const SchedulerOptions& options)
    : index_(index),
      pool_(pool),
      requests_(requests),
      out_(out),
      free_(static_cast<std::size_t>(pool.groups), pool.kv_blocks),
      in_group_(static_cast<std::size_t>(pool.groups), 0),
      max_batch_(options.max_batch),
      progress_(options.progress),
      slot_(requests.size(), 0) {}

void PoolRun::arrive(std::size_t id, double at, bool prefilled) {
  LiveRequest r;
  r.id = id, r.prompt = requests_[id].prompt, r.output = requests_[id].output, r.target = r.prompt;
  if (prefilled) r.prefilled = r.target, r.generated = 1;
  auto it = waiting_.end();
  while (it != waiting_.begin() && std::prev(it)->first > at) --it;
  waiting_.insert(it, {at, r});
}

ServingSchedule start_schedule(const std::vector<ServingRequest>& requests) {
  ServingSchedule out;
  out.requests.resize(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) out.requests[i].arrival_s = requests[i].arrival_s;
  return out;
}

void PoolRun::arrive_all() {
  for (std::size_t i = 0; i < requests_.size(); ++i) arrive(i, requests_[i].arrival_s, false);
}

bool PoolRun::next() {
  const double t = ready_at();
  if (t == std::numeric_limits<double>::infinity()) return false;
  wait_until(t);
  return true;
}

double PoolRun::ready_at() const {
  if (!running_.empty()) return clock_;
  if (waiting_.empty()) return std::numeric_limits<double>::infinity();
  return std::max(clock_, waiting_.front().first);
}

const LiveRequest* PoolRun::head() const {
  if (waiting_.empty() || waiting_.front().first > clock_) return nullptr;
  return &waiting_.front().second;
}

int PoolRun::admit_head(std::uint64_t kv_tokens, int group, const std::vector<std::uint64_t>* budget,
                        std::uint64_t need) {
  return admit_waiting(0, kv_tokens, group, budget, need);
}

std::size_t PoolRun::arrived() const {
  std::size_t n = 0;
  while (n < waiting_.size() && waiting_[n].first <= clock_) ++n;
  return n;
}

int PoolRun::admit_waiting(std::size_t k, std::uint64_t kv_tokens, int group,
                           const std::vector<std::uint64_t>* budget, std::uint64_t need) {
  const std::uint64_t blocks = blocks_for(kv_tokens);
  int best = -1;
  for (int g = 0; g < pool_.groups; ++g)
    if ((group < 0 || g == group) && free_[g] >= blocks && in_group_[g] < max_batch_ &&
        (!budget || (*budget)[g] >= need) && (best < 0 || free_[g] > free_[best]))
      best = g;
  if (best < 0) return -1;
  const auto at = waiting_.begin() + static_cast<std::ptrdiff_t>(k);
  LiveRequest r = at->second;
  waiting_.erase(at);
  r.group = best, r.blocks = blocks, r.admitted = admissions_++;
  free_[best] -= blocks, ++in_group_[best];
  out_.requests[r.id].group = best;
  slot_[r.id] = running_.size();
  running_.push_back(r);
  return best;
}

LiveRequest* PoolRun::find(std::size_t id) {
  const std::size_t at = slot_[id];
  return at < running_.size() && running_[at].id == id ? &running_[at] : nullptr;
}

void PoolRun::reindex() {
  for (std::size_t i = 0; i < running_.size(); ++i) slot_[running_[i].id] = i;
}

bool PoolRun::grow(std::size_t id, std::uint64_t kv_tokens) {
  LiveRequest* r = find(id);
  if (!r) return false;
  const std::uint64_t need = blocks_for(kv_tokens);
  const int g = r->group;
  while (r->blocks + free_[g] < need) {  // preempt the group's last admitted (recompute)
    auto victim = running_.end();
    for (auto it = running_.begin(); it != running_.end(); ++it)
      if (it->group == g && (victim == running_.end() || it->admitted > victim->admitted)) victim = it;
    LiveRequest v = *victim;
    free_[g] += v.blocks, --in_group_[g];
    running_.erase(victim);
    reindex();
    ++out_.requests[v.id].preemptions, ++preempted_;
    v.target = v.prompt + v.generated, v.prefilled = 0, v.blocks = 0, v.group = -1;
    waiting_.push_front({clock_, v});
    if (v.id == id) return false;
    r = find(id);
  }
  if (need > r->blocks) free_[g] -= need - r->blocks, r->blocks = need;
  return true;
}

std::vector<IterationPart> PoolRun::decode_parts(std::vector<std::uint64_t>* budget) {
  std::vector<std::size_t> ids;
  for (const auto& r : running_)
    if (r.decoding()) ids.push_back(r.id);
  std::vector<IterationPart> parts;
  for (const std::size_t id : ids) {
    const LiveRequest* r = find(id);
    if (!r || (budget && (*budget)[r->group] == 0)) continue;
    const int g = r->group;
    if (grow(id, r->prompt + r->generated)) {
      parts.push_back({id, 1, true});
      if (budget) --(*budget)[g];
    }
  }
  return parts;
}

void PoolRun::emit(LiveRequest& r, double at) {
  RequestTimes& t = out_.requests[r.id];
  if (t.first_token_s < 0)
    t.first_token_s = at;
  else
    out_.itl_s.push_back(at - t.last_token_s);
  t.last_token_s = at;
  ++r.generated;
  if (r.generated != r.output) return;
  t.finish_s = at;
  if (progress_) progress_->advance();
}

std::vector<LiveRequest> PoolRun::run(const std::vector<IterationPart>& planned, bool hand_off) {
  std::vector<IterationPart> parts;  // those still running (a later part's blocks may have preempted one)
  for (const IterationPart& p : planned)
    if (find(p.request)) parts.push_back(p);
  if (parts.empty()) {  // nothing ran: the loop must change something else (a scheduler's bug if never)
    if (++stalled_ > 1000000) throw SimulationError("serving: the scheduler made no progress");
    return {};
  }
  stalled_ = 0;
  std::vector<StepItem> items;
  ServingIteration it;
  it.pool = index_, it.start_s = clock_, it.preempted = preempted_;
  for (const IterationPart& p : parts) {
    const LiveRequest& r = *find(p.request);
    if (p.decode) {
      items.push_back({r.group, r.decode_context(), 1, true, true});
      ++it.decode_tokens;
    } else {
      items.push_back({r.group, r.prefilled, p.tokens, false, r.prefilled + p.tokens == r.target});
      it.prefill_tokens += p.tokens;
    }
  }
  const double seconds = pool_.step(items);
  if (!(seconds >= 0 && seconds <= kMaxTime))
    throw SimulationError("serving: an iteration's time is not a time (" + std::to_string(seconds) + " s)");
  clock_ += seconds;
  std::vector<LiveRequest> handed;
  for (const IterationPart& p : parts) {
    LiveRequest& r = *find(p.request);
    if (!p.decode) {
      r.prefilled += p.tokens;
      if (r.prefilled < r.target) continue;
    }
    emit(r, clock_);
    if (hand_off && !p.decode && r.generated < r.output) handed.push_back(r), r.handed = true;
  }
  it.requests = parts.size();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < running_.size(); ++i) {
    LiveRequest& r = running_[i];
    if (r.generated == r.output || r.handed)
      free_[r.group] += r.blocks, --in_group_[r.group];
    else
      running_[kept++] = r;
  }
  running_.resize(kept);
  reindex();
  for (int g = 0; g < pool_.groups; ++g) it.kv_blocks += pool_.kv_blocks - free_[g];
  it.end_s = clock_, it.preempted = preempted_ - it.preempted;
  out_.iterations.push_back(it);
  return handed;
}

}  // namespace ultrasim
