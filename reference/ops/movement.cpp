// Reference data movement, the layout ops (Tile, Pad, DepthToSpace, SpaceToDepth,
// ReverseSequence) included. Elements are copied as raw bytes (NaN payloads pass unchanged),
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

std::vector<Tensor> tile(const Node&, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  Tensor y(out[0].dtype, out[0].shape);
  std::vector<int64_t> source(static_cast<size_t>(x.shape().rank()));
  for_each_index(y.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    for (size_t d = 0; d < source.size(); ++d)
      source[d] = index[d] % x.shape()[static_cast<int>(d)];
    copy_element(x, flat_offset(source, x.shape()), y, flat);
  });
  return {y};
}

// The input index for padded index i along an axis of `dim` elements, or -1 for the
// constant. reflect: ... 2 1 | 0 1 2 ... d-1 | d-2 d-3 ..., bouncing between the ends.
int64_t pad_source_index(int64_t i, int64_t dim, const std::string& mode) {
  if (i >= 0 && i < dim) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return i < 0 ? 0 : dim - 1;
  if (dim == 1) return 0;
  while (i < 0 || i >= dim) i = i < 0 ? -i : 2 * (dim - 1) - i;
  return i;
}

std::vector<Tensor> pad(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const AttrReader attrs(node);
  const std::vector<int64_t>& pads = attrs.get_ints("pads");
  const std::string& mode = attrs.get_string("mode");
  const Tensor* value = optional_input(in, 1);
  const int rank = x.shape().rank();
  Tensor y(out[0].dtype, out[0].shape);  // zero-filled: the default constant
  std::vector<int64_t> source(static_cast<size_t>(rank));
  for_each_index(y.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    bool inside = true;
    for (int d = 0; d < rank; ++d) {
      const auto s = static_cast<size_t>(d);
      source[s] = pad_source_index(index[s] - pads[s], x.shape()[d], mode);
      inside = inside && source[s] >= 0;
    }
    if (inside) {
      copy_element(x, flat_offset(source, x.shape()), y, flat);
    } else if (value != nullptr) {
      copy_element(*value, 0, y, flat);
    }
  });
  return {y};
}

// out[n, c, h*b + i, w*b + j] = x[n, channel, h, w] with channel (i*b + j)*C' + c (DCR) or
// (c*b + i)*b + j (CRD), C' the output channels.
std::vector<Tensor> depth_to_space(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const AttrReader attrs(node);
  const int64_t b = attrs.get_int("blocksize");
  const bool crd = attrs.get_string("mode") == "CRD";
  Tensor y(out[0].dtype, out[0].shape);
  const int64_t channels_out = y.shape()[1];
  for_each_index(y.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    const int64_t n = index[0], c = index[1], i = index[2] % b, j = index[3] % b;
    const int64_t channel = crd ? (c * b + i) * b + j : (i * b + j) * channels_out + c;
    const std::vector<int64_t> source = {n, channel, index[2] / b, index[3] / b};
    copy_element(x, flat_offset(source, x.shape()), y, flat);
  });
  return {y};
}

// out[n, (i*b + j)*C + c, h, w] = x[n, c, h*b + i, w*b + j].
std::vector<Tensor> space_to_depth(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const int64_t b = AttrReader(node).get_int("blocksize");
  const int64_t channels = x.shape()[1];
  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(x.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    const int64_t i = index[2] % b, j = index[3] % b;
    const std::vector<int64_t> target = {index[0], (i * b + j) * channels + index[1], index[2] / b,
                                         index[3] / b};
    copy_element(x, flat, y, flat_offset(target, y.shape()));
  });
  return {y};
}

// Time steps t < len of batch entry e come from len - 1 - t; the rest are copied.
std::vector<Tensor> reverse_sequence(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const Tensor& lens = *in[1];
  const AttrReader attrs(node);
  const auto batch_axis = static_cast<size_t>(attrs.get_int("batch_axis"));
  const auto time_axis = static_cast<size_t>(attrs.get_int("time_axis"));
  const int64_t steps = x.shape()[static_cast<int>(time_axis)];
  for (int64_t e = 0; e < lens.numel(); ++e) {
    if (lens.get_int(e) < 0 || lens.get_int(e) > steps) {
      kernel_fail("sequence_lens[" + std::to_string(e) + "] = " + std::to_string(lens.get_int(e)) +
                  " is out of range for time axis " + std::to_string(time_axis) + " of size " +
                  std::to_string(steps) + " (valid: [0, " + std::to_string(steps) + "])");
    }
  }
  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(x.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    const int64_t len = lens.get_int(index[batch_axis]);
    std::vector<int64_t> source = index;
    if (index[time_axis] < len) source[time_axis] = len - 1 - index[time_axis];
    copy_element(x, flat_offset(source, x.shape()), y, flat);
  });
  return {y};
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
  register_kernel(table, K::Tile, tile);
  register_kernel(table, K::Pad, pad);
  register_kernel(table, K::DepthToSpace, depth_to_space);
  register_kernel(table, K::SpaceToDepth, space_to_depth);
  register_kernel(table, K::ReverseSequence, reverse_sequence);
}

}  // namespace volta::reference
