#define BOOST_TEST_MODULE docs_test
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "docs_contract.h"
#include "volta/conformance/store.h"
#include "volta/ir/op_kind.h"
#include "volta/runtime/registry.h"

namespace fs = std::filesystem;
using volta::audit::DocFinding;
using volta::audit::DocsError;
using volta::audit::EvidenceFn;
using volta::audit::GateStatus;

namespace {

constexpr const char* kMatrixFile = "governance/op-support.md";
constexpr const char* kBegin =
    "<!-- BEGIN GENERATED: op-backend-matrix (volta-audit docs sync; do not edit) -->";
constexpr const char* kEnd = "<!-- END GENERATED: op-backend-matrix -->";

// A scratch docs tree, removed on exit.
class TempTree {
 public:
  TempTree() {
    static int counter = 0;
    root_ = fs::temp_directory_path() /
            ("volta-docs-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(root_);
  }
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const fs::path& root() const { return root_; }

  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel, std::ios::binary) << text;
  }
  std::string read(const std::string& rel) const {
    std::ifstream in(root_ / rel, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  void make_executable(const std::string& rel) const {
    fs::permissions(root_ / rel, fs::perms::owner_exec, fs::perm_options::add);
  }

 private:
  fs::path root_;
};

// A README and governance/op-support.md whose matrix section is empty until synced.
void write_docs(const TempTree& tree, const std::string& readme_extra = "") {
  tree.write("README.md", "# Project\n\nProse.\n" + readme_extra);
  tree.write(kMatrixFile, std::string("# Op support\n\n") + kBegin + "\n" + kEnd + "\n\nAfter.\n");
}

// By value: callers often search the temporary that check_docs returns.
DocFinding find(const std::vector<DocFinding>& findings, const std::string& claim) {
  const auto it = std::ranges::find(findings, claim, &DocFinding::claim);
  BOOST_REQUIRE_MESSAGE(it != findings.end(), "no finding for " << claim);
  return *it;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);) parts.push_back(part);
  return parts;
}

// The trimmed cells of a Markdown table row.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  for (const std::string& part : split(row, '|')) {
    const size_t first = part.find_first_not_of(' ');
    if (first != std::string::npos)
      out.push_back(part.substr(first, part.find_last_not_of(' ') - first + 1));
  }
  return out;
}

