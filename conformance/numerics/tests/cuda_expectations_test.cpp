// conformance/expectations/cuda/{parity,numerics}.tsv against the CUDA backend itself. Planning
// needs no device, so this runs everywhere the backend is built: every parity case and every
// NaN/Inf matrix cell is compiled for cuda, and a case the backend refuses (R-MISSING-KERNEL)
// must be expected UNSUPPORTED there, while a case it compiles must be expected nothing. So a
// kernel added without its line removed, or a line that hides a kernel, fails here, with the
// lines the file should hold printed for the fix.
#define BOOST_TEST_MODULE cuda_expectations
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <map>
#include <set>

#include "volta/conformance/expectations.h"
#include "volta/conformance/matrix_suite.h"
#include "volta/conformance/parity_cases.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::conformance {
namespace {

const std::string kExpectations = std::string(VOLTA_SOURCE_DIR) + "/conformance/expectations";

const Backend& cuda() {
  static const std::unique_ptr<Backend> backend = make_backend("cuda");
  return *backend;
}

// Whether the CUDA backend has a kernel for every node of `graph` (what the suites would then
// run on a device). Without the optimizing passes: constant folding would run a kernel, which
// needs a device, and the passes fuse only what the backend runs.
bool compiles_on_cuda(const Graph& graph) {
  try {
    compile(graph, cuda(), DeterminismMode::Strict, {.optimize = false});
    return true;
  } catch (const VoltaError& e) {
    if (e.code() != ErrorCode::MissingKernel) throw;
    return false;
  }
}

// Thrown by the matrix evaluator once a cell's graph compiled: the cell would run.
struct Compiled {};

// case id -> whether cuda compiles it, with the op the case tests (for the suggested lines).
struct Planned {
  std::string op;
  bool compiles;
};

std::map<std::string, Planned> parity_plans() {
  std::map<std::string, Planned> out;
  for (const ParityCase& c : parity_cases()) {
    out[c.id] = {std::string(op_name(c.op)), compiles_on_cuda(c.graph)};
  }
  return out;
}

std::map<std::string, Planned> matrix_plans() {
  const Evaluate compile_only = [](const Graph& graph,
                                   std::span<const Tensor>) -> std::vector<Tensor> {
    if (compiles_on_cuda(graph)) throw Compiled{};
    fail(ErrorCode::MissingKernel, "no kernel");
  };
  std::map<std::string, Planned> out;
  for (const MatrixCell& cell : matrix_cells(load_policy(VOLTA_SOURCE_DIR))) {
    bool compiles = true;
    try {
      compiles = run_matrix_cell(cell, compile_only).outcome != Outcome::Unsupported;
    } catch (const Compiled&) {
      compiles = true;
    }
    out[cell.id] = {std::string(op_name(cell.op.op)), compiles};
  }
  return out;
}

// The file's lines that would express `plans`: the op's patterns ("Op(*", "Op[*": the case id
// forms of the suites) when all its cases are refused, else each refused case id on its own.
std::vector<std::string> suggested_lines(const std::map<std::string, Planned>& plans) {
  std::map<std::string, std::vector<std::pair<std::string, bool>>> by_op;
  for (const auto& [id, p] : plans) by_op[p.op].emplace_back(id, p.compiles);
  std::vector<std::string> patterns;
  for (const auto& [op, cases] : by_op) {
    const bool all_refused = std::ranges::none_of(cases, [](const auto& c) { return c.second; });
    for (const auto& [id, compiles] : cases) {
      if (!all_refused && !compiles) patterns.push_back(id);
    }
    if (!all_refused) continue;
    for (const std::string& pattern : {op + "(*", op + "[*"}) {
      if (std::ranges::any_of(cases, [&](const auto& c) { return glob_match(pattern, c.first); })) {
        patterns.push_back(pattern);
      }
    }
  }
  std::vector<std::string> lines;
  lines.reserve(patterns.size());
  for (const std::string& p : patterns) {
    lines.push_back(p +
                    "\tUNSUPPORTED\tno CUDA kernel for this op (dtype, attributes) yet\t#18\t"
                    "2027-02-28");
  }
  return lines;
}

// Every refused case expected UNSUPPORTED by the backend's file, no compiled case expected
// anything by it; the common file is not consulted (it is the cpu's too).
void check_file(std::string_view suite, const std::map<std::string, Planned>& plans) {
  const std::vector<Expectation> mine = load_expectations(kExpectations + "/cuda", suite);
  std::vector<std::string> wrong;
  std::set<const Expectation*> used;
  for (const auto& [id, p] : plans) {
    const Expectation* e = match_expectation(mine, id);
    if (e != nullptr) used.insert(e);
    if (!p.compiles && (e == nullptr || e->outcome != Outcome::Unsupported)) {
      wrong.push_back(id + ": refused for a missing kernel, not expected UNSUPPORTED");
    }
    if (p.compiles && e != nullptr) {
      wrong.push_back(id + ": cuda compiles it, yet line " + std::to_string(e->line) + " ('" +
                      e->pattern + "') expects " + std::string(outcome_name(e->outcome)));
    }
  }
  for (const Expectation& e : mine) {
    if (!used.contains(&e)) {
      wrong.push_back("line " + std::to_string(e.line) + " ('" + e.pattern + "') matches no case");
    }
  }
  if (!wrong.empty()) {
    std::string lines;
    for (const std::string& line : suggested_lines(plans)) lines += line + "\n";
    BOOST_ERROR(wrong.size() << " problem(s) in cuda/" << suite << ".tsv; first: " << wrong[0]
                             << "\nits patterns should be:\n"
                             << lines);
  }
}

BOOST_AUTO_TEST_CASE(cuda_parity_expectations_are_the_cases_without_a_kernel) {
  check_file("parity", parity_plans());
}

BOOST_AUTO_TEST_CASE(cuda_numerics_expectations_are_the_cells_without_a_kernel) {
  check_file("numerics", matrix_plans());
}

}  // namespace
}  // namespace volta::conformance
