#include "volta/conformance/expectations.h"

#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include "tsv.h"
#include "volta/error.h"

namespace volta::conformance {
namespace {

bool is_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  const int month = (s[5] - '0') * 10 + (s[6] - '0');
  const int day = (s[8] - '0') * 10 + (s[9] - '0');
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

[[noreturn]] void bad_line(std::string_view file, int line, const std::string& what) {
  fail(ErrorCode::InvalidArgument,
       std::string(file) + ":" + std::to_string(line) + ": " + what +
           " (columns: pattern, outcome, reason, issue, expires YYYY-MM-DD)");
}

}  // namespace

std::vector<Expectation> parse_expectations(std::string_view tsv, std::string_view file) {
  std::vector<Expectation> out;
  for_each_tsv_row(tsv, [&](const std::vector<std::string>& f, int number) {
    if (f.size() != 5) {
      bad_line(file, number, "expected 5 tab-separated fields, found " + std::to_string(f.size()));
    }
    const std::optional<Outcome> outcome = parse_outcome(f[1]);
    if (!outcome || *outcome == Outcome::Pass) {
      bad_line(file, number,
               "'" + f[1] +
                   "' is not an expectable outcome (FAIL_NUMERIC, FAIL_SHAPE, FAIL_DTYPE, "
                   "UNSUPPORTED, SKIPPED, ERROR, CRASH, TIMEOUT, MISSING)");
    }
    if (f[0].empty() || f[2].empty() || f[3].empty()) {
      bad_line(file, number, "pattern, reason and issue must not be empty");
    }
    if (!is_date(f[4])) bad_line(file, number, "expiry '" + f[4] + "' is not a YYYY-MM-DD date");
    out.push_back({f[0], *outcome, f[2], f[3], f[4], number, std::string(file)});
  });
  return out;
}

namespace {

std::vector<Expectation> load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_expectations(text.str(), path);
}

}  // namespace

std::string backend_expectations_path(const std::string& dir, std::string_view suite,
                                      std::string_view backend) {
  return dir + "/" + std::string(backend) + "/" + std::string(suite) + ".tsv";
}

std::vector<Expectation> load_expectations(const std::string& dir, std::string_view suite,
                                           std::string_view backend) {
  std::vector<Expectation> out;
  if (!backend.empty()) out = load_file(backend_expectations_path(dir, suite, backend));
  for (Expectation& e : load_file(dir + "/" + std::string(suite) + ".tsv")) {
    out.push_back(std::move(e));
  }
  return out;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative wildcard match with backtracking to the last '*': linear in practice.
  size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

const Expectation* match_expectation(std::span<const Expectation> expectations,
                                     std::string_view case_id) {
  for (const Expectation& e : expectations) {
    if (glob_match(e.pattern, case_id)) return &e;
  }
  return nullptr;
}

Verdict verdict_for(Outcome outcome, const Expectation* expectation, std::string_view today,
                    bool declared_precondition) {
  if (expectation == nullptr) {
    const bool expected =
        outcome == Outcome::Pass || (outcome == Outcome::Skipped && declared_precondition);
    return expected ? Verdict::Expected : Verdict::Unexpected;
  }
  // ISO dates compare correctly as text.
  if (expectation->expires < today) return Verdict::Expired;
  if (outcome == expectation->outcome) return Verdict::Expected;
  if (outcome == Outcome::Skipped && declared_precondition) return Verdict::Expected;
  return outcome == Outcome::Pass ? Verdict::UnexpectedPass : Verdict::Unexpected;
}

std::string today_utc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace volta::conformance
