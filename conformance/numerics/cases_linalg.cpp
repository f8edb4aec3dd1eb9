// Parity cases of MatMul, Gemm, FusedMatMul, PermutedMatMul, Einsum and Det: sizes at the edges
// of the GEMM's micro tiles and cache blocks, degenerate and empty sizes, broadcasting batches,
// every Einsum form (implicit and explicit outputs, diagonals, ellipses), singular matrices.

#include <array>
#include <string>
#include <vector>

#include "case_list.h"

namespace volta::conformance::cases {
namespace {

void einsum_cases(CaseList& cases) {
  auto add = [&](const std::string& equation, const std::vector<Shape>& shapes,
                 DType d = DType::F32) {
    Types types;
    for (const Shape& s : shapes) types.push_back(of(d, s));
    cases.add(K::Einsum, types, {{"equation", equation}});
  };
  add("ij,jk->ik", {{3, 4}, {4, 5}});
  add("bij, bjk -> bik", {{5, 2, 3}, {5, 3, 4}});
  add("i,i", {{5}, {5}});
  add("ij->i", {{3, 4}});
  add("ij->ji", {{3, 4}});
  add("ji", {{3, 4}});
  add("ij,jk", {{3, 4}, {4, 5}});
  add("...ii ->...i", {{3, 5, 5}});
  add("ii", {{4, 4}});
  add("ii->i", {{4, 4}});
  add("iij->j", {{3, 3, 2}});
  add("i,j->ij", {{3}, {4}});
  add("ij->", {{3, 4}});
  add(",->", {{}, {}});
  add("i->", {{0}});
  add("...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 6}});
  add("...ij,jk", {{2, 3, 4}, {4, 2}});
  add("i...->...", {{3, 2, 2}});
  add("ij...->", {{3, 2, 2}});
  add("abc,cd,de->abe", {{2, 3, 4}, {4, 5}, {5, 2}});
  add("bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}});
  add("Ab,bc->Ac", {{3, 4}, {4, 2}});
  add("ij,jk->ik", {{3, 0}, {0, 5}});
  add("ij,jk->ik", {{0, 4}, {4, 5}});
  add("ij,jk->ik", {{3, kLeaf + 5}, {kLeaf + 5, 2}});
  add("ij->ji", {{130, 131}});
  // Two float operands run as a packed GEMM: diagonals, labels only one operand sums over,
  // elementwise products, and outputs in another order than [batch, M, N].
  add("ii,i->i", {{4, 4}, {4}});
  add("ij,k->", {{3, 4}, {5}});
  add("ij,ij->ij", {{3, 4}, {3, 4}});
  add("bij,jk->bik", {{2, 3, 4}, {4, 5}});
  add("bij,bjk->kib", {{4, 33, 65}, {4, 65, 17}});
  add("ij,jk->ik", {{7, 9}, {9, 5}}, DType::F64);
  add("...ii ->...i", {{3, 5, 5}}, DType::F64);
  add("ij,jk->ik", {{7, 9}, {9, 5}}, DType::I32);
  add("ij->i", {{3, 4}}, DType::I32);
  add("ij,jk->ik", {{7, 9}, {9, 5}}, DType::I64);
  add("i,i", {{5}, {5}}, DType::I64);
}

void det_grid(CaseList& cases) {
  for (DType d : {DType::F32, DType::F64}) {
    for (const Shape& s :
         {Shape{1, 1}, Shape{2, 2}, Shape{3, 3}, Shape{4, 4}, Shape{7, 7}, Shape{12, 12},
          Shape{5, 3, 3}, Shape{2, 3, 4, 4}, Shape{0, 0}, Shape{3, 0, 0}, Shape{0, 2, 2}}) {
      cases.add(K::Det, {of(d, s)});
    }
  }
  // More matrices than one task takes.
  cases.add(K::Det, {f32({3000, 2, 2})});
  // Singular matrices: a zero column, and rows that are multiples of each other.
  cases.add(K::Det, {f32({2, 3, 3})}, {}, 1,
            {Tensor::from<float>({2, 3, 3}, {1, 0, 3, 4, 0, 6, 7, 0, 9,  //
                                             1, 2, 3, 2, 4, 6, 5, 1, 0})});
}

}  // namespace

void linalg_cases(CaseList& cases) {
  // Edges of common micro tiles (4, 6, 8, 16) and cache blocks, plus degenerate sizes.
  const std::vector<std::array<int64_t, 3>> mnk = {
      {1, 1, 1},    {5, 7, 3},    {6, 16, 8},    {7, 17, 9},    {4, 8, 16},
      {12, 32, 64}, {13, 33, 65}, {65, 31, 129}, {96, 80, 300}, {1, 64, 512},
      {64, 1, 33},  {0, 4, 3},    {3, 0, 4},     {3, 4, 0}};
  for (const auto& [m, n, k] : mnk) cases.add(K::MatMul, {f32({m, k}), f32({k, n})});
  cases.add(K::MatMul, {of(DType::F64, {7, 9}), of(DType::F64, {9, 5})});
  cases.add(K::MatMul, {of(DType::F64, {13, 33}), of(DType::F64, {33, 17})});
  cases.add(K::MatMul, {f32({4}), f32({4, 3})});
  cases.add(K::MatMul, {f32({3, 4}), f32({4})});
  cases.add(K::MatMul, {f32({5}), f32({5})});
  cases.add(K::MatMul, {f32({2, 3, 4, 5}), f32({5, 6})});
  cases.add(K::MatMul, {f32({2, 1, 3, 4}), f32({5, 4, 6})});
  cases.add(K::MatMul, {f32({3, 4}), f32({2, 4, 6})});
  cases.add(K::MatMul, {f32({0, 3, 4}), f32({4, 2})});

  for (int64_t ta : {0, 1}) {
    for (int64_t tb : {0, 1}) {
      const Shape a = ta ? Shape{9, 7} : Shape{7, 9};
      const Shape b = tb ? Shape{17, 9} : Shape{9, 17};
      cases.add(K::Gemm, {f32(a), f32(b), f32({17})}, {{"transA", ta}, {"transB", tb}});
    }
  }
  cases.add(K::Gemm, {f32({5, 6}), f32({6, 4}), std::nullopt});
  cases.add(K::Gemm, {f32({5, 6}), f32({6, 4}), f32({5, 1})}, {{"alpha", 0.5}, {"beta", 2.0}});
  cases.add(K::Gemm, {f32({5, 6}), f32({6, 4}), f32({})}, {{"beta", -1.0}});
  cases.add(K::Gemm, {f32({5, 6}), f32({6, 4}), f32({5, 4})}, {{"alpha", 0.0}});
  cases.add(K::Gemm, {f32({33, 65}), f32({65, 17}), f32({33, 17})});
  cases.add(K::Gemm, {of(DType::F64, {5, 6}), of(DType::F64, {4, 6}), of(DType::F64, {4})},
            {{"transB", int64_t{1}}});
  cases.add(K::Gemm, {f32({3, 0}), f32({0, 4}), f32({4})});

  // FusedMatMul (made by gemm-epilogue-fusion): every activation and both bias operand orders,
  // at tile edges, a stacked batch, a 1-D A and an empty K.
  for (const char* activation : {"none", "relu", "gelu", "gelu_tanh"}) {
    const Attributes act = {{"activation", std::string(activation)}};
    cases.add(K::FusedMatMul, {f32({13, 65}), f32({65, 33}), f32({33})}, act);
    cases.add(K::FusedMatMul,
              {of(DType::F64, {7, 9}), of(DType::F64, {9, 17}), of(DType::F64, {17})}, act);
  }
  cases.add(K::FusedMatMul, {f32({2, 3, 6, 8}), f32({8, 16}), f32({16})},
            {{"activation", std::string("relu")}, {"bias_first", int64_t{1}}});
  cases.add(K::FusedMatMul, {f32({5}), f32({5, 3}), f32({3})});
  cases.add(K::FusedMatMul, {f32({4, 0}), f32({0, 6}), f32({6})},
            {{"activation", std::string("gelu")}});
  cases.add(K::FusedMatMul, {f32({96, 300}), f32({300, 80}), f32({80})},
            {{"activation", std::string("gelu")}});
  // PermutedMatMul (made by matmul-transpose-folding): attention's heads split for the scores
  // (K transposed to its rows) and the context, merged back; a broadcast batch, tile edges, an
  // operand whose K axis is strided, f64, an empty K.
  const auto perms = [](std::vector<int64_t> a, std::vector<int64_t> b, std::vector<int64_t> y) {
    return Attributes{{"perm_a", std::move(a)}, {"perm_b", std::move(b)}, {"perm_y", std::move(y)}};
  };
  cases.add(K::PermutedMatMul, {f32({2, 32, 4, 16}), f32({2, 32, 4, 16})},
            perms({0, 2, 1, 3}, {0, 2, 3, 1}, {0, 1, 2, 3}));
  cases.add(K::PermutedMatMul, {f32({2, 4, 32, 32}), f32({2, 32, 4, 16})},
            perms({0, 1, 2, 3}, {0, 2, 1, 3}, {0, 2, 1, 3}));
  cases.add(K::PermutedMatMul, {f32({3, 17, 5, 13}), f32({3, 17, 5, 13})},
            perms({0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}));
  cases.add(K::PermutedMatMul, {f32({33, 65}), f32({17, 33})}, perms({1, 0}, {1, 0}, {0, 1}));
  cases.add(K::PermutedMatMul, {f32({9, 1, 6}), f32({3, 9, 7})},
            perms({1, 2, 0}, {0, 1, 2}, {1, 0, 2}));
  cases.add(K::PermutedMatMul, {of(DType::F64, {2, 7, 3, 5}), of(DType::F64, {2, 5, 3, 9})},
            perms({0, 2, 1, 3}, {0, 2, 1, 3}, {2, 0, 1, 3}));
  cases.add(K::PermutedMatMul, {f32({2, 0, 4}), f32({2, 0, 3})},
            perms({0, 2, 1}, {0, 1, 2}, {0, 1, 2}));
  einsum_cases(cases);
  det_grid(cases);
}

}  // namespace volta::conformance::cases
