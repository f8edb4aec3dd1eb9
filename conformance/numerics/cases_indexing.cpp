// Parity grids of the indexing family (gathers, scatters, TopK, OneHot, Trilu). Index operands
// are always given: drawn within [-n, n) of the axis they index, negative ones included, so
// duplicates (scatters) and both index signs are exercised. Sizes cross the kernels' chunk
// edges.

#include <limits>

#include "case_list.h"
#include "volta/ir/random.h"

namespace volta::conformance::cases {
namespace {

using Ints = std::vector<int64_t>;
using Fixed = std::vector<std::optional<Tensor>>;
const std::vector<DType> kAll = {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool};

// A tensor of the given values (converted to the dtype) in row-major order.
Tensor values(DType d, const Shape& shape, const std::vector<double>& v) {
  Tensor t(d, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, v[static_cast<size_t>(i)]);
  return t;
}

void gather_elements(CaseList& cases) {
  const auto op = K::GatherElements;
  auto add = [&](DType d, DType idx, const Shape& data, const Shape& ind, int64_t axis,
                 uint64_t seed) {
    const int64_t n = data[static_cast<int>(axis < 0 ? axis + data.rank() : axis)];
    cases.add(op, {of(d, data), of(idx, ind)}, {{"axis", axis}}, 1,
              {std::nullopt, indices(idx, ind, n, seed)});
  };
  for (DType idx : {DType::I64, DType::I32}) {
    add(DType::F32, idx, {3, 4}, {2, 4}, 0, 1);
    add(DType::F32, idx, {3, 4}, {3, 6}, 1, 2);
  }
  add(DType::F32, DType::I64, {4, 5, 6}, {2, 3, 7}, 2, 3);
  add(DType::F32, DType::I64, {4, 5, 6}, {4, 2, 6}, -2, 4);
  add(DType::F32, DType::I64, {7}, {9}, 0, 5);
  add(DType::F32, DType::I64, {1, 1}, {1, 1}, 1, 6);
  add(DType::F32, DType::I64, {3, 4}, {0, 4}, 0, 7);
  add(DType::F32, DType::I64, {2, kChunk + 5}, {2, kChunk + 5}, 1, 8);
  add(DType::F32, DType::I64, {kChunk + 5, 2}, {kChunk + 3, 2}, 0, 9);
  for (DType d : kAll) add(d, DType::I64, {5, 3}, {4, 3}, 0, 10);
}

void gather_nd(CaseList& cases) {
  const auto op = K::GatherND;
  // The tuple axis (last of indices) indexes data axes b, b + 1, ...: each column is drawn
  // within its own axis.
  auto add = [&](DType d, DType idx, const Shape& data, const Shape& ind, int64_t b,
                 uint64_t seed) {
    const int64_t k = ind[ind.rank() - 1];
    Tensor t(idx, ind);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t n = data[static_cast<int>(b + j)];
      const Tensor col = indices(DType::I64, ind, n, seed * 31 + static_cast<uint64_t>(j));
      for (int64_t p = j; p < t.numel(); p += k) t.set_int(p, col.get_int(p));
    }
    Attributes attrs;
    if (b != 0) attrs["batch_dims"] = b;
    cases.add(op, {of(d, data), of(idx, ind)}, attrs, 1, {std::nullopt, t});
  };
  for (DType idx : {DType::I64, DType::I32}) {
    add(DType::F32, idx, {2, 2}, {2, 2}, 0, 1);
    add(DType::F32, idx, {2, 3, 4}, {3, 1}, 0, 2);
  }
  add(DType::F32, DType::I64, {2, 3, 4}, {3, 2}, 0, 3);
  add(DType::F32, DType::I64, {2, 3, 4}, {2, 2, 3}, 0, 4);
  add(DType::F32, DType::I64, {2, 3, 4}, {1}, 0, 5);
  add(DType::F32, DType::I64, {2, 3, 4}, {2, 1}, 1, 6);
  add(DType::F32, DType::I64, {2, 3, 4}, {2, 4, 2}, 1, 7);
  add(DType::F32, DType::I64, {2, 3, 4, 5}, {2, 3, 2, 1}, 2, 8);
  add(DType::F32, DType::I64, {3, 4}, {0, 2}, 0, 9);
  add(DType::F32, DType::I64, {4, kChunk + 3}, {3, 1}, 0, 10);
  add(DType::F32, DType::I64, {50, 30}, {kChunk + 7, 2}, 0, 11);
  for (DType d : kAll) add(d, DType::I64, {3, 4}, {5, 1}, 0, 12);
}

void scatter_elements(CaseList& cases) {
  const auto op = K::ScatterElements;
  auto add = [&](DType d, DType idx, const Shape& data, const Shape& ind, int64_t axis,
                 const std::string& reduction, uint64_t seed) {
    const int64_t n = data[static_cast<int>(axis < 0 ? axis + data.rank() : axis)];
    Attributes attrs{{"axis", axis}};
    if (reduction != "none") attrs["reduction"] = reduction;
    cases.add(op, {of(d, data), of(idx, ind), of(d, ind)}, attrs, 1,
              {std::nullopt, indices(idx, ind, n, seed)});
  };
  for (const std::string reduction : {"none", "add", "mul", "max", "min"}) {
    add(DType::F32, DType::I64, {3, 4}, {2, 4}, 0, reduction, 1);
    add(DType::F32, DType::I64, {3, 4}, {3, 7}, 1, reduction, 2);
    add(DType::F32, DType::I64, {4, 5, 6}, {2, 3, 4}, -2, reduction, 3);
    add(DType::F64, DType::I64, {5, 3}, {6, 2}, 0, reduction, 4);
    add(DType::I32, DType::I32, {5, 3}, {6, 2}, 0, reduction, 5);
    add(DType::I64, DType::I64, {5, 3}, {6, 2}, 0, reduction, 6);
  }
  add(DType::F32, DType::I32, {3, 4}, {2, 4}, 0, "none", 7);
  add(DType::Bool, DType::I64, {5, 3}, {6, 2}, 0, "none", 8);
  add(DType::F32, DType::I64, {6}, {10}, 0, "add", 9);
  add(DType::F32, DType::I64, {3, 4}, {0, 4}, 0, "none", 10);
  add(DType::F32, DType::I64, {3, kChunk + 9}, {3, kChunk + 9}, 1, "add", 11);
  add(DType::F32, DType::I64, {4, kChunk + 9}, {5, kChunk + 2}, 0, "add", 12);
}

void scatter_nd(CaseList& cases) {
  const auto op = K::ScatterND;
  auto add = [&](DType d, DType idx, const Shape& data, const Shape& ind,
                 const std::string& reduction, uint64_t seed) {
    const int64_t k = ind[ind.rank() - 1];
    Tensor t(idx, ind);
    for (int64_t j = 0; j < k; ++j) {
      const Tensor col =
          indices(DType::I64, ind, data[static_cast<int>(j)], seed * 31 + static_cast<uint64_t>(j));
      for (int64_t p = j; p < t.numel(); p += k) t.set_int(p, col.get_int(p));
    }
    std::vector<int64_t> upd(ind.dims().begin(), ind.dims().end() - 1);
    upd.insert(upd.end(), data.dims().begin() + k, data.dims().end());
    Attributes attrs;
    if (reduction != "none") attrs["reduction"] = reduction;
    cases.add(op, {of(d, data), of(idx, ind), of(d, Shape(upd))}, attrs, 1, {std::nullopt, t});
  };
  for (const std::string reduction : {"none", "add", "mul", "max", "min"}) {
    add(DType::F32, DType::I64, {4, 4, 4}, {2, 1}, reduction, 1);
    add(DType::F32, DType::I64, {4, 4, 4}, {5, 3}, reduction, 2);
    add(DType::F32, DType::I64, {3, 4, 5}, {2, 2, 2}, reduction, 3);
    add(DType::F64, DType::I64, {6, 2}, {4, 1}, reduction, 4);
    add(DType::I32, DType::I32, {6, 2}, {4, 1}, reduction, 5);
    add(DType::I64, DType::I64, {6, 2}, {4, 1}, reduction, 6);
  }
  add(DType::F32, DType::I32, {4, 4, 4}, {2, 1}, "none", 7);
  add(DType::Bool, DType::I64, {6, 2}, {4, 1}, "none", 8);
  add(DType::F32, DType::I64, {4, 4}, {0, 1}, "none", 9);
  add(DType::F32, DType::I64, {5}, {12, 1}, "add", 10);
  add(DType::F32, DType::I64, {2, 3, 5000}, {4, 1}, "add", 11);
  add(DType::F32, DType::I64, {200, 100}, {kChunk + 3, 2}, "add", 12);
}

void top_k(CaseList& cases) {
  const auto op = K::TopK;
  auto attrs = [](int64_t k, int64_t axis, int64_t largest) {
    return Attributes{{"k", k}, {"axis", axis}, {"largest", largest}};
  };
  for (int64_t largest : {1, 0}) {
    cases.add(op, {f32({3, 4})}, attrs(3, 1, largest), 2);
    cases.add(op, {f32({3, 4})}, attrs(2, 0, largest), 2);
    cases.add(op, {f32({2, 5, 3})}, attrs(4, 1, largest), 2);
    cases.add(op, {f32({2, 5, 3})}, attrs(5, -2, largest), 2);
    cases.add(op, {f32({7})}, attrs(0, 0, largest), 2);
    cases.add(op, {f32({1})}, attrs(1, 0, largest), 2);
    cases.add(op, {f32({0, 4})}, attrs(2, 1, largest), 2);
    // Small integers tie often: ties must keep the lower index first.
    for (DType d : {DType::I32, DType::I64, DType::F64, DType::I8, DType::I16}) {
      cases.add(op, {of(d, {6, 9})}, attrs(4, 1, largest), 2, {ints(d, {6, 9}, -3, 3, 21)});
    }
    for (DType d : {DType::U8, DType::U16, DType::U32, DType::U64}) {
      cases.add(op, {of(d, {6, 9})}, attrs(4, 1, largest), 2, {ints(d, {6, 9}, 0, 6, 22)});
      cases.add(op, {of(d, {3, 5})}, attrs(2, 0, largest), 2);
    }
    // u64 values on both sides of 2^63, which a signed comparison would put first.
    cases.add(op, {of(DType::U64, {6})}, attrs(4, 0, largest), 2,
              {values(DType::U64, {6}, {1.8e19, 5, 9.3e18, 0, 9e18, 1e19})});
    // NaN ranks above every number; -0 and 0 tie.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    cases.add(op, {f32({2, 8})}, attrs(5, 1, largest), 2,
              {values(DType::F32, {2, 8},
                      {1, nan, 3, 3, -inf, nan, 0, -0.0, -0.0, 2, nan, inf, 0, 2, -1, nan})});
    cases.add(op, {f32({2, kChunk + 3})}, attrs(5, -1, largest), 2);
    cases.add(op, {f32({5000, 8})}, attrs(3, 1, largest), 2);
    cases.add(op, {f32({6, 700})}, attrs(700, 1, largest), 2);
  }
  cases.add(op, {f32({3, 4})}, {{"k", int64_t{2}}, {"sorted", int64_t{0}}}, 2);
}

