#include "workloads/serving/requests.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>

#include <nlohmann/json.hpp>

#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/mix.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

// A column's name as compared: lower case, without ' ', '_', '-'.
std::string column_key(const std::string& name) {
  std::string key;
  for (const char c : name)
    if (c != ' ' && c != '_' && c != '-' && c != '"' && c != '\r')
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

const std::vector<std::string>& arrival_names() {
  static const std::vector<std::string> names{"arrivaltime", "arrivedat", "timestamp",   "time",
                                              "arrivals",    "arrival",   "arrivaltimes"};
  return names;
}
const std::vector<std::string>& prompt_names() {
  static const std::vector<std::string> names{"prompttokens",     "inputtokens",   "contexttokens",
                                              "numprefilltokens", "requesttokens", "inputlen",
                                              "promptlen"};
  return names;
}
const std::vector<std::string>& output_names() {
  static const std::vector<std::string> names{"outputtokens", "generatedtokens", "numdecodetokens",
                                              "responsetokens", "outputlen"};
  return names;
}

// "YYYY-MM-DD[ T]HH:MM:SS[.frac]" as seconds since 1970 (proleptic Gregorian, UTC); nullopt otherwise.
std::optional<double> date_seconds(const std::string& text) {
  int y, mo, d, h, mi;
  char sep;
  double sec;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%lf", &y, &mo, &d, &sep, &h, &mi, &sec) != 7 ||
      (sep != ' ' && sep != 'T') || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec < 0 ||
      sec >= 61)
    return std::nullopt;
  // Days from 1970-01-01 (H. Hinnant's days_from_civil).
  y -= mo <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400, mp = (mo + 9) % 12;
  const int doy = (153 * mp + 2) / 5 + d - 1, doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const double days = static_cast<double>(era) * 146097 + doe - 719468;
  return days * 86400 + h * 3600 + mi * 60 + sec;
}

std::optional<double> number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string trimmed(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r\""), b = s.find_last_not_of(" \t\r\"");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// Rows of (arrival text, prompt text, output text) into requests, checked.
class TraceRows {
 public:
  explicit TraceRows(std::string path) : path_(std::move(path)) {}
  void add(const std::string& where, const std::string& arrival, const std::string& prompt,
           const std::string& output) {
    const std::string at = "request trace '" + path_ + "' " + where;
    std::optional<double> t = number(arrival);
    if (!t) {
      t = date_seconds(arrival);
      if (!t) throw InputError(at + ": arrival '" + arrival + "' is not a number of seconds or a date");
      if (!origin_) origin_ = *t;
      *t -= *origin_;
    }
    if (*t < 0) throw InputError(at + ": arrival time " + arrival + " is negative");
    if (*t > kMaxTime) throw InputError(at + ": arrival time " + arrival + " is past 1e6 s");
    if (!out_.empty() && *t < out_.back().arrival_s)
      throw InputError(at + ": arrival " + arrival + " is before the row above (the trace must be sorted)");
    out_.push_back({*t, tokens(at, "prompt", prompt), tokens(at, "output", output)});
  }
  std::vector<ServingRequest> take() {
    if (out_.empty()) throw InputError("request trace '" + path_ + "' has no requests");
    return std::move(out_);
  }

 private:
  static std::uint64_t tokens(const std::string& at, const std::string& what, const std::string& text) {
    const auto v = number(text);
    if (!v || *v < 1 || *v > static_cast<double>(kMaxRequestTokens) || *v != std::floor(*v))
      throw InputError(at + ": " + what + " tokens '" + text + "': expected a whole number in [1, 16777216]");
    return static_cast<std::uint64_t>(*v);
  }
  std::string path_;
  std::optional<double> origin_;
  std::vector<ServingRequest> out_;
};

// The index of the first of `names` among `keys`; InputError when none is there.
std::size_t find_column(const std::vector<std::string>& keys, const std::vector<std::string>& names,
                        const std::string& what, const std::string& path) {
  for (const auto& n : names)
    if (const auto it = std::find(keys.begin(), keys.end(), n); it != keys.end())
      return static_cast<std::size_t>(it - keys.begin());
  throw InputError("request trace '" + path + "': no " + what + " column (expected one of " + names.front() +
                   ", " + names[1] + ", " + names[2] + ", ...; workloads/serving/README.md lists them)");
}

std::vector<ServingRequest> read_jsonl(const std::string& path, const std::string& text) {
  TraceRows rows(path);
  std::size_t line_no = 0, start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = trimmed(text.substr(start, end - start));
    start = end + 1, ++line_no;
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(line_no);
    const nlohmann::json j = parse_json_text(line, "request trace '" + path + "' " + where);
    if (!j.is_object()) throw InputError("request trace '" + path + "' " + where + ": expected an object");
    std::vector<std::string> keys, values;
    for (const auto& [k, v] : j.items()) {
      keys.push_back(column_key(k));
      values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    }
    rows.add(where, values[find_column(keys, arrival_names(), "arrival", path)],
             values[find_column(keys, prompt_names(), "prompt tokens", path)],
             values[find_column(keys, output_names(), "output tokens", path)]);
  }
  return rows.take();
}

