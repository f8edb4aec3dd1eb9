#include "docs_contract.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "queries.h"
#include "volta/conformance/matrix_suite.h"
#include "volta/ir/op_schema.h"

namespace volta::audit {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kBeginStart = "<!-- BEGIN GENERATED";
constexpr std::string_view kBeginPrefix = "<!-- BEGIN GENERATED: ";
constexpr std::string_view kBeginSuffix = " (volta-audit docs sync; do not edit) -->";
constexpr std::string_view kEndStart = "<!-- END GENERATED";
constexpr std::string_view kEndPrefix = "<!-- END GENERATED: ";
constexpr std::string_view kEndSuffix = " -->";
constexpr std::string_view kClaimStart = "<!-- claim:";
constexpr std::string_view kCommentEnd = "-->";
constexpr std::string_view kCiScriptDir = "scripts/ci/";

// ---------------------------------------------------------------------------------------
// Text files, as lines.

struct TextFile {
  std::vector<std::string> lines;  // without their '\n'
  bool final_newline = false;
};

TextFile split_lines(std::string_view text) {
  TextFile file;
  file.final_newline = text.ends_with('\n');
  if (file.final_newline) text.remove_suffix(1);
  if (text.empty() && !file.final_newline) return file;
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string_view::npos; nl = text.find('\n', start)) {
    file.lines.emplace_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  file.lines.emplace_back(text.substr(start));
  return file;
}

std::string join_lines(const TextFile& file) {
  std::string text;
  for (size_t i = 0; i < file.lines.size(); ++i) {
    if (i > 0) text += '\n';
    text += file.lines[i];
  }
  if (file.final_newline) text += '\n';
  return text;
}

TextFile read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DocsError("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return split_lines(text.str());
}

// Written beside the target and renamed over it, so an interrupted sync leaves either the
// old file or the new one, never half of each.
void write_text_atomically(const fs::path& path, const std::string& text) {
  fs::path temp = path;
  temp += ".volta-docs-sync.tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw DocsError("cannot write " + temp.string());
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) throw DocsError("cannot replace " + path.string() + ": " + ec.message());
}

std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// README.md, then governance/*.md by name: the files the contract covers, relative to root.
std::vector<std::string> doc_files(const fs::path& root) {
  std::vector<std::string> files;
  if (fs::is_regular_file(root / "README.md")) files.emplace_back("README.md");
  std::vector<std::string> governance;
  if (fs::is_directory(root / "governance")) {
    for (const fs::directory_entry& entry : fs::directory_iterator(root / "governance")) {
      if (entry.is_regular_file() && entry.path().extension() == ".md") {
        governance.push_back("governance/" + entry.path().filename().string());
      }
    }
  }
  std::sort(governance.begin(), governance.end());
  files.insert(files.end(), governance.begin(), governance.end());
  if (files.empty()) {
    throw DocsError("no README.md or governance/*.md under " + root.string() +
                    ": run from the repository root or pass --root DIR");
  }
  return files;
}

// ---------------------------------------------------------------------------------------
// Markdown code: marker syntax shown in a fenced block or an inline span is text.

// true for each line inside a fenced code block (the fence lines included).
std::vector<bool> fenced_lines(const std::vector<std::string>& lines) {
  std::vector<bool> fenced(lines.size(), false);
  char open_fence = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view t = trim(lines[i]);
    const bool is_fence = t.starts_with("```") || t.starts_with("~~~");
    if (is_fence && open_fence == 0) {
      open_fence = t[0];
      fenced[i] = true;
    } else if (is_fence && t[0] == open_fence) {
      open_fence = 0;
      fenced[i] = true;
    } else {
      fenced[i] = open_fence != 0;
    }
  }
  return fenced;
}