std::string status_name(GateStatus status) {
  return std::string(volta::audit::gate_status_name(status));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(op_backend_matrix)

BOOST_AUTO_TEST_CASE(one_row_per_op_in_op_table_order) {
  const std::vector<std::string> lines = split(volta::audit::render_op_backend_matrix(), '\n');
  BOOST_REQUIRE_EQUAL(lines.size(), static_cast<size_t>(volta::kOpCount) + 2);
  BOOST_TEST(cells(lines[0]) == (std::vector<std::string>{"op", "family", "dtypes", "NaN policy",
                                                          "cpu", "cuda", "reference"}),
             boost::test_tools::per_element());
  BOOST_TEST(lines[1].find_first_not_of("|-") == std::string::npos);
  for (int i = 0; i < volta::kOpCount; ++i) {
    const std::vector<std::string> row = cells(lines[static_cast<size_t>(i) + 2]);
    BOOST_REQUIRE_EQUAL(row.size(), 7u);
    BOOST_TEST(row[0] == volta::op_name(static_cast<volta::OpKind>(i)));
  }
}

BOOST_AUTO_TEST_CASE(rows_come_from_op_table_capabilities_and_reference) {
  const std::vector<std::string> lines = split(volta::audit::render_op_backend_matrix(), '\n');
  auto row_of = [&](volta::OpKind op) { return cells(lines[volta::op_index(op) + 2]); };
  const auto without_cuda = [](std::vector<std::string> row) {
    row.erase(row.begin() + 5);
    return row;
  };
  BOOST_TEST(
      without_cuda(row_of(volta::OpKind::Add)) ==
          (std::vector<std::string>{
              "Add", "elementwise", "f32, f64, i64, i32, f16, bf16, i8, u8, i16, u16, u32, u64",
              "propagate", "f32, f64, i64, i32, f16, bf16, i8, u8, i16, u16, u32, u64 (bit-exact)",
              "yes"}),
      boost::test_tools::per_element());
  BOOST_TEST(
      without_cuda(row_of(volta::OpKind::ArgMax)) ==
          (std::vector<std::string>{"ArgMax", "reduction", "T: f32, f64, i64, i32; I: i64",
                                    "first-nan-wins", "f32, f64, i64, i32 (bit-exact)", "yes"}),
      boost::test_tools::per_element());
  // The cuda column: the backend's dtypes and its claim against the CPU, or why there is none.
  if (!volta::has_backend("cuda")) {
    BOOST_TEST(row_of(volta::OpKind::Add)[5] == "not built");
    return;
  }
  const volta::Capabilities cuda = volta::make_backend("cuda")->capabilities();
  for (int i = 0; i < volta::kOpCount; ++i) {
    const volta::OpCapability& c = cuda[static_cast<size_t>(i)];
    const std::string cell = row_of(static_cast<volta::OpKind>(i))[5];
    const std::string claimed =
        c.cpu_exactness == volta::CrossBackendExactness::Bitwise ? "(= cpu bitwise"
        : c.cpu_exactness == volta::CrossBackendExactness::BitwiseExceptNanPayload
            ? "(= cpu bitwise but NaN payload"
            : "(tolerance";
    // A claim that leaves dtypes out (only f64, where the CPU calls libm) names them.
    const bool leaves_out = c.cpu_exactness != volta::CrossBackendExactness::NotClaimed &&
                            !c.cpu_tolerance_dtypes.empty();
    if (leaves_out) BOOST_TEST(c.cpu_tolerance_dtypes.str() == "{f64}", cell);
    const std::string claim = claimed + (leaves_out ? "; f64: tolerance)" : ")");
    BOOST_TEST((c.supported ? cell.ends_with(claim) : cell == "—"), cell);
  }
  BOOST_TEST(row_of(volta::OpKind::Add)[5].starts_with("f32"));
  BOOST_TEST(row_of(volta::OpKind::Gather)[2] ==
             "T: f32, f64, i64, i32, bool, f16, bf16, i8, u8, i16, u16, u32, u64; I: i64, i32");
  BOOST_TEST(row_of(volta::OpKind::Gather)[3] == "pass-through");
  // Reshape declares the movement family's index parameter but binds nothing to it.
  BOOST_TEST(row_of(volta::OpKind::Reshape)[2] ==
             "f32, f64, i64, i32, bool, f16, bf16, i8, u8, i16, u16, u32, u64");
}

BOOST_AUTO_TEST_CASE(is_machine_independent) {
  const std::string matrix = volta::audit::render_op_backend_matrix();
  for (const char* isa : {"sse", "avx", "fma", "neon", "scalar", "libm"}) {
    BOOST_TEST(matrix.find(isa) == std::string::npos, "the matrix names kernel variant " << isa);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(generated_sections)

BOOST_AUTO_TEST_CASE(a_synced_tree_passes) {
  TempTree tree;
  write_docs(tree);
  BOOST_TEST(volta::audit::sync_docs(tree.root()) == std::vector<std::string>{kMatrixFile},
             boost::test_tools::per_element());
  BOOST_TEST(volta::audit::sync_docs(tree.root()).empty());

  const std::vector<DocFinding> findings = volta::audit::check_docs(tree.root(), nullptr);
  BOOST_REQUIRE_EQUAL(findings.size(), 1u);
  const DocFinding& section = findings[0];
  BOOST_TEST(section.claim == "section:op-backend-matrix");
  BOOST_TEST(section.file == kMatrixFile);
  BOOST_TEST(section.line == 3);
  BOOST_TEST(section.evidence == "docs sync");
  BOOST_TEST(status_name(section.status) == "PASS");
  BOOST_TEST(section.detail == "matches `volta-audit docs sync` output");
  BOOST_TEST(volta::audit::docs_ok(findings, true));

  const std::string text = tree.read(kMatrixFile);
  BOOST_TEST(text.starts_with(std::string("# Op support\n\n") + kBegin + "\n| op "));
  BOOST_TEST(text.ends_with(std::string(kEnd) + "\n\nAfter.\n"));
}

BOOST_AUTO_TEST_CASE(planted_drift_fails_with_the_first_difference_and_sync_repairs_it) {
  TempTree tree;
  write_docs(tree);
  volta::audit::sync_docs(tree.root());
  const std::string synced = tree.read(kMatrixFile);

  // Line 6 of the file is the second op's row (3: BEGIN, 4: header, 5: rule, 6: Add, 7: Sub).
  std::vector<std::string> lines = split(synced, '\n');
  const std::string original = lines[6];
  lines[6].replace(lines[6].rfind("yes"), 3, "no ");
  std::string drifted;
  for (const std::string& line : lines) drifted += line + "\n";
  tree.write(kMatrixFile, drifted);

  const std::vector<DocFinding> findings = volta::audit::check_docs(tree.root(), nullptr);
  const DocFinding& section = find(findings, "section:op-backend-matrix");
  BOOST_TEST(status_name(section.status) == "FAIL");
  BOOST_TEST(
      section.detail ==
      "differs from `volta-audit docs sync` output: first difference at line 7: expected \"" +
          original + "\", found \"" + lines[6] + "\"");
  BOOST_TEST(!volta::audit::docs_ok(findings, false));

  BOOST_TEST(volta::audit::sync_docs(tree.root()) == std::vector<std::string>{kMatrixFile},
             boost::test_tools::per_element());
  BOOST_TEST(tree.read(kMatrixFile) == synced);
  BOOST_TEST(volta::audit::docs_ok(volta::audit::check_docs(tree.root(), nullptr), true));
}

BOOST_AUTO_TEST_CASE(a_missing_or_extra_line_is_reported_against_the_end_marker) {
  TempTree tree;
  write_docs(tree);
  volta::audit::sync_docs(tree.root());
  const std::string synced = tree.read(kMatrixFile);
  const std::vector<std::string> lines = split(synced, '\n');
  const size_t end_line = static_cast<size_t>(volta::kOpCount) + 5;  // index of the END marker
  BOOST_REQUIRE_EQUAL(lines[end_line], kEnd);

  std::string shorter;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i + 1 != end_line) shorter += lines[i] + "\n";
  }
  tree.write(kMatrixFile, shorter);
  BOOST_TEST(
      find(volta::audit::check_docs(tree.root(), nullptr), "section:op-backend-matrix").detail ==
      "differs from `volta-audit docs sync` output: first difference at line " +
          std::to_string(end_line) + ": expected \"" + lines[end_line - 1] +
          "\", found the END marker");

  std::string longer;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == end_line) longer += "| Extra | row |\n";
    longer += lines[i] + "\n";
  }
  tree.write(kMatrixFile, longer);
  BOOST_TEST(
      find(volta::audit::check_docs(tree.root(), nullptr), "section:op-backend-matrix").detail ==
      "differs from `volta-audit docs sync` output: first difference at line " +
          std::to_string(end_line + 1) + ": expected the END marker, found \"| Extra | row |\"");
}

