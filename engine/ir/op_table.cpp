// The op table: the schemas of every family file (op_table_<family>.cpp, declared in
// op_table_builders.h) put in OpKind order, each op described exactly once.

#include <iterator>
#include <stdexcept>
#include <string>

#include "op_table_builders.h"

namespace volta::op_table {
namespace {

// Each family file describes the ops of its family and no other.
struct FamilyFile {
  OpFamily family;
  void (*add)(std::vector<OpSchema>& t);
};
constexpr FamilyFile kFamilyFiles[] = {
    {OpFamily::Elementwise, add_elementwise_schemas},
    {OpFamily::Activation, add_activation_schemas},
    {OpFamily::Logical, add_logical_schemas},
    {OpFamily::Linalg, add_linalg_schemas},
    {OpFamily::Normalization, add_normalization_schemas},
    {OpFamily::Reduction, add_reduction_schemas},
    {OpFamily::Movement, add_movement_schemas},
    {OpFamily::Convolution, add_convolution_schemas},
    {OpFamily::Pooling, add_pooling_schemas},
    {OpFamily::Indexing, add_indexing_schemas},
    {OpFamily::Loss, add_loss_schemas},
    {OpFamily::Resampling, add_resampling_schemas},
};
static_assert(std::size(kFamilyFiles) == kOpFamilyCount, "one op table file per family");

std::vector<OpSchema> build_table() {
  std::vector<OpSchema> parts;
  for (const FamilyFile& file : kFamilyFiles) {
    const size_t first = parts.size();
    file.add(parts);
    for (size_t i = first; i < parts.size(); ++i) {
      if (parts[i].family != file.family) {
        throw std::logic_error("op table: " + std::string(parts[i].name) + " (family " +
                               std::string(op_family_name(parts[i].family)) +
                               ") is described in op_table_" +
                               std::string(op_family_name(file.family)) + ".cpp");
      }
    }
  }
  // Put the schemas in OpKind order: tables indexed by op rely on it. An op no family
  // file describes keeps a bare entry (no shape function), which the verifier rejects and the
  // op-table tests report.
  std::vector<OpSchema> t(static_cast<size_t>(kOpCount));
  std::vector<bool> described(static_cast<size_t>(kOpCount), false);
  for (int i = 0; i < kOpCount; ++i) {
    t[static_cast<size_t>(i)].kind = static_cast<OpKind>(i);
    t[static_cast<size_t>(i)].name = op_name(static_cast<OpKind>(i));
  }
  for (OpSchema& s : parts) {
    const auto i = static_cast<size_t>(op_index(s.kind));
    if (described[i] || s.name != op_name(s.kind)) {
      throw std::logic_error("op table: " + std::string(op_name(s.kind)) +
                             " is described twice or under another name");
    }
    described[i] = true;
    t[i] = std::move(s);
  }
  return t;
}

const std::vector<OpSchema>& table() {
  static const std::vector<OpSchema> kTable = build_table();
  return kTable;
}

}  // namespace
}  // namespace volta::op_table

namespace volta {

const OpSchema& op_schema(OpKind op) {
  return op_table::table()[static_cast<size_t>(op_index(op))];
}
std::span<const OpSchema> all_op_schemas() { return op_table::table(); }

}  // namespace volta
