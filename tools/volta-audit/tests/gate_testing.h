#pragma once
// Evaluating a gate in the tests: over a hand-built store, for a commit whose expected-case
// lists are taken to be this binary's (the lists_commit check has its own test).

#include <boost/test/unit_test.hpp>
#include <string>
#include <string_view>

#include "gates.h"
#include "store_builder.h"

namespace volta::audit::testing {

inline GateResult evaluate(TempStore& t, std::string_view gate, bool release = false,
                           std::string_view commit = kCommit) {
  const Gate* g = find_gate(gate);
  BOOST_REQUIRE_MESSAGE(g != nullptr, "no gate " << gate);
  return evaluate_gate(t.db(), *g, commit, release, commit);
}

inline void check(const GateResult& r, GateStatus status, std::string_view reason) {
  BOOST_TEST(gate_status_name(r.status) == gate_status_name(status));
  BOOST_TEST(r.reason == reason);
}

}  // namespace volta::audit::testing
