// Parity cases of the movement family: every dtype through every op, the attribute forms of
// each (negative axes, steps and clamped slice bounds, empty parts), and the layout ops (Tile,
// Pad, DepthToSpace, SpaceToDepth, ReverseSequence). Index operands are always given: drawn
// within [-n, n) of the axis they index, negative ones included.

#include <optional>
#include <vector>

#include "case_list.h"
#include "volta/ir/random.h"

namespace volta::conformance::cases {
namespace {

using Ints = std::vector<int64_t>;
using Fixed = std::vector<std::optional<Tensor>>;
const std::vector<DType> kAll = all_dtypes();

void tile(CaseList& cases) {
  const auto op = K::Tile;
  cases.add(op, {f32({2, 3})}, {{"repeats", Ints{2, 3}}});
  cases.add(op, {f32({2, 3, 4})}, {{"repeats", Ints{1, 2, 3}}});
  cases.add(op, {f32({2, 3})}, {{"repeats", Ints{0, 2}}});
  cases.add(op, {f32({2, 3})}, {{"repeats", Ints{1, 1}}});
  cases.add(op, {f32({})}, {{"repeats", Ints{}}});
  cases.add(op, {f32({0, 3})}, {{"repeats", Ints{3, 2}}});
  cases.add(op, {f32({5})}, {{"repeats", Ints{7}}});
  cases.add(op, {f32({3, 7})}, {{"repeats", Ints{2, 1000}}});
  for (DType d : kAll) cases.add(op, {of(d, {2, 3})}, {{"repeats", Ints{3, 2}}});
}

void pad(CaseList& cases) {
  const auto op = K::Pad;
  auto add = [&](DType d, const Shape& shape, const Ints& pads, const std::string& mode,
                 bool with_value = false) {
    Types types = {of(d, shape)};
    if (with_value) types.push_back(of(d, {}));
    Attributes attrs{{"pads", pads}};
    if (mode != "constant") attrs["mode"] = mode;
    cases.add(op, types, attrs);
  };
  for (const std::string mode : {"constant", "reflect", "edge"}) {
    add(DType::F32, {1, 3, 4, 5}, {0, 0, 1, 3, 0, 0, 2, 4}, mode);
    add(DType::F32, {3, 4}, {2, 1, 1, 3}, mode);
    add(DType::F32, {3, 4}, {-1, 1, 0, -2}, mode);
    add(DType::F32, {3, 4}, {0, 0, 0, 0}, mode);
    add(DType::F32, {6}, {5, 9}, mode);
    add(DType::F32, {2, 1}, {1, 2, 1, 3}, mode);
    add(DType::F32, {}, {}, mode);
    add(DType::F32, {3, 5000}, {1, 2, 0, 3}, mode);
    for (DType d : kAll) add(d, {2, 3}, {1, 1, 2, 0}, mode);
  }
  for (DType d : kAll) add(d, {3, 4}, {1, 2, 0, 1}, "constant", true);
  add(DType::F32, {0, 3}, {1, 0, 1, 0}, "constant", true);
  add(DType::F32, {2, 3}, {0, -3, 0, 0}, "constant");
  cases.add(op, {f32({2, 2}), f32({1})}, {{"pads", Ints{1, 1, 1, 1}}});
}

void depth_space(CaseList& cases) {
  for (const std::string mode : {"DCR", "CRD"}) {
    const Attributes b2{{"blocksize", int64_t{2}}, {"mode", mode}};
    cases.add(K::DepthToSpace, {f32({2, 8, 3, 3})}, b2);
    cases.add(K::DepthToSpace, {f32({1, 18, 2, 3})}, {{"blocksize", int64_t{3}}, {"mode", mode}});
    cases.add(K::DepthToSpace, {f32({1, 16, 40, 40})}, b2);
    cases.add(K::DepthToSpace, {f32({0, 8, 2, 2})}, b2);
    for (DType d : kAll) cases.add(K::DepthToSpace, {of(d, {1, 8, 2, 3})}, b2);
  }
  cases.add(K::DepthToSpace, {f32({2, 3, 2, 2})}, {{"blocksize", int64_t{1}}});
  cases.add(K::SpaceToDepth, {f32({2, 2, 6, 6})}, {{"blocksize", int64_t{2}}});
  cases.add(K::SpaceToDepth, {f32({1, 3, 6, 9})}, {{"blocksize", int64_t{3}}});
  cases.add(K::SpaceToDepth, {f32({2, 3, 2, 2})}, {{"blocksize", int64_t{1}}});
  cases.add(K::SpaceToDepth, {f32({1, 4, 80, 80})}, {{"blocksize", int64_t{2}}});
  cases.add(K::SpaceToDepth, {f32({1, 2, 0, 4})}, {{"blocksize", int64_t{2}}});
  for (DType d : kAll)
    cases.add(K::SpaceToDepth, {of(d, {1, 2, 4, 6})}, {{"blocksize", int64_t{2}}});
}

void reverse_sequence(CaseList& cases) {
  const auto op = K::ReverseSequence;
  // Lengths within [0, steps].
  auto add = [&](DType d, DType len_type, const Shape& shape, int64_t batch_axis, uint64_t seed) {
    const int time_axis = batch_axis == 0 ? 1 : 0;
    const int64_t batch = shape[static_cast<int>(batch_axis)];
    cases.add(op, {of(d, shape), of(len_type, {batch})},
              {{"batch_axis", batch_axis}, {"time_axis", int64_t{time_axis}}}, 1,
              {std::nullopt, ints(len_type, {batch}, 0, shape[time_axis] + 1, seed)});
  };
  for (int64_t batch_axis : {0, 1}) {
    add(DType::F32, DType::I64, {4, 4}, batch_axis, 1);
    add(DType::F32, DType::I64, {3, 5, 2}, batch_axis, 2);
    add(DType::F32, DType::I32, {5, 3, 2, 2}, batch_axis, 3);
    add(DType::F32, DType::I64, {1, 1}, batch_axis, 4);
  }
  add(DType::F32, DType::I64, {0, 4}, 0, 5);
  add(DType::F32, DType::I64, {2, kChunk + 5}, 0, 6);
  add(DType::F32, DType::I64, {kChunk + 5, 2}, 1, 7);
  for (DType d : kAll) add(d, DType::I64, {4, 3}, 1, 8);
}

}  // namespace

void movement_cases(CaseList& cases) {
  for (DType d : kAll) {
    cases.add(K::Reshape, {of(d, {2, 3, 4})}, {{"shape", Ints{4, -1}}});
    cases.add(K::Transpose, {of(d, {2, 3, 4})}, {});
    cases.add(K::Concat, {of(d, {2, 3}), of(d, {2, 5})}, {{"axis", int64_t{1}}});
    cases.add(K::Split, {of(d, {6, 2})}, {}, 3);
    cases.add(K::Slice, {of(d, {5, 6})},
              {{"starts", Ints{1, 0}}, {"ends", Ints{4, 6}}, {"steps", Ints{1, 2}}});
    cases.add(K::Expand, {of(d, {3, 1})}, {{"shape", Ints{2, 3, 4}}});
    cases.add(K::Squeeze, {of(d, {1, 3, 1})}, {});
    cases.add(K::Unsqueeze, {of(d, {3})}, {{"axes", Ints{0, 2}}});
    cases.add(K::Flatten, {of(d, {2, 3, 4})}, {{"axis", int64_t{2}}});
    cases.add(K::Identity, {of(d, {3, 5})}, {});
  }
  cases.add(K::Reshape, {f32({2, 3, 4})}, {{"shape", Ints{0, -1}}});
  cases.add(K::Reshape, {f32({0, 3})}, {{"shape", Ints{3, 0}}, {"allowzero", int64_t{1}}});
  cases.add(K::Reshape, {f32({})}, {{"shape", Ints{1, 1}}});
  for (const Ints& perm : {Ints{1, 0, 2}, Ints{2, 0, 1}, Ints{0, 2, 1}}) {
    cases.add(K::Transpose, {f32({2, 3, 4})}, {{"perm", perm}});
  }
  cases.add(K::Transpose, {f32({65, 33})}, {});
  cases.add(K::Transpose, {f32({3, 130, 67})}, {{"perm", Ints{0, 2, 1}}});
  cases.add(K::Transpose, {f32({2, 3, 4, 5})}, {{"perm", Ints{3, 1, 0, 2}}});
  cases.add(K::Transpose, {f32({0, 3})}, {});
  cases.add(K::Concat, {f32({2, 3}), f32({1, 3}), f32({4, 3})}, {{"axis", int64_t{0}}});
  cases.add(K::Concat, {f32({2, 3}), f32({2, 0}), f32({2, 1})}, {{"axis", int64_t{-1}}});
  cases.add(K::Concat, {f32({4})}, {{"axis", int64_t{0}}});
  cases.add(K::Split, {f32({2, 7})}, {{"axis", int64_t{1}}, {"split", Ints{2, 0, 5}}}, 3);
  cases.add(K::Split, {f32({4, 6})}, {{"axis", int64_t{-1}}}, 2);
  cases.add(K::Slice, {f32({5, 6})},
            {{"starts", Ints{-1}}, {"ends", Ints{-100}}, {"axes", Ints{1}}, {"steps", Ints{-2}}});
  cases.add(K::Slice, {f32({5, 6})},
            {{"starts", Ints{-3, 1}}, {"ends", Ints{1000, 9223372036854775807}}});
  cases.add(K::Slice, {f32({5, 6})}, {{"starts", Ints{4}}, {"ends", Ints{1}}, {"axes", Ints{0}}});
  cases.add(K::Slice, {f32({3, 4, 5})},
            {{"starts", Ints{0, 3}},
             {"ends", Ints{-1, 0}},
             {"axes", Ints{2, 1}},
             {"steps", Ints{2, -1}}});
  cases.add(K::Expand, {f32({})}, {{"shape", Ints{2, 3}}});
  cases.add(K::Expand, {f32({2, 1, 3})}, {{"shape", Ints{3, 2, 4, 1}}});
  cases.add(K::Expand, {f32({3})}, {{"shape", Ints{0, 3}}});
  cases.add(K::Squeeze, {f32({1, 3, 1, 2})}, {{"axes", Ints{-2}}});
  cases.add(K::Unsqueeze, {f32({})}, {{"axes", Ints{0}}});
  cases.add(K::Unsqueeze, {f32({2, 3})}, {{"axes", Ints{-1, 1}}});
  for (int64_t axis : {0, 1, 3, -1}) cases.add(K::Flatten, {f32({2, 3, 4})}, {{"axis", axis}});
  cases.add(K::Identity, {f32({})}, {});
  cases.add(K::Identity, {f32({0, 2})}, {});

  // Gather: indices stay within [-n, n) of the gathered axis, negative ones included.
  for (DType idx : {DType::I64, DType::I32}) {
    cases.add(K::Gather, {f32({5, 4}), of(idx, {3})}, {}, 1,
              {std::nullopt, indices(idx, {3}, 5, 1)});
    cases.add(K::Gather, {f32({5, 4}), of(idx, {2, 3})}, {{"axis", int64_t{1}}}, 1,
              {std::nullopt, indices(idx, {2, 3}, 4, 2)});
  }
  cases.add(K::Gather, {f32({5, 4}), of(DType::I64, {})}, {}, 1,
            {std::nullopt, indices(DType::I64, {}, 5, 3)});
  cases.add(K::Gather, {f32({2, 5, 3}), of(DType::I64, {4})}, {{"axis", int64_t{-2}}}, 1,
            {std::nullopt, indices(DType::I64, {4}, 5, 4)});
  cases.add(K::Gather, {f32({5, 4}), of(DType::I64, {0})}, {}, 1,
            {std::nullopt, indices(DType::I64, {0}, 5, 5)});
  for (DType d : kAll) {
    cases.add(K::Gather, {of(d, {6, 3}), of(DType::I64, {4})}, {}, 1,
              {std::nullopt, indices(DType::I64, {4}, 6, 6)});
  }
  for (DType d : kAll) {
    cases.add(K::Constant, {}, {{"value", random_tensor(d, Shape{2, 3}, 7, -5, 5)}});
  }
  cases.add(K::Constant, {}, {{"value", random_tensor(DType::F32, Shape{}, 8, -5, 5)}});
  tile(cases);
  pad(cases);
  depth_space(cases);
  reverse_sequence(cases);
}

}  // namespace volta::conformance::cases
