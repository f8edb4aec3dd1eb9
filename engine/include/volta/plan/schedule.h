#pragma once

#include <vector>

#include "volta/ir/graph.h"

namespace volta {

// Node indices in execution order: a topological order where ties go to the lower node
// index, so the same graph always gives the same schedule. A node that writes a state's next
// value runs after every other node reading that state.
using Schedule = std::vector<int>;

Schedule schedule_graph(const Graph& graph);

// Every node exactly once, every input defined (graph input, parameter, state, or an earlier
// step) before it is read, every read of a state before the step that overwrites it. Throws
// L-SCHEDULE naming the step, node and value.
void verify_schedule(const Graph& graph, const Schedule& schedule);

}  // namespace volta
