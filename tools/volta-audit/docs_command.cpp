// `volta-audit docs check|sync`: the docs contract from the command line.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "build_info.h"
#include "commands.h"
#include "committed_inputs.h"
#include "docs_contract.h"
#include "queries.h"
#include "volta/conformance/store.h"

namespace volta::audit {
namespace {

constexpr std::string_view kSupported =
    "check|sync, --no-evidence (check), --root DIR, --db PATH, --commit SHA";

bool has_complete_run(const conformance::Database& db, const std::string& commit) {
  conformance::Statement runs =
      db.prepare("SELECT 1 FROM run WHERE commit_sha = ?1 AND status = 'complete' LIMIT 1");
  runs.bind(1, commit);
  return runs.step();
}

// Claims are proven by the results store: a gate that passes for the commit, or a canned
// question with no answer (no failing row). A question about a commit that has no complete
// run has no answer either, which proves nothing: that claim is NOT VERIFIED.
EvidenceFn store_evidence(const conformance::Database& db, const std::string& commit) {
  return [&db, commit](std::string_view kind,
                       std::string_view name) -> std::pair<GateStatus, std::string> {
    if (kind == "gate") {
      const GateResult result = evaluate_gate(db, *find_gate(name), commit, /*release=*/false);
      return {result.status, "gate " + std::string(name) + ": " + result.reason};
    }
    if (!has_complete_run(db, commit)) {
      return {GateStatus::NotVerified, "query " + std::string(name) +
                                           ": no complete run for commit " + commit.substr(0, 12)};
    }
    const QueryResult answer = run_read_only(db, find_query(name)->sql, commit);
    if (answer.rows.empty()) return {GateStatus::Pass, "query " + std::string(name) + ": no rows"};
    std::string first;
    for (const std::string& cell : answer.rows.front()) {
      first += (first.empty() ? "" : " | ") + cell;
    }
    return {GateStatus::Fail, "query " + std::string(name) + " returns " +
                                  std::to_string(answer.rows.size()) + " row(s); first: " + first};
  };
}

int rank(GateStatus status) {
  switch (status) {
    case GateStatus::Fail:
      return 0;
    case GateStatus::NotVerified:
      return 1;
    case GateStatus::Pass:
      return 2;
  }
  return 2;
}

std::string location(const DocFinding& f) { return f.file + ":" + std::to_string(f.line); }

// One aligned line per finding, FAIL first, then NOT VERIFIED, then PASS, each in file order.
void print_findings(std::vector<DocFinding> findings) {
  std::ranges::stable_sort(findings, {}, [](const DocFinding& f) { return rank(f.status); });
  int status_width = 0;
  int claim_width = 0;
  int where_width = 0;
  for (const DocFinding& f : findings) {
    status_width = std::max(status_width, static_cast<int>(gate_status_name(f.status).size()));
    claim_width = std::max(claim_width, static_cast<int>(f.claim.size()));
    where_width = std::max(where_width, static_cast<int>(location(f).size()));
  }
  for (const DocFinding& f : findings) {
    std::printf("%-*s  %-*s  %-*s  %s\n", status_width,
                std::string(gate_status_name(f.status)).c_str(), claim_width, f.claim.c_str(),
                where_width, location(f).c_str(), f.detail.c_str());
  }
}

// Prints the findings and the summary line; returns the exit status.
int print_verdict(const std::vector<DocFinding>& findings, bool evidence_required) {
  const bool ok = docs_ok(findings, evidence_required);
  print_findings(findings);
  auto count = [&](GateStatus s) { return std::ranges::count(findings, s, &DocFinding::status); };
  std::printf("docs check: %s (%td pass, %td fail, %td not verified%s)\n", ok ? "PASS" : "FAIL",
              count(GateStatus::Pass), count(GateStatus::Fail), count(GateStatus::NotVerified),
              evidence_required ? "" : "; claims checked for form only");
  return ok ? 0 : 1;
}

// The docs under `root` that are not the files committed at this binary's commit, in words
// (the first one), or "" when all of them are: README.md, governance/*.md and the workflows.
std::string edited_docs(const std::filesystem::path& root) {
  std::vector<conformance::RunInput> docs = {file_input("README.md", root / "README.md")};
  for (auto [folder, extension] :
       {std::pair{"governance", ".md"}, std::pair{".github/workflows", ".yml"}}) {
    for (conformance::RunInput& input : folder_inputs(folder, root / folder, extension)) {
      docs.push_back(std::move(input));
    }
  }
  for (const conformance::RunInput& d : docs) {
    if (d.sha256 != d.committed_sha256) return d.name;
  }
  return "";
}

int docs_check(const std::filesystem::path& root, bool evidence_required,
               const std::string& db_path, const std::string& commit) {
  if (!evidence_required) return print_verdict(check_docs(root, nullptr), false);
  if (!std::filesystem::exists(db_path)) {
    throw conformance::StoreError("no results database at " + db_path +
                                  ": run `volta-audit run` first, or pass --no-evidence to "
                                  "check the docs' form only");
  }
  conformance::ResultStore store(db_path);
  const EvidenceFn evidence = store_evidence(store.db(), commit);
  const ResultsSource results{&store.db(), commit};
  const std::vector<DocFinding> findings = check_docs(root, &evidence, &results);
  const std::string edited = edited_docs(root);
  const bool dirty = build::kDirty || !edited.empty() || commit != build::kCommit;
  record_doc_findings(store.db(), commit, findings, dirty);
  const int status = print_verdict(findings, true);
  const std::string note = !dirty ? ""
                           : !edited.empty()
                               ? " (" + edited + " is not the committed file: not release evidence)"
                               : std::string(
                                     " (not the committed docs of that commit: not release "
                                     "evidence)");
  std::printf("recorded %zu finding(s) for commit %s in %s%s\n", findings.size(), commit.c_str(),
              db_path.c_str(), note.c_str());
  return status;
}

// Sections generated from results read the database when it exists; without it they are left
// as they are, and said so.
int docs_sync(const std::filesystem::path& root, const std::string& db_path,
              const std::string& commit) {
  std::optional<conformance::ResultStore> store;
  if (std::filesystem::exists(db_path)) {
    store.emplace(db_path, conformance::Database::Mode::ReadOnly);
  }
  const ResultsSource results{store ? &store->db() : nullptr, commit};
  std::vector<std::string> left_as_is;
  const std::vector<std::string> changed = sync_docs(root, &results, &left_as_is);
  if (changed.empty()) std::printf("docs sync: up to date\n");
  for (const std::string& file : changed) std::printf("docs sync: rewrote %s\n", file.c_str());
  for (const std::string& line : left_as_is) std::printf("docs sync: %s\n", line.c_str());
  return left_as_is.empty() ? 0 : 1;
}

}  // namespace

int docs_command(Args& args) {
  const bool no_evidence = args.flag("--no-evidence");
  const std::filesystem::path root = args.option("--root").value_or(".");
  const std::optional<std::string> db = args.option("--db");
  const std::optional<std::string> commit = args.option("--commit");
  const std::vector<std::string> words = args.positionals(kSupported);
  if (words.size() != 1 || (words[0] != "check" && words[0] != "sync")) {
    throw UsageError("expected one subcommand, `check` or `sync`");
  }
  try {
    if (words[0] == "sync") {
      if (no_evidence) throw UsageError("--no-evidence belongs to docs check");
      return docs_sync(root, db.value_or(conformance::kDefaultDatabase),
                       commit.value_or(build::kCommit));
    }
    return docs_check(root, !no_evidence, db.value_or(conformance::kDefaultDatabase),
                      commit.value_or(build::kCommit));
  } catch (const DocsError& e) {
    std::fprintf(stderr, "volta-audit docs %s: %s\n", words[0].c_str(), e.what());
    return 1;
  }
}

}  // namespace volta::audit
