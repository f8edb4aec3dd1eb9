#include "volta/conformance/isolation.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <span>
#include <sstream>
#include <vector>

namespace volta::conformance {
namespace {

using Clock = std::chrono::steady_clock;

// Values are one line each, and trace fields are tab-separated: newlines, tabs and the
// escape character itself are escaped.
std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char c = s[++i];
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
    } else {
      out += s[i];
    }
  }
  return out;
}

constexpr char kHexDigits[] = "0123456789abcdef";

std::string hex(std::span<const std::byte> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::byte b : bytes) {
    const auto v = std::to_integer<unsigned>(b);
    out += kHexDigits[v >> 4];
    out += kHexDigits[v & 0xF];
  }
  return out;
}

std::optional<std::vector<std::byte>> unhex(std::string_view text) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (text.size() % 2 != 0) return std::nullopt;
  std::vector<std::byte> out(text.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(text[2 * i]), lo = digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<std::byte>(hi * 16 + lo);
  }
  return out;
}

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// One trace row: its fields, escaped, separated by tabs; the data as hex, "-" when the
// output was traced by hash only.
std::string trace_line(const NodeTraceRow& r) {
  std::string out;
  for (const std::string* field : {&r.subject, &r.node, &r.op, &r.kernel, &r.determinism, &r.origin,
                                   &r.dtype, &r.shape, &r.hash}) {
    out += escape(*field) + "\t";
  }
  out += std::to_string(r.step) + "\t" + std::to_string(r.output) + "\t";
  return out + (r.data ? hex(*r.data) : "-");
}

std::optional<NodeTraceRow> parse_trace_line(std::string_view line) {
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  if (fields.size() != 12) return std::nullopt;
  NodeTraceRow r;
  std::string* text[] = {&r.subject, &r.node,  &r.op,    &r.kernel, &r.determinism,
                         &r.origin,  &r.dtype, &r.shape, &r.hash};
  for (size_t i = 0; i < std::size(text); ++i) *text[i] = unescape(fields[i]);
  const std::optional<int> step = parse_int(fields[9]), output = parse_int(fields[10]);
  if (!step || !output) return std::nullopt;
  r.step = *step;
  r.output = *output;
  if (fields[11] != "-") {
    r.data = unhex(fields[11]);
    if (!r.data) return std::nullopt;
  }
  return r;
}

// Hex floats round-trip exactly.
std::string number(const std::optional<double>& v) {
  if (!v) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", *v);
  return buf;
}

std::optional<double> parse_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return std::strtod(s.c_str(), nullptr);
}

CaseOutcome run_here(const CaseBody& body) {
  const Clock::time_point start = Clock::now();
  CaseOutcome out;
  try {
    out = body();
  } catch (const std::exception& e) {
    out = CaseOutcome{};
    out.outcome = Outcome::Error;
    out.message = e.what();
  }
  out.duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return out;
}

void write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone; nothing left to tell
    done += static_cast<size_t>(n);
  }
}

CaseOutcome failure(Outcome outcome, std::string message, Clock::time_point start) {
  CaseOutcome out;
  out.outcome = outcome;
  out.message = std::move(message);
  out.duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return out;
}

}  // namespace

std::string serialize(const CaseOutcome& o) {
  std::ostringstream out;
  out << "outcome=" << outcome_name(o.outcome) << "\n"
      << "max_abs=" << number(o.max_abs) << "\n"
      << "max_rel=" << number(o.max_rel) << "\n"
      << "max_ulp=" << number(o.max_ulp) << "\n"
      << "tolerance_key=" << escape(o.tolerance_key) << "\n"
      << "tolerance=" << escape(o.tolerance) << "\n"
      << "output_hash=" << escape(o.output_hash) << "\n"
      << "kernel=" << escape(o.kernel) << "\n"
      << "message=" << escape(o.message) << "\n"
      << "duration_ms=" << number(o.duration_ms) << "\n"
      << "not_bit_exact=" << escape(o.not_bit_exact) << "\n";
  for (const NodeTraceRow& r : o.traces) out << "trace=" << trace_line(r) << "\n";
  out << "end\n";
  return out.str();
}

std::optional<CaseOutcome> deserialize(std::string_view text) {
  CaseOutcome o;
  bool ended = false, has_outcome = false;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    if (line == "end") {
      ended = true;
      break;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const std::string key = line.substr(0, eq);
    const std::string_view raw = std::string_view(line).substr(eq + 1);
    if (key == "trace") {  // fields escaped one by one: split before unescaping
      std::optional<NodeTraceRow> row = parse_trace_line(raw);
      if (!row) return std::nullopt;
      o.traces.push_back(std::move(*row));
      continue;
    }
    const std::string value = unescape(raw);
    if (key == "outcome") {
      const std::optional<Outcome> parsed = parse_outcome(value);
      if (!parsed) return std::nullopt;
      o.outcome = *parsed;
      has_outcome = true;
    } else if (key == "max_abs") {
      o.max_abs = parse_number(value);
    } else if (key == "max_rel") {
      o.max_rel = parse_number(value);
    } else if (key == "max_ulp") {
      o.max_ulp = parse_number(value);
    } else if (key == "tolerance_key") {
      o.tolerance_key = value;
    } else if (key == "tolerance") {
      o.tolerance = value;
    } else if (key == "output_hash") {
      o.output_hash = value;
    } else if (key == "kernel") {
      o.kernel = value;
    } else if (key == "message") {
      o.message = value;
    } else if (key == "duration_ms") {
      o.duration_ms = parse_number(value).value_or(0);
    } else if (key == "not_bit_exact") {
      o.not_bit_exact = value;
    } else {
      return std::nullopt;
    }
  }
  if (!ended || !has_outcome) return std::nullopt;
  return o;
}

CaseOutcome run_case(const CaseBody& body, const IsolationOptions& options) {
  if (!options.isolate) return run_here(body);

  const Clock::time_point start = Clock::now();
  int fds[2];
  if (pipe(fds) != 0) {
    return failure(Outcome::Error,
                   std::string("cannot isolate the case: pipe: ") + std::strerror(errno), start);
  }
  std::fflush(nullptr);  // the child must not flush the parent's buffered output again
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return failure(Outcome::Error,
                   std::string("cannot isolate the case: fork: ") + std::strerror(errno), start);
  }
  if (child == 0) {
    // A crash must kill the child so the parent sees the signal: drop any handler the host
    // process installed (a test framework, a crash reporter) for the fatal signals.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP}) signal(sig, SIG_DFL);
    close(fds[0]);
    write_all(fds[1], serialize(run_here(body)));
    close(fds[1]);
    _exit(0);  // no atexit handlers or static destructors of the parent's state
  }

  close(fds[1]);
  std::string received;
  bool timed_out = false;
  const Clock::time_point deadline = start + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(options.timeout_s));
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child finished or died
    received.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }

  if (timed_out) {
    char text[64];
    std::snprintf(text, sizeof text, "killed after %.1f s", options.timeout_s);
    return failure(Outcome::Timeout, text, start);
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return failure(Outcome::Crash, "signal " + std::to_string(sig) + " (" + strsignal(sig) + ")",
                   start);
  }
  if (std::optional<CaseOutcome> reported = deserialize(received)) return *reported;
  return failure(Outcome::Error,
                 "the isolated case exited with status " +
                     std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                     " without reporting a result",
                 start);
}

}  // namespace volta::conformance