void one_hot(CaseList& cases) {
  const auto op = K::OneHot;
  // Indices reach past both ends of [-depth, depth): those rows are all off.
  auto add = [&](DType idx, DType d, const Shape& ind, int64_t depth, int64_t axis, uint64_t seed) {
    const Tensor r = random_tensor(DType::F64, ind, seed, static_cast<double>(-depth - 3),
                                   static_cast<double>(depth + 3));
    Tensor t(idx, ind);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, r.get_double(i));
    cases.add(op, {of(idx, ind), of(d, {2})}, {{"depth", depth}, {"axis", axis}}, 1,
              {t, random_tensor(d, Shape{2}, seed + 1, -5, 5)});
  };
  for (DType idx : {DType::I64, DType::I32, DType::F32, DType::F64}) {
    add(idx, DType::F32, {3}, 10, -1, 1);
    add(idx, DType::F32, {2, 3}, 5, 1, 2);
  }
  add(DType::I64, DType::F32, {2, 3}, 4, 0, 3);
  add(DType::I64, DType::F32, {2, 3}, 4, -3, 4);
  add(DType::I64, DType::F32, {}, 6, 0, 5);
  add(DType::I64, DType::F32, {4}, 1, -1, 6);
  add(DType::I64, DType::F32, {0, 3}, 4, 1, 7);
  add(DType::I64, DType::F32, {3000}, 10, -1, 8);
  add(DType::I64, DType::F32, {2, 1000}, 12, 1, 9);
  for (DType d : kAll) add(DType::I32, d, {4, 2}, 3, -1, 10);
  // Fractions truncate toward zero; NaN and infinities select nothing.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  cases.add(op, {of(DType::F32, {8}), f32({2})}, {{"depth", int64_t{4}}}, 1,
            {values(DType::F32, {8}, {0.9, -0.9, 3.7, -4.2, 4.0, nan, inf, -inf}),
             values(DType::F32, {2}, {-1, 1})});
}