std::vector<ServingRequest> read_csv(const std::string& path, const std::string& text) {
  TraceRows rows(path);
  std::size_t line_no = 0, start = 0;
  std::vector<std::size_t> at;  // arrival, prompt, output columns
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1, ++line_no;
    if (trimmed(line).empty()) continue;
    const auto cells = split_items(line, ',', true);
    if (at.empty()) {
      std::vector<std::string> keys;
      for (const auto& c : cells) keys.push_back(column_key(c));
      at = {find_column(keys, arrival_names(), "arrival", path),
            find_column(keys, prompt_names(), "prompt tokens", path),
            find_column(keys, output_names(), "output tokens", path)};
      continue;
    }
    const std::string where = "line " + std::to_string(line_no);
    if (cells.size() <= *std::max_element(at.begin(), at.end()))
      throw InputError("request trace '" + path + "' " + where + ": " + std::to_string(cells.size()) +
                       " columns, fewer than the header's");
    rows.add(where, trimmed(cells[at[0]]), trimmed(cells[at[1]]), trimmed(cells[at[2]]));
  }
  return rows.take();
}

// Seeded uniform, normal and gamma draws (their own code: the standard library's distributions differ
// between library versions, and the outputs must not).
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : state_(splitmix64(seed ^ 0x5e41a7e5u)) {}
  double uniform() {  // in (0, 1)
    state_ += 0x9E3779B97F4A7C15ull;
    return (static_cast<double>(splitmix64(state_) >> 11) + 0.5) * 0x1.0p-53;
  }
  double normal() { return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform()); }
  double gamma(double shape) {  // mean shape (Marsaglia and Tsang, 2000)
    if (shape < 1) return gamma(shape + 1) * std::pow(uniform(), 1 / shape);
    const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
      double x, v;
      do x = normal(), v = 1 + c * x;
      while (v <= 0);
      v = v * v * v;
      const double u = uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }

 private:
  std::uint64_t state_;
};

std::uint64_t clamp_tokens(double v) {
  return static_cast<std::uint64_t>(std::clamp(std::round(v), 1.0, static_cast<double>(kMaxRequestTokens)));
}

}  // namespace

std::vector<ServingRequest> read_request_trace(const std::string& path) {
  const std::string text = read_input_file(path, "request trace '" + path + "'",
                                           "a CSV or JSON Lines file of arrival, prompt and output tokens");
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw InputError("request trace '" + path + "' is empty");
  return text[first] == '{' ? read_jsonl(path, text) : read_csv(path, text);
}

const std::vector<NamedTraceShape>& trace_shapes() {
  // Each length is lognormal with the trace's median and, capped at its longest (or at a context limit,
  // an assumption), its mean: the two figures that set a deployment's load. Sources:
  // - Azure: Azure/AzurePublicDataset data/AzureLLMInferenceTrace_{conv,code}.csv @7909210 (one hour,
  //   2023-11-16; Splitwise, ISCA 2024): medians, means and longest computed from the rows; burstiness
  //   1 / CV^2 of the gaps between arrivals.
  // - Mooncake: kvcache-ai/Mooncake FAST25-release/traces/conversation_trace.jsonl @3cca71d and the
  //   paper's Table 2 (FAST 2025).
  // - ServeGen: alibaba/ServeGen data/reason/deepseek-r1 @f891d11 (Alibaba Cloud's DeepSeek-R1 traffic,
  //   73 clients over a day, weighted by their rates; arXiv 2505.09999).
  static const std::vector<NamedTraceShape> shapes{
      {"conversation", "chat: prompts of about a thousand tokens, answers of about two hundred", 1155.0,
       0.499, 228.9, 1.071, 14050, 1000, 0.835,
       "Azure LLM inference trace 2023, conversation: prompt median 1,020, mean 1,155, longest 14,050; "
       "output median 129, mean 211, longest 1,000; gap CV 1.09 (computed)"},
      {"code", "code completion: longer prompts, answers of a few tokens, very bursty arrivals", 2171.8,
       0.884, 27.9, 1.236, 7437, 1899, 0.0058,
       "Azure LLM inference trace 2023, code: prompt median 1,469, mean 2,048, longest 7,437; output median "
       "13, mean 27.9, longest 1,899; gap CV 13.2 (computed)"},
      {"long-context", "long documents and histories: prompts of about 12,000 tokens", 12208.4, 1.067, 343,
       0.50, 131072, 4096, 0.127,
       "Mooncake conversation trace: prompt median 6,909 (computed), mean 12,035 (Table 2); output mean 343 "
       "(Table 2), sigma from its p99 / median (1,119 / 350); burstiness from the variance / mean of "
       "arrivals per second (7.9); caps at a 128K context and 4,096 output tokens: assumption"},
      {"reasoning", "a reasoning model: short prompts, long answers (thinking included)", 1541.3, 2.001,
       1535.6, 1.151, 32768, 32768, 0.19,
       "ServeGen DeepSeek-R1: prompt median 208, mean 1,268; output median 792, mean 1,527 (computed); "
       "burstiness 1 / 2.28^2, the clients' request-weighted gap CV; 32,768-token caps: assumption"},
      {"agentic", "tool and agent calls: long prompts, short answers (prefix reuse not modelled)", 8596,
       1.067, 182, 0.50, 131072, 4096, 1,
       "Mooncake tool & agent trace: means from Table 2; sigmas as the conversation trace's, Poisson "
       "arrivals and the caps: assumptions"},
  };
  return shapes;
}

