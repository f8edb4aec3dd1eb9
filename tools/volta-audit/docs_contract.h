#pragma once
// The docs contract. Generated sections of README.md and governance/*.md sit between
//   <!-- BEGIN GENERATED: NAME (volta-audit docs sync; do not edit) -->
//   <!-- END GENERATED: NAME -->
// (each marker alone on its line) and `sync` rewrites them; `check` fails on any difference.
// Prose claims carry a marker
//   <!-- claim: ID gate=GATE-NAME -->   or   <!-- claim: ID query=QUERY-NAME -->
// naming the evidence: a gate that must PASS, or a canned query that must return no rows.
// `check` also fails when a step under .github/workflows/ calls a scripts/ci script that
// does not exist. Markers inside code (fenced blocks, `inline spans`) are text, so docs can
// show the syntax without being parsed as markers.

#include <filesystem>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gates.h"
#include "volta/conformance/sqlite.h"

namespace volta::audit {

// A docs tree that cannot be read or synced: unreadable files, broken markers.
class DocsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DocFinding {
  std::string claim;  // claim id, "section:NAME" or "workflow:FILE:SCRIPT"
  std::string file;   // relative to the root
  int line = 0;
  std::string evidence;  // "gate=...", "query=...", "docs sync", "file exists"
  GateStatus status = GateStatus::NotVerified;
  std::string detail;  // why, in one line
};

// Resolves a claim's evidence: kind is "gate" or "query", name a gate or canned query that
// exists (check_docs rejects unknown names before asking).
using EvidenceFn =
    std::function<std::pair<GateStatus, std::string>(std::string_view kind, std::string_view name)>;

// What sections generated from recorded results read: a results database and the commit
// whose results they show (the evidence the gates judge for that commit).
struct ResultsSource {
  const conformance::Database* db = nullptr;
  std::string commit;
};

// A section generated from results that cannot be rendered: the commit has none yet.
class SectionUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every finding under `root`, file by file (README.md, then governance/*.md by name), then the
// workflows. With no evidence function, claims are checked for form only (a known gate or
// query, a well-formed marker, a unique id) and reported NOT VERIFIED. Sections generated from
// results are compared with what `results` renders; without results, or when the commit has
// none, they are NOT VERIFIED. Throws DocsError when the root holds neither README.md nor
// governance/*.md, or a file cannot be read.
std::vector<DocFinding> check_docs(const std::filesystem::path& root, const EvidenceFn* evidence,
                                   const ResultsSource* results = nullptr);
// FAIL findings always fail; NOT VERIFIED ones fail only when evidence is required.
bool docs_ok(const std::vector<DocFinding>& findings, bool evidence_required);

// Appends the findings to doc_claim for `commit` in one transaction, all with one check time,
// so the docs-contract gate reads them as one check. `dirty`: the docs checked were not the
// committed ones (or the checking binary was built from a dirty tree): not release evidence.
void record_doc_findings(conformance::Database& db, std::string_view commit,
                         std::span<const DocFinding> findings, bool dirty);

// Rewrites every generated section under `root`; returns the files it changed, relative to
// the root. A section generated from results is left as it is when `results` is null or the
// commit has no results; each such section adds a line to `left_as_is` (printed to stderr when
// null). Throws DocsError, writing nothing, when any file has a broken or unknown marker.
std::vector<std::string> sync_docs(const std::filesystem::path& root,
                                   const ResultsSource* results = nullptr,
                                   std::vector<std::string>* left_as_is = nullptr);

// The generators, by section name.
struct GeneratedSection {
  std::string_view name;  // "op-backend-matrix"
  bool from_results;      // rendered from a ResultsSource, not from the code alone
  // Throws SectionUnavailable when a section from results has nothing to show.
  std::string (*render)(const ResultsSource& results);
};
std::span<const GeneratedSection> generated_sections();

// The op x backend support matrix, from the op table, the CPU backend's capabilities() and the
// reference kernel table. Machine-independent: capabilities name dtypes and determinism
// classes, never the ISA-specific kernel variant a machine would pick.
std::string render_op_backend_matrix();

// An ONNX corpus suite's coverage for the commit (governance/onnx-coverage.md): per family,
// per default-domain opset of the tests' models, per type of their first input, then per
// principal op, the tests and how they
// ended on each backend. Throws SectionUnavailable when the commit has no results of `suite`.
std::string render_onnx_coverage(const conformance::Database& db, std::string_view commit,
                                 std::string_view suite = "onnx");
// Its totals per backend (README.md).
std::string render_onnx_totals(const conformance::Database& db, std::string_view commit,
                               std::string_view suite = "onnx");

}  // namespace volta::audit