void trilu(CaseList& cases) {
  const auto op = K::Trilu;
  for (int64_t upper : {1, 0}) {
    for (int64_t k : {0, 1, -1, 3, -4, 100, -100}) {
      cases.add(op, {f32({4, 5})}, {{"upper", upper}, {"k", k}});
    }
    cases.add(op, {f32({2, 3, 3})}, {{"upper", upper}});
    cases.add(op, {f32({3, 1, 5})}, {{"upper", upper}, {"k", int64_t{-1}}});
    cases.add(op, {f32({5, 1})}, {{"upper", upper}});
    cases.add(op, {f32({0, 5})}, {{"upper", upper}, {"k", int64_t{2}}});
    cases.add(op, {f32({2, 130, 129})}, {{"upper", upper}, {"k", int64_t{7}}});
    cases.add(op, {f32({3, 3})}, {{"upper", upper}, {"k", std::numeric_limits<int64_t>::max()}});
    cases.add(op, {f32({3, 3})}, {{"upper", upper}, {"k", std::numeric_limits<int64_t>::min()}});
  }
  for (DType d : kAll) cases.add(op, {of(d, {4, 4})}, {{"upper", int64_t{0}}});
}

}  // namespace

void indexing_cases(CaseList& cases) {
  gather_elements(cases);
  gather_nd(cases);
  scatter_elements(cases);
  scatter_nd(cases);
  top_k(cases);
  one_hot(cases);
  trilu(cases);
}

}  // namespace volta::conformance::cases