BOOST_AUTO_TEST_CASE(an_unterminated_section_fails_and_sync_writes_nothing) {
  TempTree tree;
  write_docs(tree);
  const std::string broken = std::string("# Op support\n\n") + kBegin + "\n| stale |\n";
  tree.write(kMatrixFile, broken);

  const DocFinding& f =
      find(volta::audit::check_docs(tree.root(), nullptr), "section:op-backend-matrix");
  BOOST_TEST(status_name(f.status) == "FAIL");
  BOOST_TEST(f.line == 3);
  BOOST_TEST(f.detail ==
             "unterminated: no `<!-- END GENERATED: op-backend-matrix -->` after line 3");

  BOOST_CHECK_EXCEPTION(volta::audit::sync_docs(tree.root()), DocsError, [](const DocsError& e) {
    return std::string(e.what()) ==
           "nothing written; fix these markers first:\n  governance/op-support.md:3: "
           "unterminated: no `<!-- END GENERATED: op-backend-matrix -->` after line 3";
  });
  BOOST_TEST(tree.read(kMatrixFile) == broken);
}

BOOST_AUTO_TEST_CASE(an_unknown_section_fails_and_sync_writes_nothing) {
  TempTree tree;
  write_docs(tree);
  tree.write("governance/coverage.md",
             "<!-- BEGIN GENERATED: coverage (volta-audit docs sync; do not edit) -->\n"
             "<!-- END GENERATED: coverage -->\n");
  const std::vector<DocFinding> findings = volta::audit::check_docs(tree.root(), nullptr);
  const DocFinding& f = find(findings, "section:coverage");
  BOOST_TEST(status_name(f.status) == "FAIL");
  BOOST_TEST(f.file == "governance/coverage.md");
  BOOST_TEST(f.detail ==
             "unknown generated section `coverage` (known: gates, op-backend-matrix, "
             "onnx-coverage, onnx-totals, onnx-current-coverage, onnx-current-totals, "
             "numerics-matrix, tolerances, determinism-evidence)");

  const std::string before = tree.read(kMatrixFile);
  BOOST_CHECK_THROW(volta::audit::sync_docs(tree.root()), DocsError);
  BOOST_TEST(tree.read(kMatrixFile) == before, "a bad file elsewhere must stop every write");
}

