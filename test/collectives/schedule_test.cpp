// Schedules as data: what the loader accepts and rejects (message by message), and that a textbook
// algorithm written as data sends exactly what the built-in sends and verifies.
#include <catch2/catch.hpp>

#include "cli_runner.hpp"
#include "collectives/schedule.hpp"
#include "recording_transport.hpp"
#include "topology/base/errors.hpp"
#include "workloads/collective/collective_job.hpp"

using namespace ultrasim;
using ultrasim::test::run_on_fake;

namespace {

const std::string kExamples = std::string(ULTRASIM_SOURCE_DIR) + "/collectives/schedules/";

// An all-reduce over 4 chips in 4 chunks whose only step holds `transfers` (a JSON array's inside).
std::string allreduce4(const std::string& transfers) {
  return R"({"collective": "allreduce", "chips": 4, "chunks": 4, "steps": [[)" + transfers + "]]}";
}

// The message parse_schedule throws for `text` (named "s.json"), or "" if it accepts it.
std::string error_of(const std::string& text) {
  try {
    parse_schedule(text, "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Every transfer as "step: src->dst bytes", in (step, src, dst) order.
std::vector<std::string> records(const test::FakeRun& run) {
  std::vector<std::string> out;
  for (const auto& s : run.sent)
    out.push_back(std::to_string(s.step) + ": " + std::to_string(s.src) + "->" + std::to_string(s.dst) + " " +
                  std::to_string(s.bytes));
  return out;
}

CollectiveJob job(std::string topology, std::string collective, std::string algorithm, std::uint64_t bytes) {
  return CollectiveJob{topology, collective, algorithm, bytes, "float32", 0, {}};
}

test::FakeRun run_file(const std::string& file, int p, std::uint64_t bytes) {
  auto schedule = std::make_shared<const Schedule>(load_schedule(kExamples + file));
  return run_on_fake(*schedule_algorithm(schedule), schedule->collective->kind, p, bytes);
}

test::FakeRun run_builtin(const std::string& collective, const std::string& name, int p,
                          std::uint64_t bytes) {
  return run_on_fake(*find_algorithm(collective, name).make_with_defaults(), find_collective(collective).kind,
                     p, bytes);
}

}  // namespace

TEST_CASE("a schedule file names its collective, chips and chunks, and lists steps of transfers") {
  Schedule s = load_schedule(kExamples + "ring_allreduce_8.json");
  CHECK(s.source == kExamples + "ring_allreduce_8.json");
  CHECK(s.collective->name == "allreduce");
  CHECK(s.chips == 8);
  CHECK(s.chunks == 8);
  REQUIRE(s.steps.size() == 14);  // 2(p-1)
  for (const auto& step : s.steps) CHECK(step.size() == 8);
  const ScheduleTransfer& t = s.steps[0][7];  // reduce-scatter step 0: chip 7 sends chunk 7 to chip 0
  CHECK(std::make_tuple(t.src, t.dst, t.chunk, t.dst_chunk) == std::make_tuple(7, 0, 7, 7));
  CHECK(t.op == OnArrival::kReduce);
  CHECK(s.steps[7][0].op == OnArrival::kKeep);  // the all-gather half copies
}

TEST_CASE("ring all-reduce written as data sends what the built-in ring sends, step by step, and verifies") {
  for (std::uint64_t bytes : {1ull, 7ull, 4096ull, 1000003ull}) {
    INFO("bytes " << bytes);
    auto data = run_file("ring_allreduce_8.json", 8, bytes);
    auto builtin = run_builtin("allreduce", "ring", 8, bytes);
    CHECK(data.verdict.wrong == 0);
    CHECK(records(data) == records(builtin));
  }
}

TEST_CASE("transfers of one step between the same two chips travel as one message") {
  // Recursive doubling sends 1, 2, 4 parts to one partner per step: 8 messages a step, as built in.
  auto data = run_file("recursive_doubling_allgather_8.json", 8, 8000);
  CHECK(data.verdict.wrong == 0);
  CHECK(data.steps() == 3);
  CHECK(data.sent.size() == 3 * 8);
  for (int c = 0; c < 8; ++c) CHECK(data.bytes_sent_by(c) == 7000);
  auto builtin = run_builtin("allgather", "recursive-doubling", 8, 8000);
  for (auto& s : builtin.sent) --s.step;  // the built-in labels its (empty, p = 2^k) fold step 0
  CHECK(records(data) == records(builtin));
}

TEST_CASE("an all-to-all schedule lands parts in slot p+src with dst_chunk, the own part is copied locally") {
  Schedule s = load_schedule(kExamples + "pairwise_alltoall_8.json");
  CHECK(s.chunks == 8);
  CHECK(s.steps[0][0].dst_chunk == 8 + 0);  // chip 0's part for chip 1 lands in chip 1's slot 8
  auto data = run_file("pairwise_alltoall_8.json", 8, 8003);
  CHECK(data.verdict.wrong == 0);
  auto builtin = run_builtin("alltoall", "pairwise", 8, 8003);
  for (auto& s : builtin.sent) --s.step;  // the built-in labels round k = 1..p-1, the file's steps 0..p-2
  CHECK(records(data) == records(builtin));
}

TEST_CASE("several reduces into one slot in one step add up: direct reduce-scatter as data") {
  std::string transfers;
  for (int src = 0; src < 4; ++src)
    for (int dst = 0; dst < 4; ++dst)
      if (src != dst)
        transfers += std::string(transfers.empty() ? "" : ",") + R"({"src": )" + std::to_string(src) +
                     R"(, "dst": )" + std::to_string(dst) + R"(, "chunk": )" + std::to_string(dst) +
                     R"(, "op": "reduce"})";
  auto s = std::make_shared<const Schedule>(
      parse_schedule(R"({"collective": "reducescatter", "chips": 4, "steps": [[)" + transfers + "]]}", "rs"));
  auto data = run_on_fake(*schedule_algorithm(s), CollectiveKind::kReducescatter, 4, 4000);
  CHECK(data.verdict.wrong == 0);
  CHECK(records(data) == records(run_builtin("reducescatter", "direct", 4, 4000)));
}

TEST_CASE("a schedule missing a transfer runs to the end and fails verification") {
  Schedule s = load_schedule(kExamples + "ring_allreduce_8.json");
  s.steps[13].erase(s.steps[13].begin());  // last all-gather step: chip 0 no longer sends chunk 3 to chip 1
  auto shared = std::make_shared<const Schedule>(std::move(s));
  auto data = run_on_fake(*schedule_algorithm(shared), CollectiveKind::kAllreduce, 8, 4096);
  CHECK(data.verdict.wrong == 1);
  CHECK_THAT(data.verdict.first_error, Catch::StartsWith("chip1 slot 3 holds"));
}

TEST_CASE("model_s of ring all-reduce as data equals the built-in ring's on switch:8 and ring:8") {
  for (const char* topology : {"switch:8", "ring:8"})
    for (std::uint64_t bytes : {1024ull, 1048579ull, 1ull << 30}) {
      INFO(topology << " " << bytes);
      PreparedJob data =
          prepare(job(topology, "allreduce", "file:" + kExamples + "ring_allreduce_8.json", bytes));
      PreparedJob builtin = prepare(job(topology, "allreduce", "ring", bytes));
      CHECK(data.entry->name == "file:" + kExamples + "ring_allreduce_8.json");
      CHECK(data.algorithm->model_s(data.cost_input()) == builtin.algorithm->model_s(builtin.cost_input()));
    }
}

TEST_CASE("prepare checks a schedule file against the job: its collective and its chip count") {
  const std::string file = "file:" + kExamples + "ring_allreduce_8.json";
  CHECK_THROWS_WITH(prepare(job("switch:8", "allgather", file, 1024)),
                    kExamples +
                        "ring_allreduce_8.json: the schedule's collective is allreduce, but "
                        "--collective is allgather");
  CHECK_THROWS_WITH(
      prepare(job("switch:16", "allreduce", file, 1024)),
      kExamples + "ring_allreduce_8.json: the schedule is for 8 chips, but topology switch:16 has 16");
  CHECK_THROWS_WITH(prepare(job("switch:8", "allreduce", "file:", 1024)),
                    Catch::StartsWith("--algorithm file: needs a path"));
  for (const AutoCandidate& c : prepare(job("switch:8", "allreduce", "auto", 1024)).auto_ranking)
    CHECK(c.algorithm.rfind("file:", 0) == std::string::npos);  // auto considers built-ins only
}

TEST_CASE("schedule loader: a missing file or a directory is named, not crashed on") {
  CHECK_THROWS_WITH(load_schedule("/nonexistent/s.json"),
                    "cannot read schedule file '/nonexistent/s.json' (missing or not readable)");
  CHECK_THROWS_WITH(load_schedule(kExamples),
                    "schedule file '" + kExamples + "' is a directory; expected a JSON schedule");
}

TEST_CASE("schedule loader: text that is not JSON is reported with its line and column") {
  CHECK(error_of("{\n  \"chips\": ,\n}") == "s.json: not valid JSON (syntax error at line 2, column 12)");
  CHECK(error_of("") == "s.json: not valid JSON (syntax error at line 1, column 1)");
  CHECK(error_of("[1, 2]") == "s.json: expected a JSON object {collective, chips, chunks, steps}");
}

TEST_CASE("schedule loader: missing and unknown fields are named, with the step and transfer") {
  CHECK(error_of(R"({"chips": 4, "chunks": 4, "steps": []})") == "s.json: missing \"collective\"");
  CHECK(error_of(R"({"collective": "allreduce", "chunks": 4, "steps": []})") == "s.json: missing \"chips\"");
  CHECK(error_of(R"({"collective": "allreduce", "chips": 4, "steps": []})") == "s.json: missing \"chunks\"");
  CHECK(error_of(R"({"collective": "allreduce", "chips": 4, "chunks": 4})") == "s.json: missing \"steps\"");
  CHECK(error_of(allreduce4(
            R"({"src": 0, "dst": 1, "chunk": 0, "op": "copy"}, {"src": 0, "dst": 2, "chunk": 0})")) ==
        "s.json: step 0, transfer 1: missing \"op\"");
  CHECK(error_of(allreduce4(R"({"src": 0, "dst": 1, "chunk": 0, "op": "copy", "dst_chnk": 1})")) ==
        "s.json: step 0, transfer 0: unknown field 'dst_chnk'; did you mean 'dst_chunk'? known: src, dst, "
        "chunk, dst_chunk, op");
  CHECK_THAT(error_of(R"({"collective": "allreduce", "chips": 4, "chunks": 4, "steps": [], "chip": 4})"),
             Catch::StartsWith("s.json: unknown field 'chip'"));
}

TEST_CASE("schedule loader: fields of the wrong type say what they got") {
  CHECK(error_of(R"({"collective": "allreduce", "chips": 4.5, "chunks": 4, "steps": []})") ==
        "s.json: \"chips\" must be an integer, not 4.5");
  CHECK(error_of(R"({"collective": "allreduce", "chips": 4, "chunks": 4, "steps": {}})") ==
        "s.json: \"steps\" must be an array of steps, not {}");
  CHECK(error_of(R"({"collective": "allreduce", "chips": 4, "chunks": 4, "steps": [[], 3]})") ==
        "s.json: step 1: a step must be an array of transfers, not 3");
  CHECK(error_of(allreduce4("[0, 1]")) ==
        "s.json: step 0, transfer 0: a transfer must be an object {src, dst, chunk, op}, not [0,1]");
  CHECK(error_of(allreduce4(R"({"src": "0", "dst": 1, "chunk": 0, "op": "copy"})")) ==
        "s.json: step 0, transfer 0: \"src\" must be an integer, not \"0\"");
}

TEST_CASE("schedule loader: an unknown collective gets the registry's did-you-mean") {
  CHECK_THAT(error_of(R"({"collective": "allreduc", "chips": 4, "chunks": 4, "steps": []})"),
             Catch::StartsWith("s.json: unknown collective 'allreduc'; did you mean 'allreduce'?"));
}

TEST_CASE("schedule loader: src and dst must be chips 0..chips-1") {
  CHECK(error_of(allreduce4(R"({"src": 4, "dst": 1, "chunk": 0, "op": "copy"})")) ==
        "s.json: step 0, transfer 0: \"src\" 4 is out of range: chips are 0..3");
  CHECK(error_of(allreduce4(R"({"src": 0, "dst": -1, "chunk": 0, "op": "copy"})")) ==
        "s.json: step 0, transfer 0: \"dst\" -1 is out of range: chips are 0..3");
  CHECK(error_of(allreduce4(R"({"src": 0, "dst": 18446744073709551615, "chunk": 0, "op": "copy"})")) ==
        "s.json: step 0, transfer 0: \"dst\" 18446744073709551615 is out of range: chips are 0..3");
  CHECK(error_of(R"({"collective": "allreduce", "chips": 0, "chunks": 4, "steps": []})") ==
        "s.json: \"chips\" 0 is out of range: 1..1048576");
}

TEST_CASE("schedule loader: a chip may not send to itself") {
  CHECK(error_of(allreduce4(R"({"src": 2, "dst": 2, "chunk": 0, "op": "copy"})")) ==
        "s.json: step 0, transfer 0: chip 2 sends to itself");
}

TEST_CASE("schedule loader: op is reduce or copy") {
  CHECK(error_of(allreduce4(R"({"src": 0, "dst": 1, "chunk": 0, "op": "sum"})")) ==
        "s.json: step 0, transfer 0: unknown op 'sum'; known: reduce, copy");
}

TEST_CASE("schedule loader: chunk and dst_chunk must name a slot of the collective's layout") {
  CHECK(error_of(allreduce4(R"({"src": 0, "dst": 1, "chunk": 4, "op": "copy"})")) ==
        "s.json: step 0, transfer 0: \"chunk\" 4 is out of range: allreduce on 4 chips in 4 chunks has "
        "slots 0..3");
  CHECK(error_of(allreduce4(R"({"src": 0, "dst": 1, "chunk": 0, "dst_chunk": 9, "op": "copy"})")) ==
        "s.json: step 0, transfer 0: \"dst_chunk\" 9 is out of range: allreduce on 4 chips in 4 chunks has "
        "slots 0..3");
  // All-to-all has 2p slots: 0..p-1 to send, p..2p-1 to receive.
  CHECK(error_of(R"({"collective": "alltoall", "chips": 2, "steps": [[{"src": 0, "dst": 1, "chunk": 1,
                     "dst_chunk": 3, "op": "copy"}]]})") == "");
  CHECK(error_of(R"({"collective": "alltoall", "chips": 2, "steps": [[{"src": 0, "dst": 1, "chunk": 1,
                     "dst_chunk": 4, "op": "copy"}]]})") ==
        "s.json: step 0, transfer 0: \"dst_chunk\" 4 is out of range: alltoall on 2 chips has slots 0..3");
  // All-gather, reduce-scatter and all-to-all are cut one part per chip; chunks may only say so.
  CHECK(error_of(R"({"collective": "allgather", "chips": 4, "chunks": 4, "steps": [[]]})") == "");
  CHECK(error_of(R"({"collective": "allgather", "chips": 4, "chunks": 2, "steps": [[]]})") ==
        "s.json: \"chunks\" is 2, but allgather cuts the data into one part per chip (4); leave it out");
  CHECK(error_of(R"({"collective": "broadcast", "chips": 4, "chunks": 65537, "steps": []})") ==
        "s.json: \"chunks\" 65537 is out of range: 1..65536");
}