// The line with the contents of `inline code spans` blanked out.
std::string without_code_spans(std::string_view line) {
  std::string out(line);
  bool in_code = false;
  for (char& c : out) {
    if (c == '`') {
      in_code = !in_code;
    } else if (in_code) {
      c = ' ';
    }
  }
  return out;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

bool is_name(std::string_view s) { return !s.empty() && std::ranges::all_of(s, is_name_char); }

// "a, b, c" from the .name of each item: the valid choices an error message lists.
template <class Items>
std::string names_of(const Items& items) {
  std::string names;
  for (const auto& item : items) {
    if (!names.empty()) names += ", ";
    names += item.name;
  }
  return names;
}

// ---------------------------------------------------------------------------------------
// Generated sections.

struct Section {
  std::string name;
  size_t begin = 0;  // index of the BEGIN line
  size_t end = 0;    // index of the END line
};

struct MarkerError {
  size_t line = 0;  // index
  std::string section;
  std::string detail;
};

struct SectionScan {
  std::vector<Section> sections;
  std::optional<MarkerError> error;  // the first broken marker; the scan stops there
};

std::optional<std::string> marker_name(std::string_view line, std::string_view prefix,
                                       std::string_view suffix) {
  if (!line.starts_with(prefix) || !line.ends_with(suffix)) return std::nullopt;
  line.remove_prefix(prefix.size());
  line.remove_suffix(suffix.size());
  if (!is_name(line)) return std::nullopt;
  return std::string(line);
}

std::string begin_marker(std::string_view name) {
  return std::string(kBeginPrefix) + std::string(name) + std::string(kBeginSuffix);
}
std::string end_marker(std::string_view name) {
  return std::string(kEndPrefix) + std::string(name) + std::string(kEndSuffix);
}

// Sections in file order. The first broken marker ends the scan: after it, which lines
// belong to which section is a guess, and a guess must not be checked or rewritten.
SectionScan scan_sections(const std::vector<std::string>& lines) {
  SectionScan scan;
  const std::vector<bool> fenced = fenced_lines(lines);
  std::optional<Section> open;
  auto fail = [&](size_t i, std::string section, std::string detail) {
    scan.error = MarkerError{i, std::move(section), std::move(detail)};
    return scan;
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    if (fenced[i]) continue;
    const std::string_view t = trim(lines[i]);
    if (t.starts_with(kBeginStart)) {
      const std::optional<std::string> name = marker_name(t, kBeginPrefix, kBeginSuffix);
      if (!name) {
        return fail(i, "?", "malformed marker: expected `" + begin_marker("NAME") + "`");
      }
      if (open) {
        return fail(i, *name,
                    "BEGIN GENERATED: " + *name + " inside section " + open->name +
                        " (opened at line " + std::to_string(open->begin + 1) +
                        "): generated sections do not nest");
      }
      open = Section{*name, i, 0};
    } else if (t.starts_with(kEndStart)) {
      const std::optional<std::string> name = marker_name(t, kEndPrefix, kEndSuffix);
      if (!name) return fail(i, "?", "malformed marker: expected `" + end_marker("NAME") + "`");
      if (!open) return fail(i, *name, "END GENERATED: " + *name + " without a matching BEGIN");
      if (*name != open->name) {
        return fail(i, *name,
                    "END GENERATED: " + *name + " closes section " + open->name +
                        " (opened at line " + std::to_string(open->begin + 1) + ")");
      }
      open->end = i;
      scan.sections.push_back(std::move(*open));
      open.reset();
    }
  }
  if (open) {
    return fail(open->begin, open->name,
                "unterminated: no `" + end_marker(open->name) + "` after line " +
                    std::to_string(open->begin + 1));
  }
  return scan;
}

const GeneratedSection* find_section(std::string_view name) {
  for (const GeneratedSection& s : generated_sections()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string unknown_section_detail(std::string_view name) {
  return "unknown generated section `" + std::string(name) +
         "` (known: " + names_of(generated_sections()) + ")";
}

// A section's generated lines, or why there are none (a section from results without them).
struct Rendered {
  std::vector<std::string> lines;
  std::string unavailable;  // non-empty: not rendered, and why
};

// Each generator runs once per check or sync, however many files embed its section.
class RenderCache {
 public:
  explicit RenderCache(const ResultsSource* results) : results_(results) {}

  const Rendered& render(const GeneratedSection& section) {
    auto it = rendered_.find(section.name);
    if (it == rendered_.end()) it = rendered_.emplace(section.name, run(section)).first;
    return it->second;
  }

 private:
  Rendered run(const GeneratedSection& section) const {
    if (section.from_results && (results_ == nullptr || results_->db == nullptr)) {
      return {{},
              "generated from the results database; `volta-audit docs check` with evidence "
              "(not --no-evidence) compares it"};
    }
    try {
      return {split_lines(section.render(results_ ? *results_ : ResultsSource{})).lines, ""};
    } catch (const SectionUnavailable& e) {
      return {{}, e.what()};
    }
  }

  const ResultsSource* results_;
  std::map<std::string_view, Rendered> rendered_;
};

std::string in_quotes(std::string_view line) { return "\"" + std::string(line) + "\""; }

// Where the committed section first departs from the generator's output, or "" if nowhere.
std::string first_difference(const std::vector<std::string>& file_lines, const Section& section,
                             const std::vector<std::string>& expected) {
  const size_t committed = section.end - section.begin - 1;
  for (size_t k = 0; k < std::max(committed, expected.size()); ++k) {
    const size_t at = section.begin + 1 + k;
    const std::string found = k < committed ? in_quotes(file_lines[at]) : "the END marker";
    const std::string wanted = k < expected.size() ? in_quotes(expected[k]) : "the END marker";
    if (found != wanted) {
      std::string detail = "differs from `volta-audit docs sync` output: first difference at line ";
      detail += std::to_string(at + 1) + ": expected ";
      detail += wanted + ", found ";
      return detail + found;
    }
  }
  return {};
}

DocFinding section_finding(const std::string& file, size_t line, std::string_view name,
                           GateStatus status, std::string detail) {
  return DocFinding{"section:" + std::string(name),
                    file,
                    static_cast<int>(line + 1),
                    "docs sync",
                    status,
                    std::move(detail)};
}

void check_sections(const std::string& file, const TextFile& doc, RenderCache& cache,
                    std::vector<DocFinding>& findings) {
  const SectionScan scan = scan_sections(doc.lines);
  for (const Section& section : scan.sections) {
    const GeneratedSection* generator = find_section(section.name);
    if (generator == nullptr) {
      findings.push_back(section_finding(file, section.begin, section.name, GateStatus::Fail,
                                         unknown_section_detail(section.name)));
      continue;
    }
    const Rendered& rendered = cache.render(*generator);
    if (!rendered.unavailable.empty()) {
      findings.push_back(section_finding(file, section.begin, section.name, GateStatus::NotVerified,
                                         rendered.unavailable));
      continue;
    }
    std::string difference = first_difference(doc.lines, section, rendered.lines);
    findings.push_back(difference.empty()
                           ? section_finding(file, section.begin, section.name, GateStatus::Pass,
                                             "matches `volta-audit docs sync` output")
                           : section_finding(file, section.begin, section.name, GateStatus::Fail,
                                             std::move(difference)));
  }
  if (scan.error) {
    findings.push_back(section_finding(file, scan.error->line, scan.error->section,
                                       GateStatus::Fail, scan.error->detail));
  }
}

// ---------------------------------------------------------------------------------------
// Claims.

struct Claim {
  std::string id;
  std::string kind;  // "gate" or "query"
  std::string name;
};

// "ID gate=NAME" or "ID query=NAME", the text between "<!-- claim:" and "-->".
std::optional<Claim> parse_claim(std::string_view body) {
  std::vector<std::string_view> words;
  for (size_t at = 0; at < body.size();) {
    const size_t start = body.find_first_not_of(" \t", at);
    if (start == std::string_view::npos) break;
    const size_t stop = std::min(body.find_first_of(" \t", start), body.size());
    words.push_back(body.substr(start, stop - start));
    at = stop;
  }
  if (words.size() != 2 || !is_name(words[0])) return std::nullopt;
  const size_t eq = words[1].find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  Claim claim{std::string(words[0]), std::string(words[1].substr(0, eq)),
              std::string(words[1].substr(eq + 1))};
  if ((claim.kind != "gate" && claim.kind != "query") || !is_name(claim.name)) return std::nullopt;
  return claim;
}

// Why the claim's evidence cannot be asked for, or "" when it can.
std::string evidence_problem(const Claim& claim) {
  if (claim.kind == "gate") {
    if (find_gate(claim.name) == nullptr) {
      return "unknown gate `" + claim.name + "` (gates: " + names_of(gates()) + ")";
    }
    if (claim.name == "docs-contract") {
      return "gate docs-contract cannot prove a claim: it is the verdict of docs check itself";
    }
    return {};
  }
  if (find_query(claim.name) == nullptr) {
    return "unknown query `" + claim.name + "` (queries: " + names_of(canned_queries()) + ")";
  }
  return {};
}

class ClaimChecker {
 public:
  ClaimChecker(const EvidenceFn* evidence, std::vector<DocFinding>& findings)
      : evidence_(evidence), findings_(findings) {}

  void check_file(const std::string& file, const TextFile& doc) {
    const std::vector<bool> fenced = fenced_lines(doc.lines);
    for (size_t i = 0; i < doc.lines.size(); ++i) {
      if (!fenced[i]) check_line(file, static_cast<int>(i + 1), without_code_spans(doc.lines[i]));
    }
  }

 private:
  void check_line(const std::string& file, int line, std::string_view text) {
    for (size_t at = text.find(kClaimStart); at != std::string_view::npos;
         at = text.find(kClaimStart, at + kClaimStart.size())) {
      const size_t body = at + kClaimStart.size();
      const size_t close = text.find(kCommentEnd, body);
      if (close == std::string_view::npos) {
        add(file, line, "claim", "", GateStatus::Fail,
            "claim marker not closed with `-->` on its line");
        return;
      }
      check_marker(file, line, text.substr(at, close + kCommentEnd.size() - at),
                   text.substr(body, close - body));
    }
  }

  void check_marker(const std::string& file, int line, std::string_view marker,
                    std::string_view body) {
    const std::optional<Claim> claim = parse_claim(body);
    if (!claim) {
      add(file, line, "claim", "", GateStatus::Fail,
          "malformed claim marker `" + std::string(marker) +
              "`: expected `<!-- claim: ID gate=GATE -->` or `<!-- claim: ID query=QUERY -->`");
      return;
    }
    const std::string evidence = claim->kind + "=" + claim->name;
    const std::string here = file + ":" + std::to_string(line);
    const auto [first, inserted] = first_seen_.emplace(claim->id, here);
    if (!inserted) {
      add(file, line, claim->id, evidence, GateStatus::Fail,
          "duplicate claim id `" + claim->id + "` (first at " + first->second + ")");
      return;
    }
    if (std::string problem = evidence_problem(*claim); !problem.empty()) {
      add(file, line, claim->id, evidence, GateStatus::Fail, std::move(problem));
      return;
    }
    if (evidence_ == nullptr) {
      add(file, line, claim->id, evidence, GateStatus::NotVerified,
          "evidence not evaluated (--no-evidence)");
      return;
    }
    auto [status, detail] = (*evidence_)(claim->kind, claim->name);
    add(file, line, claim->id, evidence, status, std::move(detail));
  }

  void add(const std::string& file, int line, std::string claim, std::string evidence,
           GateStatus status, std::string detail) {
    findings_.push_back(
        DocFinding{std::move(claim), file, line, std::move(evidence), status, std::move(detail)});
  }

  const EvidenceFn* evidence_;
  std::vector<DocFinding>& findings_;
  std::map<std::string, std::string> first_seen_;  // claim id -> "file:line"
};

// ---------------------------------------------------------------------------------------
// Workflows: every scripts/ci/*.sh a `run:` step names must exist and be executable.

struct RunText {
  int line = 0;
  std::string text;
};

size_t indent_of(std::string_view line) {
  const size_t first = line.find_first_not_of(' ');
  return first == std::string_view::npos ? line.size() : first;
}

// The text of every `run:` step, one entry per line: "run: cmd" and the lines of a
// "run: |" or "run: >" block (those indented deeper than the key).
std::vector<RunText> run_step_lines(const std::vector<std::string>& lines) {
  std::vector<RunText> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = trim(lines[i]);
    if (t.starts_with("- ")) t = trim(t.substr(2));
    if (!t.starts_with("run:")) continue;
    const std::string_view value = trim(t.substr(4));
    if (!value.starts_with('|') && !value.starts_with('>')) {
      out.push_back({static_cast<int>(i + 1), std::string(value)});
      continue;
    }
    const size_t key_indent = lines[i].find("run:");
    while (i + 1 < lines.size() &&
           (trim(lines[i + 1]).empty() || indent_of(lines[i + 1]) > key_indent)) {
      ++i;
      out.push_back({static_cast<int>(i + 1), lines[i]});
    }
  }
  return out;
}

// Every "scripts/ci/NAME.sh" in a command line ("./scripts/ci/x.sh" and "$DIR/scripts/ci/x.sh"
// count; "myscripts/ci/x.sh" does not).
std::vector<std::string> ci_scripts_named(std::string_view text) {
  std::vector<std::string> scripts;
  for (size_t at = text.find(kCiScriptDir); at != std::string_view::npos;
       at = text.find(kCiScriptDir, at + 1)) {
    if (at > 0 && is_name_char(text[at - 1])) continue;
    size_t stop = at + kCiScriptDir.size();
    while (stop < text.size() && (is_name_char(text[stop]) || text[stop] == '/')) ++stop;
    const std::string_view token = text.substr(at, stop - at);
    if (token.ends_with(".sh")) scripts.emplace_back(token);
  }
  return scripts;
}

std::pair<GateStatus, std::string> script_status(const fs::path& root, const std::string& script) {
  const fs::file_status st = fs::status(root / script);
  const std::string calls = "calls " + script + ", which ";
  if (!fs::exists(st)) return {GateStatus::Fail, calls + "does not exist"};
  if (!fs::is_regular_file(st)) return {GateStatus::Fail, calls + "is not a regular file"};
  constexpr fs::perms kAnyExec =
      fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
  if ((st.permissions() & kAnyExec) == fs::perms::none) {
    return {GateStatus::Fail, calls + "is not executable (chmod +x " + script + ")"};
  }
  return {GateStatus::Pass, calls + "exists and is executable"};
}

void check_workflows(const fs::path& root, std::vector<DocFinding>& findings) {
  const fs::path dir = root / ".github" / "workflows";
  if (!fs::is_directory(dir)) return;
  std::vector<fs::path> workflows;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const fs::path ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".yml" || ext == ".yaml")) {
      workflows.push_back(entry.path());
    }
  }
  std::sort(workflows.begin(), workflows.end());
  for (const fs::path& workflow : workflows) {
    const std::string name = workflow.filename().string();
    for (const RunText& run : run_step_lines(read_text(workflow).lines)) {
      for (const std::string& script : ci_scripts_named(run.text)) {
        auto [status, detail] = script_status(root, script);
        std::string claim = "workflow:" + name;
        claim += ":" + script;
        findings.push_back(DocFinding{std::move(claim), ".github/workflows/" + name, run.line,
                                      "file exists", status, std::move(detail)});
      }
    }
  }
}