BOOST_AUTO_TEST_CASE(broken_markers_name_the_problem) {
  struct Case {
    std::string text;
    std::string claim;
    int line;
    std::string detail;
  };
  const Case cases[] = {
      {std::string(kBegin) + "\n" + kBegin + "\n" + kEnd + "\n" + kEnd + "\n",
       "section:op-backend-matrix", 2,
       "BEGIN GENERATED: op-backend-matrix inside section op-backend-matrix (opened at line 1): "
       "generated sections do not nest"},
      {"text\n" + std::string(kEnd) + "\n", "section:op-backend-matrix", 2,
       "END GENERATED: op-backend-matrix without a matching BEGIN"},
      {std::string(kBegin) + "\n<!-- END GENERATED: other -->\n", "section:other", 2,
       "END GENERATED: other closes section op-backend-matrix (opened at line 1)"},
      {"<!-- BEGIN GENERATED: op-backend-matrix -->\n" + std::string(kEnd) + "\n", "section:?", 1,
       "malformed marker: expected `<!-- BEGIN GENERATED: NAME (volta-audit docs sync; do not "
       "edit) -->`"},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.detail) {
      TempTree tree;
      tree.write("README.md", c.text);
      const DocFinding& f = find(volta::audit::check_docs(tree.root(), nullptr), c.claim);
      BOOST_TEST(status_name(f.status) == "FAIL");
      BOOST_TEST(f.line == c.line);
      BOOST_TEST(f.detail == c.detail);
      BOOST_CHECK_THROW(volta::audit::sync_docs(tree.root()), DocsError);
    }
  }
}

BOOST_AUTO_TEST_CASE(markers_inside_code_are_text) {
  TempTree tree;
  tree.write("README.md",
             "Sections look like `<!-- claim: ID gate=GATE -->` in prose.\n"
             "```markdown\n" +
                 std::string(kBegin) +
                 "\n<!-- claim: example gate=no-such-gate -->\n"
                 "```\n");
  BOOST_TEST(volta::audit::check_docs(tree.root(), nullptr).empty());
  BOOST_TEST(volta::audit::sync_docs(tree.root()).empty());
}