TEST_CASE("schedule loader: in one step a slot takes any number of reduces or a single copy") {
  const std::string reduce01 = R"({"src": 0, "dst": 1, "chunk": 0, "op": "reduce"})";
  const std::string reduce21 = R"({"src": 2, "dst": 1, "chunk": 0, "op": "reduce"})";
  const std::string copy21 = R"({"src": 2, "dst": 1, "chunk": 0, "op": "copy"})";
  const std::string copy31 = R"({"src": 3, "dst": 1, "chunk": 3, "dst_chunk": 0, "op": "copy"})";
  CHECK(error_of(allreduce4(reduce01 + "," + reduce21)) == "");
  CHECK(error_of(allreduce4(reduce01 + "," + copy21)) ==
        "s.json: step 0, transfer 1: chip 1 slot 0 is also written by transfer 0 of this step; in one step a "
        "slot takes any number of reduces or a single copy");
  CHECK_THAT(error_of(allreduce4(copy21 + "," + copy31)),
             Catch::StartsWith("s.json: step 0, transfer 1: chip 1 slot 0"));
  // In different steps, or different chips' slots, anything goes.
  CHECK(error_of(R"({"collective": "allreduce", "chips": 4, "chunks": 4, "steps": [[)" + copy21 + "], [" +
                 copy31 + "]]}") == "");
}

TEST_CASE("a schedule may be empty: one chip, no steps, takes no time") {
  auto s = std::make_shared<const Schedule>(parse_schedule(
      R"({"name": "nothing", "collective": "allreduce", "chips": 1, "chunks": 3, "steps": []})", "one"));
  CHECK(s->name == "nothing");
  auto data = run_on_fake(*schedule_algorithm(s), CollectiveKind::kAllreduce, 1, 100);
  CHECK(data.verdict.wrong == 0);
  CHECK(data.sent.empty());
}
