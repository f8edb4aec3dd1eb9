#pragma once
// volta-audit's commands. Each returns the process exit code and throws UsageError for bad
// arguments (main prints it with the usage and exits 2).

#include "cli.h"

namespace volta::audit {

int run_command(Args& args);     // run_command.cpp: run suites, record rows
int gate_command(Args& args);    // gate_command.cpp: evaluate the release gates
int report_command(Args& args);  // report_command.cpp: human report of the latest run
int query_command(Args& args);   // query_command.cpp: canned questions and --sql
int merge_command(Args& args);   // merge_command.cpp: fold shard databases into one
int docs_command(Args& args);    // docs_command.cpp: docs check / docs sync
int diff_command(Args& args);
// diff_command.cpp: first divergence between two runs' traces
int perf_command(Args& args);  // perf_command.cpp: the perf double pass, baseline moves

}  // namespace volta::audit