std::string now_utc_millis() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[40];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(millis));
  return buf;
}

// ---------------------------------------------------------------------------------------
// The numerics policy: its rules are the matrix's input, so a rule that does not parse, an
// op of the table without a rule, or a rule no cell can run fails the docs check.

DocFinding rules_finding(const std::string& file, int line, GateStatus status, std::string detail) {
  return DocFinding{"numerics-rules", file, line, "rule grammar", status, std::move(detail)};
}

void check_policy_rules(const std::string& file, const TextFile& doc,
                        std::vector<DocFinding>& findings) {
  const conformance::Policy policy = conformance::parse_policy(join_lines(doc));
  const size_t before = findings.size();
  // Findings about the rules as a whole point at the BEGIN RULES marker.
  const auto marker = std::ranges::find(doc.lines, conformance::kRulesBegin);
  const int rules_line =
      marker == doc.lines.end() ? 0 : static_cast<int>(marker - doc.lines.begin()) + 1;
  for (const conformance::PolicyError& e : policy.errors) {
    findings.push_back(
        rules_finding(file, e.line == 0 ? rules_line : e.line, GateStatus::Fail, e.message));
  }
  for (const std::string& problem : conformance::matrix_problems(policy)) {
    findings.push_back(rules_finding(file, rules_line, GateStatus::Fail, problem));
  }
  const std::vector<OpKind> missing = conformance::ops_without_rule(policy);
  if (!missing.empty()) {
    std::string names;
    for (OpKind op : missing) names += (names.empty() ? "" : ", ") + std::string(op_name(op));
    findings.push_back(rules_finding(file, rules_line, GateStatus::Fail,
                                     std::to_string(missing.size()) + " op(s) of the op table " +
                                         "have no numerics rule: " + names));
  }
  if (findings.size() == before) {
    findings.push_back(rules_finding(
        file, rules_line, GateStatus::Pass,
        std::to_string(policy.rules.size()) + " rules parse; every op of the op table has one"));
  }
}

}  // namespace

