// The op table's part for family Reduction: the Reduce* ops over a set of axes, ArgMax and
// ArgMin along one, and CumSum's running sum.

#include "op_table_builders.h"

namespace volta::op_table {

void add_reduction_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  using F = OpFamily;
  const InputDomain any = InputDomain::Any;

  t.push_back(reduce(K::ReduceSum, "ReduceSum", kNumericTypes, D::Differentiable, any, "sum"));
  t.push_back(reduce(K::ReduceMean, "ReduceMean", kFloatTypes, D::Differentiable, any, "mean"));
  OpSchema rmax =
      reduce(K::ReduceMax, "ReduceMax", kNumericTypes, D::Differentiable, any, "maximum");
  OpSchema rmin =
      reduce(K::ReduceMin, "ReduceMin", kNumericTypes, D::Differentiable, any, "minimum");
  rmax.accumulator = rmin.accumulator = Accumulator::None;
  t.push_back(std::move(rmax));
  t.push_back(std::move(rmin));
  OpSchema rprod =
      reduce(K::ReduceProd, "ReduceProd", kNumericTypes, D::Differentiable, any, "product");
  OpSchema rl2 =
      reduce(K::ReduceL2, "ReduceL2", kFloatTypes, D::Differentiable, any, "sqrt(sum of x^2)");
  rprod.accumulator = rl2.accumulator = Accumulator::Wide;
  t.push_back(std::move(rprod));
  t.push_back(reduce(K::ReduceSumSquare, "ReduceSumSquare", kNumericTypes, D::Differentiable, any,
                     "sum of x^2"));
  t.push_back(reduce(K::ReduceL1, "ReduceL1", kNumericTypes, D::Differentiable, any, "sum of |x|"));
  t.push_back(std::move(rl2));
  t.push_back(reduce(K::ReduceLogSumExp, "ReduceLogSumExp", kFloatTypes, D::Differentiable, any,
                     "log(sum exp(x)), computed as max + log(sum exp(x - max))"));
  t.push_back(arg_reduce(K::ArgMax, "ArgMax", "index of the maximum along axis"));
  t.push_back(arg_reduce(K::ArgMin, "ArgMin", "index of the minimum along axis"));
  t.push_back(
      OpSchema{.kind = K::CumSum,
               .name = "CumSum",
               .family = F::Reduction,
               .inputs = {{"x", 'T', D::Differentiable}},
               .outputs = {{"y", 'T'}},
               .type_params = {{'T', kNumericTypes}},
               .attrs = {required("axis", AttrType::Int), flag("exclusive", 0), flag("reverse", 0)},
               .infer = shape_fn::cumsum,
               .summary = "running sum along axis (sequential, in index order)",
               .accumulator = Accumulator::Wide,
               .traits = {OpTrait::AxisAttribute}});
}

}  // namespace volta::op_table
