// Reference data movement. Elements are copied as raw bytes (NaN payloads pass unchanged),
// each output element found from its multi-index by the op's index map.

#include "ref_util.h"
#include "volta/ir/op_helpers.h"

namespace volta::reference {
namespace {

int attr_axis(const Node& node, int rank) {
  return *normalize_axis(AttrReader(node).get_int("axis"), rank);
}

// Reshape, Squeeze, Unsqueeze, Flatten and Identity keep the row-major element order; only
// the shape, which the verifier has already inferred, changes.
std::vector<Tensor> reshape_like(const Node&, RefInputs in, RefOutputTypes out) {
  return {with_shape(*in[0], out[0].shape)};
}

// Output axis i is input axis perm[i].
std::vector<Tensor> transpose(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const std::vector<int> perm = resolve_perm(AttrReader(node), x.shape().rank());
  Tensor y(out[0].dtype, out[0].shape);
  std::vector<int64_t> source(perm.size());
  for_each_index(y.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    for (size_t i = 0; i < perm.size(); ++i) source[static_cast<size_t>(perm[i])] = index[i];
    copy_element(x, flat_offset(source, x.shape()), y, flat);
  });
  return {y};
}

std::vector<Tensor> concat(const Node& node, RefInputs in, RefOutputTypes out) {
  const int axis = attr_axis(node, out[0].shape.rank());
  Tensor y(out[0].dtype, out[0].shape);
  int64_t axis_offset = 0;
  for (const Tensor* part : in) {
    for_each_index(part->shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
      std::vector<int64_t> target = index;
      target[static_cast<size_t>(axis)] += axis_offset;
      copy_element(*part, flat, y, flat_offset(target, y.shape()));
    });
    axis_offset += part->shape()[axis];
  }
  return {y};
}

std::vector<Tensor> split(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const int axis = attr_axis(node, x.shape().rank());
  const std::vector<int64_t> sizes =
      resolve_split(AttrReader(node), x.shape()[axis], static_cast<int>(out.size()));
  std::vector<Tensor> parts;
  int64_t axis_offset = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    Tensor part(out[k].dtype, out[k].shape);
    for_each_index(part.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
      std::vector<int64_t> source = index;
      source[static_cast<size_t>(axis)] += axis_offset;
      copy_element(x, flat_offset(source, x.shape()), part, flat);
    });
    axis_offset += sizes[k];
    parts.push_back(std::move(part));
  }
  return parts;
}

// Output index i along an axis reads input index start + i * step (ONNX clamping is done
// by resolve_slice).
std::vector<Tensor> slice(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const std::vector<SliceRange> ranges = resolve_slice(AttrReader(node), x.shape());
  Tensor y(out[0].dtype, out[0].shape);
  std::vector<int64_t> source(ranges.size());
  for_each_index(y.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    for (size_t d = 0; d < ranges.size(); ++d) {
      source[d] = ranges[d].start + index[d] * ranges[d].step;
    }
    copy_element(x, flat_offset(source, x.shape()), y, flat);
  });
  return {y};
}

// Every index is checked before anything is copied, so a bad index fails even when the
// output is empty. A negative index counts from the end, once.
std::vector<int64_t> resolved_gather_indices(const Tensor& indices, int64_t extent, int axis) {
  std::vector<int64_t> resolved;
  for (int64_t p = 0; p < indices.numel(); ++p) {
    const int64_t given = indices.get_int(p);
    const int64_t index = given < 0 ? given + extent : given;
    if (index < 0 || index >= extent) {
      kernel_fail("Gather index " + std::to_string(given) + " (element " + std::to_string(p) +
                  " of indices) is out of range for axis " + std::to_string(axis) + " of size " +
                  std::to_string(extent) + " (valid: [" + std::to_string(-extent) + ", " +
                  std::to_string(extent - 1) + "])");
    }
    resolved.push_back(index);
  }
  return resolved;
}

// data seen as [outer, extent, inner] gives output [outer, indices..., inner]:
// out[o, p, i] = data[o, indices[p], i].
std::vector<Tensor> gather(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& data = *in[0];
  const int axis = attr_axis(node, data.shape().rank());
  const AxisView rows = view_around_axis(data.shape(), axis);
  const std::vector<int64_t> indices = resolved_gather_indices(*in[1], rows.extent, axis);
  const int64_t count = static_cast<int64_t>(indices.size());
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t o = 0; o < rows.outer; ++o) {
    for (int64_t p = 0; p < count; ++p) {
      for (int64_t i = 0; i < rows.inner; ++i) {
        copy_element(data, rows.at(o, indices[static_cast<size_t>(p)], i), y,
                     (o * count + p) * rows.inner + i);
      }
    }
  }
  return {y};
}

std::vector<Tensor> expand(const Node&, RefInputs in, RefOutputTypes out) {
  return {broadcast_to(*in[0], out[0].shape)};
}

std::vector<Tensor> constant(const Node& node, RefInputs, RefOutputTypes) {
  return {AttrReader(node).get_tensor("value")};
}

}  // namespace

void register_movement(RefTable& table) {
  using K = OpKind;
  register_kernel(table, K::Reshape, reshape_like);
  register_kernel(table, K::Transpose, transpose);
  register_kernel(table, K::Concat, concat);
  register_kernel(table, K::Split, split);
  register_kernel(table, K::Slice, slice);
  register_kernel(table, K::Gather, gather);
  register_kernel(table, K::Expand, expand);
  register_kernel(table, K::Squeeze, reshape_like);
  register_kernel(table, K::Unsqueeze, reshape_like);
  register_kernel(table, K::Flatten, reshape_like);
  register_kernel(table, K::Identity, reshape_like);
  register_kernel(table, K::Constant, constant);
}

}  // namespace volta::reference