const NamedTraceShape& trace_shape_named(const std::string& name) {
  return find_by_name(trace_shapes(), name, "trace shape");
}

void RequestGenerator::validate() const {
  if (!(rate > 0 && rate <= 1e9))
    throw InputError("--rate must be a number of requests per second in (0, 1e9]");
  if (count < 1 || count > kMaxRequestTokens)
    throw InputError("--num-requests must be between 1 and 16777216");
  if (!(burstiness > 0 && burstiness <= 1000)) throw InputError("--burstiness must be in (0, 1000]");
  if (!shape.empty()) {
    trace_shape_named(shape);
    if (!lengths.empty() || length_dist != "fixed")
      throw InputError("--trace-shape " + shape +
                       " draws the lengths: give it without --lengths or --length-dist");
    return;
  }
  if (lengths.empty() &&
      (input_len < 1 || input_len > kMaxRequestTokens || output_len < 1 || output_len > kMaxRequestTokens))
    throw InputError("--input-len and --output-len must be between 1 and 16777216 with request arrivals");
  const auto colon = length_dist.find(':');
  const std::string kind = length_dist.substr(0, colon);
  if (kind == "fixed" && colon == std::string::npos) return;
  if ((kind != "uniform" && kind != "lognormal") || colon == std::string::npos)
    throw InputError("--length-dist '" + length_dist + "': expected fixed, uniform:R or lognormal:SIGMA");
  const auto v = number(length_dist.substr(colon + 1));
  if (kind == "uniform" && !(v && *v >= 0 && *v < 1))
    throw InputError("--length-dist uniform:R needs R in [0, 1)");
  if (kind == "lognormal" && !(v && *v >= 0 && *v <= 4))
    throw InputError("--length-dist lognormal:SIGMA needs SIGMA in [0, 4]");
}

std::vector<ServingRequest> generate_requests(const RequestGenerator& given) {
  given.validate();
  RequestGenerator g = given;
  const NamedTraceShape* named = g.shape.empty() ? nullptr : &trace_shape_named(g.shape);
  if (named) g.burstiness = named->burstiness;
  Draws arrivals(g.seed), lengths(g.seed + 1);
  auto lognormal = [&](double mean, double sigma, double most) {  // the mean kept (before the cap)
    return clamp_tokens(std::min(most, mean * std::exp(sigma * lengths.normal() - sigma * sigma / 2)));
  };
  const auto colon = g.length_dist.find(':');
  const std::string kind = g.length_dist.substr(0, colon);
  const double spread = colon == std::string::npos ? 0 : *number(g.length_dist.substr(colon + 1));
  auto draw_len = [&](std::uint64_t len) {
    const double l = static_cast<double>(len);
    if (kind == "uniform") {
      const double lo = std::max(1.0, std::round(l * (1 - spread))), hi = std::round(l * (1 + spread));
      return clamp_tokens(std::floor(lo + lengths.uniform() * (hi - lo + 1)));
    }
    if (kind == "lognormal")
      return clamp_tokens(l * std::exp(spread * lengths.normal() - spread * spread / 2));
    return len;
  };
  std::vector<ServingRequest> out;
  out.reserve(g.count);
  double t = 0;
  for (std::uint64_t i = 0; i < g.count; ++i) {
    if (i > 0) t += arrivals.gamma(g.burstiness) / (g.burstiness * g.rate);
    ServingRequest r;
    r.arrival_s = t;
    if (named) {
      r.prompt = lognormal(named->input_mean, named->input_sigma, named->input_max);
      r.output = lognormal(named->output_mean, named->output_sigma, named->output_max);
    } else if (!g.lengths.empty()) {
      const auto& [in, o] = g.lengths[static_cast<std::size_t>(lengths.uniform() * g.lengths.size())];
      r.prompt = std::max<std::uint64_t>(in, 1), r.output = std::max<std::uint64_t>(o, 1);
    } else {
      r.prompt = draw_len(g.input_len), r.output = draw_len(g.output_len);
    }
    out.push_back(r);
  }
  if (t > kMaxTime)
    throw InputError("--rate " + shortest_number(g.rate) + " x --num-requests: arrivals past 1e6 s");
  return out;
}

}  // namespace ultrasim
