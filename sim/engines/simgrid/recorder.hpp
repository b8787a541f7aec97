// What the SimGrid fabric keeps of a run: its counters (messages and their bytes, each counted once
// however many flows carry it) always, and, when recording (traces, link statistics), every record it
// is given, in the order given. The callers build the records (sim/engines/simgrid/flows.hpp:
// delivered_record) and skip building them when recording() is false. Free of SimGrid.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/engines/records.hpp"

namespace ultrasim {

class Recorder {
 public:
  explicit Recorder(bool record) : record_(record) {}

  bool recording() const { return record_; }
  // A message sent, or a contribution to an in-switch reduction, of `bytes`.
  void count_message(std::uint64_t bytes) { ++transfer_count_, bytes_sent_ += bytes; }
  // Kept only when recording.
  void transfer(const TransferRecord& record) {
    if (record_) transfers_.push_back(record);
  }
  void compute(ComputeRecord record) {
    if (record_) computes_.push_back(std::move(record));
  }

  std::uint64_t transfer_count() const { return transfer_count_; }
  std::uint64_t bytes_sent() const { return bytes_sent_; }
  const std::vector<TransferRecord>& transfers() const { return transfers_; }
  const std::vector<ComputeRecord>& computes() const { return computes_; }

 private:
  bool record_;
  std::vector<TransferRecord> transfers_;
  std::vector<ComputeRecord> computes_;
  std::uint64_t transfer_count_ = 0, bytes_sent_ = 0;
};

}  // namespace ultrasim
