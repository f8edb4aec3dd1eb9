// CPU kernels of the indexing ops added for ONNX import, against hand-checked values.
#define BOOST_TEST_MODULE cpu_indexing
#include <boost/test/unit_test.hpp>

#include "test_util.h"

namespace volta {
namespace {

BOOST_AUTO_TEST_CASE(placeholder_until_the_ops_land) { BOOST_TEST(kOpCount == 119); }

}  // namespace
}  // namespace volta
