#include "volta/plan/schedule.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "volta/error.h"

namespace volta {
namespace {

// (reader, writer) pairs: `reader` reads a state that node `writer` writes its next value over.
std::vector<std::pair<int, int>> state_read_before_write(const Graph& graph,
                                                         const std::vector<int>& producer) {
  std::vector<std::pair<int, int>> edges;
  for (const StateUpdate& u : graph.state_updates()) {
    if (!graph.has_value(u.value)) continue;
    const int writer = producer[static_cast<size_t>(u.value.index)];
    if (writer < 0) continue;
    for (int i = 0; i < graph.num_nodes(); ++i) {
      const std::vector<ValueId>& in = graph.node(i).inputs;
      if (i != writer && std::find(in.begin(), in.end(), u.state) != in.end()) {
        edges.emplace_back(i, writer);
      }
    }
  }
  return edges;
}

}  // namespace

Schedule schedule_graph(const Graph& graph) {
  const std::vector<int> producer = producers(graph);
  const int n = graph.num_nodes();
  std::vector<int> pending(static_cast<size_t>(n), 0);
  std::vector<std::vector<int>> consumers(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (ValueId v : graph.node(i).inputs) {
      if (!graph.has_value(v)) continue;
      const int p = producer[static_cast<size_t>(v.index)];
      if (p < 0 || p == i) continue;
      ++pending[static_cast<size_t>(i)];
      consumers[static_cast<size_t>(p)].push_back(i);
    }
  }
  // A state's update writes over it: every other node reading the state runs before its writer.
  for (const auto& [reader, writer] : state_read_before_write(graph, producer)) {
    ++pending[static_cast<size_t>(writer)];
    consumers[static_cast<size_t>(reader)].push_back(writer);
  }
  // Kahn's algorithm; ready nodes leave in index order, so ties break the same way always.
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[static_cast<size_t>(i)] == 0) ready.push(i);
  }
  Schedule order;
  order.reserve(static_cast<size_t>(n));
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[static_cast<size_t>(i)]) {
      if (--pending[static_cast<size_t>(c)] == 0) ready.push(c);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    fail(ErrorCode::PlanSchedule, "the graph has a cycle: " + std::to_string(n - order.size()) +
                                      " of " + std::to_string(n) + " nodes cannot be ordered");
  }
  return order;
}

void verify_schedule(const Graph& graph, const Schedule& schedule) {
  const int n = graph.num_nodes();
  if (static_cast<int>(schedule.size()) != n) {
    fail(ErrorCode::PlanSchedule, "schedule has " + std::to_string(schedule.size()) +
                                      " steps for " + std::to_string(n) + " nodes");
  }
  std::vector<char> defined(static_cast<size_t>(graph.num_values()), 0);
  for (ValueId v : graph.inputs()) defined[static_cast<size_t>(v.index)] = 1;
  for (ValueId v : graph.parameters()) defined[static_cast<size_t>(v.index)] = 1;
  for (ValueId v : graph.states()) defined[static_cast<size_t>(v.index)] = 1;
  std::vector<char> scheduled(static_cast<size_t>(n), 0);
  for (size_t step = 0; step < schedule.size(); ++step) {
    const int i = schedule[step];
    if (i < 0 || i >= n) {
      fail(ErrorCode::PlanSchedule, "step " + std::to_string(step) + " names node " +
                                        std::to_string(i) + ", but the graph has " +
                                        std::to_string(n) + " nodes");
    }
    if (scheduled[static_cast<size_t>(i)]++) {
      fail(ErrorCode::PlanSchedule, "step " + std::to_string(step) + " runs node " +
                                        std::to_string(i) + " '" + graph.node(i).name +
                                        "' a second time");
    }
    const Node& node = graph.node(i);
    for (ValueId v : node.inputs) {
      if (v.valid() && !defined[static_cast<size_t>(v.index)]) {
        fail(ErrorCode::PlanSchedule, "step " + std::to_string(step) + " runs node '" + node.name +
                                          "' (" + std::string(op_name(node.op)) +
                                          ") before its input %" + std::to_string(v.index) + " '" +
                                          graph.value(v).name + "' is defined");
      }
    }
    for (ValueId v : node.outputs) defined[static_cast<size_t>(v.index)] = 1;
  }
  std::vector<int> step_of(static_cast<size_t>(n));
  for (size_t step = 0; step < schedule.size(); ++step) {
    step_of[static_cast<size_t>(schedule[step])] = static_cast<int>(step);
  }
  for (const auto& [reader, writer] : state_read_before_write(graph, producers(graph))) {
    if (step_of[static_cast<size_t>(reader)] > step_of[static_cast<size_t>(writer)]) {
      fail(ErrorCode::PlanSchedule,
           "step " + std::to_string(step_of[static_cast<size_t>(reader)]) + " runs node '" +
               graph.node(reader).name + "', which reads a state that step " +
               std::to_string(step_of[static_cast<size_t>(writer)]) + " (node '" +
               graph.node(writer).name + "') has already overwritten with its next value");
    }
  }
}

}  // namespace volta