std::vector<DocFinding> check_docs(const fs::path& root, const EvidenceFn* evidence,
                                   const ResultsSource* results) {
  std::vector<DocFinding> findings;
  RenderCache cache(results);
  ClaimChecker claims(evidence, findings);
  for (const std::string& file : doc_files(root)) {
    const TextFile doc = read_text(root / file);
    check_sections(file, doc, cache, findings);
    claims.check_file(file, doc);
    if (file == conformance::kPolicyFile) check_policy_rules(file, doc, findings);
  }
  check_workflows(root, findings);
  return findings;
}

bool docs_ok(const std::vector<DocFinding>& findings, bool evidence_required) {
  return std::ranges::none_of(findings, [&](const DocFinding& f) {
    return f.status == GateStatus::Fail ||
           (evidence_required && f.status == GateStatus::NotVerified);
  });
}

void record_doc_findings(conformance::Database& db, std::string_view commit,
                         std::span<const DocFinding> findings, bool dirty) {
  const std::string checked_at = now_utc_millis();
  conformance::Transaction tx(db);
  conformance::Statement insert = db.prepare(
      "INSERT INTO doc_claim (commit_sha, claim, file, line, evidence, status, detail, "
      "checked_at, dirty) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  for (const DocFinding& f : findings) {
    insert.bind(1, commit)
        .bind(2, f.claim)
        .bind(3, f.file)
        .bind(4, static_cast<int64_t>(f.line))
        .bind(5, f.evidence)
        .bind(6, gate_status_name(f.status))
        .bind(7, f.detail)
        .bind(8, checked_at)
        .bind(9, int64_t{dirty})
        .run();
    insert.reset();
  }
  tx.commit();
}