BOOST_AUTO_TEST_CASE(a_root_without_docs_is_an_error) {
  TempTree tree;
  BOOST_CHECK_EXCEPTION(
      volta::audit::check_docs(tree.root(), nullptr), DocsError, [&](const DocsError& e) {
        return std::string(e.what()) == "no README.md or governance/*.md under " +
                                            tree.root().string() +
                                            ": run from the repository root or pass --root DIR";
      });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(claims)

// Claims on lines 4 to 10 of README.md.
const char* const kClaims =
    "Parity holds. <!-- claim: parity gate=parity-cpu-reference -->\n"
    "Threads do not matter. <!-- claim: threads gate=thread-invariance -->\n"
    "Every op has a kernel. <!-- claim: kernels query=unsupported-ops -->\n"
    "Unknown. <!-- claim: bogus gate=no-such-gate -->\n"
    "Again. <!-- claim: parity gate=parity-cpu-reference -->\n"
    "Broken <!-- claim: missing-evidence -->\n"
    "Circular. <!-- claim: self gate=docs-contract -->\n";

struct FakeEvidence {
  std::vector<std::string> asked;
  EvidenceFn fn = [this](std::string_view kind, std::string_view name) {
    asked.push_back(std::string(kind) + "=" + std::string(name));
    if (name == "parity-cpu-reference") return std::pair{GateStatus::Pass, std::string("57 ok")};
    if (name == "thread-invariance") return std::pair{GateStatus::Fail, std::string("2 diverge")};
    return std::pair{GateStatus::NotVerified, std::string("no rows yet")};
  };
};

BOOST_AUTO_TEST_CASE(claims_take_the_status_of_their_evidence) {
  TempTree tree;
  write_docs(tree, kClaims);
  volta::audit::sync_docs(tree.root());
  FakeEvidence evidence;
  const std::vector<DocFinding> findings = volta::audit::check_docs(tree.root(), &evidence.fn);

  BOOST_TEST(evidence.asked ==
                 (std::vector<std::string>{"gate=parity-cpu-reference", "gate=thread-invariance",
                                           "query=unsupported-ops"}),
             boost::test_tools::per_element());
  const DocFinding& parity = find(findings, "parity");
  BOOST_TEST(parity.file == "README.md");
  BOOST_TEST(parity.line == 4);
  BOOST_TEST(parity.evidence == "gate=parity-cpu-reference");
  BOOST_TEST(status_name(parity.status) == "PASS");
  BOOST_TEST(parity.detail == "57 ok");
  BOOST_TEST(status_name(find(findings, "threads").status) == "FAIL");
  BOOST_TEST(find(findings, "threads").detail == "2 diverge");
  BOOST_TEST(status_name(find(findings, "kernels").status) == "NOT VERIFIED");
  BOOST_TEST(find(findings, "kernels").evidence == "query=unsupported-ops");
}

BOOST_AUTO_TEST_CASE(bad_claims_fail_without_asking_for_evidence) {
  TempTree tree;
  write_docs(tree, kClaims);
  volta::audit::sync_docs(tree.root());
  FakeEvidence evidence;
  const std::vector<DocFinding> findings = volta::audit::check_docs(tree.root(), &evidence.fn);

  const DocFinding& bogus = find(findings, "bogus");
  BOOST_TEST(status_name(bogus.status) == "FAIL");
  BOOST_TEST(bogus.detail.starts_with("unknown gate `no-such-gate` (gates: onnx-conformance, "));
  BOOST_TEST(bogus.detail.find("parity-cpu-reference") != std::string::npos);

  std::vector<const DocFinding*> parity;
  for (const DocFinding& f : findings) {
    if (f.claim == "parity") parity.push_back(&f);
  }
  BOOST_REQUIRE_EQUAL(parity.size(), 2u);
  BOOST_TEST(status_name(parity[1]->status) == "FAIL");
  BOOST_TEST(parity[1]->line == 8);
  BOOST_TEST(parity[1]->detail == "duplicate claim id `parity` (first at README.md:4)");

  const DocFinding& malformed = find(findings, "claim");
  BOOST_TEST(malformed.line == 9);
  BOOST_TEST(malformed.detail ==
             "malformed claim marker `<!-- claim: missing-evidence -->`: expected `<!-- claim: ID "
             "gate=GATE -->` or `<!-- claim: ID query=QUERY -->`");

  BOOST_TEST(find(findings, "self").detail ==
             "gate docs-contract cannot prove a claim: it is the verdict of docs check itself");
}

BOOST_AUTO_TEST_CASE(an_unknown_query_lists_the_known_ones) {
  TempTree tree;
  tree.write("README.md", "Claim <!-- claim: q query=no-such-query -->\n");
  const DocFinding& f = find(volta::audit::check_docs(tree.root(), nullptr), "q");
  BOOST_TEST(status_name(f.status) == "FAIL");
  BOOST_TEST(f.detail.starts_with("unknown query `no-such-query` (queries: "));
  BOOST_TEST(f.detail.find("unsupported-ops") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_unclosed_claim_marker_fails) {
  TempTree tree;
  tree.write("README.md", "Claim <!-- claim: q gate=parity-cpu-reference\n");
  const DocFinding& f = find(volta::audit::check_docs(tree.root(), nullptr), "claim");
  BOOST_TEST(status_name(f.status) == "FAIL");
  BOOST_TEST(f.detail == "claim marker not closed with `-->` on its line");
}

BOOST_AUTO_TEST_CASE(without_evidence_claims_are_not_verified) {
  TempTree tree;
  write_docs(tree, "Parity holds. <!-- claim: parity gate=parity-cpu-reference -->\n");
  volta::audit::sync_docs(tree.root());
  const std::vector<DocFinding> findings = volta::audit::check_docs(tree.root(), nullptr);
  const DocFinding& parity = find(findings, "parity");
  BOOST_TEST(status_name(parity.status) == "NOT VERIFIED");
  BOOST_TEST(parity.detail == "evidence not evaluated (--no-evidence)");
  BOOST_TEST(volta::audit::docs_ok(findings, /*evidence_required=*/false));
  BOOST_TEST(!volta::audit::docs_ok(findings, /*evidence_required=*/true));
}

BOOST_AUTO_TEST_CASE(passing_evidence_makes_the_docs_ok) {
  TempTree tree;
  write_docs(tree, "Parity holds. <!-- claim: parity gate=parity-cpu-reference -->\n");
  volta::audit::sync_docs(tree.root());
  FakeEvidence evidence;
  BOOST_TEST(volta::audit::docs_ok(volta::audit::check_docs(tree.root(), &evidence.fn), true));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(workflows)

BOOST_AUTO_TEST_CASE(steps_must_call_existing_executable_scripts) {
  TempTree tree;
  write_docs(tree);
  volta::audit::sync_docs(tree.root());
  tree.write("scripts/ci/test.sh", "#!/bin/sh\n");
  tree.make_executable("scripts/ci/test.sh");
  tree.write("scripts/ci/lint.sh", "#!/bin/sh\n");
  tree.write(".github/workflows/ci.yml",
             "# scripts/ci/comment.sh is not a step\n"
             "jobs:\n"
             "  test:\n"
             "    steps:\n"
             "      - uses: actions/checkout@v4\n"
             "      - run: scripts/ci/test.sh relassert\n"
             "      - name: scripts/ci/named.sh\n"
             "        run: ./scripts/ci/gone.sh\n"
             "      - run: |\n"
             "          echo first\n"
             "          scripts/ci/lint.sh\n"
             "      - run: myscripts/ci/test.sh\n");
  const std::vector<DocFinding> findings = volta::audit::check_docs(tree.root(), nullptr);
  BOOST_REQUIRE_EQUAL(findings.size(), 4u);  // the section and three scripts

  const DocFinding& test = find(findings, "workflow:ci.yml:scripts/ci/test.sh");
  BOOST_TEST(test.file == ".github/workflows/ci.yml");
  BOOST_TEST(test.line == 6);
  BOOST_TEST(test.evidence == "file exists");
  BOOST_TEST(status_name(test.status) == "PASS");
  BOOST_TEST(test.detail == "calls scripts/ci/test.sh, which exists and is executable");

  const DocFinding& gone = find(findings, "workflow:ci.yml:scripts/ci/gone.sh");
  BOOST_TEST(gone.line == 8);
  BOOST_TEST(status_name(gone.status) == "FAIL");
  BOOST_TEST(gone.detail == "calls scripts/ci/gone.sh, which does not exist");

  const DocFinding& lint = find(findings, "workflow:ci.yml:scripts/ci/lint.sh");
  BOOST_TEST(lint.line == 11);
  BOOST_TEST(status_name(lint.status) == "FAIL");
  BOOST_TEST(lint.detail ==
             "calls scripts/ci/lint.sh, which is not executable (chmod +x scripts/ci/lint.sh)");
  BOOST_TEST(!volta::audit::docs_ok(findings, false));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(findings_are_recorded_as_one_check) {
  TempTree tree;
  const std::string db_path = (tree.root() / "results.db").string();
  volta::conformance::ResultStore store(db_path);
  const std::vector<DocFinding> findings = {
      {"parity", "README.md", 4, "gate=parity-cpu-reference", GateStatus::Pass, "57 ok"},
      {"section:op-backend-matrix", "governance/op-support.md", 3, "docs sync", GateStatus::Fail,
       "differs"},
  };
  volta::audit::record_doc_findings(store.db(), "abc123", findings, false);

  volta::conformance::Statement rows = store.db().prepare(
      "SELECT commit_sha, claim, file, line, evidence, status, detail, checked_at FROM doc_claim "
      "ORDER BY id");
  std::vector<std::string> checked_at;
  for (const DocFinding& expected : findings) {
    BOOST_REQUIRE(rows.step());
    BOOST_TEST(rows.column_text(0) == "abc123");
    BOOST_TEST(rows.column_text(1) == expected.claim);
    BOOST_TEST(rows.column_text(2) == expected.file);
    BOOST_TEST(rows.column_int(3) == expected.line);
    BOOST_TEST(rows.column_text(4) == expected.evidence);
    BOOST_TEST(rows.column_text(5) == status_name(expected.status));
    BOOST_TEST(rows.column_text(6) == expected.detail);
    checked_at.push_back(rows.column_text(7));
  }
  BOOST_TEST(!rows.step());
  BOOST_TEST(checked_at[0] == checked_at[1], "one check, one time");

  // A check of edited docs is recorded as such: the release gate will not count it.
  volta::audit::record_doc_findings(store.db(), "abc123", findings, true);
  volta::conformance::Statement dirty = store.db().prepare(
      "SELECT group_concat(dirty, ',') FROM (SELECT dirty FROM doc_claim ORDER BY id)");
  BOOST_REQUIRE(dirty.step());
  BOOST_TEST(dirty.column_text(0) == "0,0,1,1");
}

// The README states the op table's size in prose: it must be the table's.
BOOST_AUTO_TEST_CASE(the_readme_counts_the_ops_of_the_op_table) {
  std::ifstream in(std::string(VOLTA_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const std::string said = "table declaring " + std::to_string(volta::kOpCount) + " ops once";
  BOOST_TEST(readme.find(said) != std::string::npos, "README.md does not say '" << said << "'");
}
