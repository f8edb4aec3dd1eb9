#include "perf_samples.h"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <system_error>

namespace volta::audit {
namespace {

constexpr size_t kSampleFields = 11;
constexpr size_t kErrorFields = 3;

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
    if (tab == std::string_view::npos) return fields;
    start = tab + 1;
  }
}

class LineParser {
 public:
  explicit LineParser(int line) : line_(line) {}

  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("line " + std::to_string(line_) + ": " + why);
  }

  template <typename T>
  T integer(std::string_view text, std::string_view what, T minimum) const {
    T value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < minimum) {
      fail(std::string(what) + " must be an integer >= " + std::to_string(minimum) + ", got '" +
           std::string(text) + "'");
    }
    return value;
  }

  double number(std::string_view text, std::string_view what) const {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
        value < 0) {
      fail(std::string(what) + " must be a finite number >= 0, got '" + std::string(text) + "'");
    }
    return value;
  }

  std::optional<double> optional_number(std::string_view text, std::string_view what) const {
    if (text.empty()) return std::nullopt;
    return number(text, what);
  }

 private:
  int line_;
};

}  // namespace

SampleFile parse_sample_file(std::istream& in, int pass, int process) {
  SampleFile file;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const LineParser p(number);
    const std::vector<std::string_view> f = split_tabs(line);
    if (f[0] == "error") {
      if (f.size() != kErrorFields) {
        p.fail("an error line has 3 tab-separated fields (error, NAME, MESSAGE), got " +
               std::to_string(f.size()));
      }
      if (f[1].empty()) p.fail("an error line needs a benchmark name");
      file.errors.push_back({std::string(f[1]), std::string(f[2])});
      continue;
    }
    if (f[0] != "sample")
      p.fail("a line starts with 'sample' or 'error', got '" + std::string(f[0]) + "'");
    if (f.size() != kSampleFields) {
      p.fail("a sample line has 11 tab-separated fields, got " + std::to_string(f.size()));
    }
    if (f[1].empty()) p.fail("a sample line needs a benchmark name");
    PerfSample s;
    s.benchmark = f[1];
    s.pass = pass;
    s.process = process;
    s.repetition = p.integer<int>(f[2], "REPETITION", 0);
    s.seconds = p.number(f[3], "SECONDS");
    if (s.seconds <= 0) p.fail("SECONDS must be positive, got '" + std::string(f[3]) + "'");
    s.iterations = p.integer<int64_t>(f[4], "ITERATIONS", 1);
    s.variant = f[5];
    s.threads = p.integer<int>(f[6], "THREADS", 1);
    s.gflops = p.optional_number(f[7], "GFLOPS");
    s.gbytes_per_s = p.optional_number(f[8], "GBPS");
    if (!f[9].empty()) s.peak_bytes = p.integer<int64_t>(f[9], "PEAK", 0);
    s.context = f[10];
    file.samples.push_back(std::move(s));
  }
  return file;
}

}  // namespace volta::audit