std::vector<std::string> sync_docs(const fs::path& root, const ResultsSource* results,
                                   std::vector<std::string>* left_as_is) {
  struct Rewrite {
    std::string file;
    std::string text;
  };
  std::vector<Rewrite> rewrites;
  std::vector<std::string> left;
  std::string problems;
  RenderCache cache(results);
  for (const std::string& file : doc_files(root)) {
    TextFile doc = read_text(root / file);
    const SectionScan scan = scan_sections(doc.lines);
    if (scan.error) {
      problems +=
          "\n  " + file + ":" + std::to_string(scan.error->line + 1) + ": " + scan.error->detail;
      continue;
    }
    const std::string before = join_lines(doc);
    // Back to front, so the line indices of earlier sections stay valid.
    for (auto s = scan.sections.rbegin(); s != scan.sections.rend(); ++s) {
      const GeneratedSection* generator = find_section(s->name);
      if (generator == nullptr) {
        problems += "\n  " + file + ":" + std::to_string(s->begin + 1) + ": " +
                    unknown_section_detail(s->name);
        continue;
      }
      const Rendered& rendered = cache.render(*generator);
      if (!rendered.unavailable.empty()) {
        left.push_back(file + ":" + std::to_string(s->begin + 1) + ": section " + s->name +
                       " left as it is: " + rendered.unavailable);
        continue;
      }
      const std::vector<std::string>& lines = rendered.lines;
      const auto first = doc.lines.begin() + static_cast<std::ptrdiff_t>(s->begin + 1);
      const auto last = doc.lines.begin() + static_cast<std::ptrdiff_t>(s->end);
      doc.lines.insert(doc.lines.erase(first, last), lines.begin(), lines.end());
    }
    std::string after = join_lines(doc);
    if (after != before) rewrites.push_back({file, std::move(after)});
  }
  if (!problems.empty()) {
    throw DocsError("nothing written; fix these markers first:" + problems);
  }
  std::vector<std::string> changed;
  for (const Rewrite& r : rewrites) {
    write_text_atomically(root / r.file, r.text);
    changed.push_back(r.file);
  }
  if (left_as_is != nullptr) {
    *left_as_is = std::move(left);
  } else {
    for (const std::string& line : left) std::fprintf(stderr, "docs sync: %s\n", line.c_str());
  }
  return changed;
}

}  // namespace volta::audit
