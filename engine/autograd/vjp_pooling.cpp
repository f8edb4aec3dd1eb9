// VJP rules of the pooling family: GlobalAveragePool's gradient spread evenly over each plane.

#include "vjp.h"

namespace volta::autograd {
namespace {

void global_average_pool_vjp(VjpBuilder& b) {
  const Shape& in = b.shape(b.input(0));
  int64_t plane = 1;
  for (int a = 2; a < in.rank(); ++a) plane *= in[a];
  const ValueId spread = b.add(OpKind::Expand, {b.grad()}, {{"shape", in.dims()}});
  b.set(0, b.mul(spread, b.scalar(1.0 / static_cast<double>(plane))));
}

}  // namespace

void register_pooling_vjps(VjpTable& t) {
  t[static_cast<size_t>(op_index(OpKind::GlobalAveragePool))] = {&global_average_pool_vjp, 0b1};
}

}  // namespace volta::autograd
