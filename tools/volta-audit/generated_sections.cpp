// The generated doc sections: each renders Markdown from the op table and the backends,
// never from anything machine-specific, so every machine regenerates the same text.

#include <algorithm>

#include "docs_contract.h"
#include "volta/backends/cpu.h"
#include "volta/ir/op_schema.h"
#include "volta/reference/reference.h"

namespace volta::audit {
namespace {

// Display width: UTF-8 continuation bytes take no column ("—" is one column, three bytes).
size_t display_width(std::string_view s) {
  return static_cast<size_t>(std::ranges::count_if(
      s, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// A Markdown table padded so its source reads as a table too.
std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 3);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
  };
  widen(header);
  std::ranges::for_each(rows, widen);
  auto format_row = [&](const std::vector<std::string>& row) {
    std::string line = "|";
    for (size_t c = 0; c < row.size(); ++c) {
      line += " " + row[c] + std::string(width[c] - display_width(row[c]), ' ') + " |";
    }
    return line + "\n";
  };
  std::string table = format_row(header) + "|";
  for (size_t w : width) table += std::string(w + 2, '-') + "|";
  table += "\n";
  for (const std::vector<std::string>& row : rows) table += format_row(row);
  return table;
}

std::string dtype_list(DTypeSet set) {
  std::string out;
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto dtype = static_cast<DType>(i);
    if (set.contains(dtype)) out += (out.empty() ? "" : ", ") + std::string(dtype_name(dtype));
  }
  return out;
}

// The type parameters some input or output is bound to (the movement family declares an
// index parameter that only Gather's indices use).
std::vector<const TypeParam*> used_type_params(const OpSchema& schema) {
  std::vector<const TypeParam*> used;
  for (const TypeParam& param : schema.type_params) {
    const bool bound =
        std::ranges::any_of(schema.inputs,
                            [&](const InputSpec& in) { return in.type_param == param.name; }) ||
        std::ranges::any_of(schema.outputs,
                            [&](const OutputSpec& out) { return out.type_param == param.name; });
    if (bound) used.push_back(&param);
  }
  return used;
}

// One type parameter: its dtypes. Several (ArgMax's output, Gather's indices): each named.
std::string type_params_cell(const OpSchema& schema) {
  const std::vector<const TypeParam*> params = used_type_params(schema);
  if (params.size() == 1) return dtype_list(params[0]->allowed);
  std::string out;
  for (const TypeParam* param : params) {
    out +=
        (out.empty() ? "" : "; ") + std::string(1, param->name) + ": " + dtype_list(param->allowed);
  }
  return out;
}

std::string capability_cell(const OpCapability& capability) {
  if (!capability.supported) return "—";
  return dtype_list(capability.dtypes) + " (" +
         std::string(kernel_determinism_name(capability.determinism)) + ")";
}

constexpr GeneratedSection kGeneratedSections[] = {
    {"op-backend-matrix", render_op_backend_matrix},
};

}  // namespace

std::span<const GeneratedSection> generated_sections() { return kGeneratedSections; }

std::string render_op_backend_matrix() {
  const Capabilities cpu = make_cpu_backend()->capabilities();
  std::vector<std::vector<std::string>> rows;
  for (const OpSchema& schema : all_op_schemas()) {
    rows.push_back({std::string(schema.name), std::string(op_family_name(schema.family)),
                    type_params_cell(schema), std::string(nan_mode_name(schema.nan_mode)),
                    capability_cell(cpu[static_cast<size_t>(op_index(schema.kind))]),
                    reference::reference_kernel(schema.kind) != nullptr ? "yes" : "no"});
  }
  return markdown_table({"op", "family", "dtypes", "NaN policy", "cpu", "reference"}, rows);
}

}  // namespace volta::audit
