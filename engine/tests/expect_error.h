#pragma once
// Pins a VoltaError: the stable code and the exact message a user would read.

#include <boost/test/unit_test.hpp>
#include <string>

#include "volta/error.h"

namespace volta::test {

// Runs `body`, which must throw VoltaError with `code` and exactly `message`.
template <class Body>
void expect_error(Body&& body, ErrorCode code, const std::string& message) {
  try {
    body();
    BOOST_ERROR("expected " << error_code_name(code) << ", nothing was thrown");
  } catch (const VoltaError& e) {
    BOOST_CHECK_EQUAL(std::string(error_code_name(e.code())), std::string(error_code_name(code)));
    BOOST_CHECK_EQUAL(e.message(), message);
  }
}

// Runs `body`, which must throw VoltaError with `code` and a message containing each of
// `fragments` (for messages that embed whole IR dumps).
template <class Body>
void expect_error_containing(Body&& body, ErrorCode code,
                             std::initializer_list<std::string> fragments) {
  try {
    body();
    BOOST_ERROR("expected " << error_code_name(code) << ", nothing was thrown");
  } catch (const VoltaError& e) {
    BOOST_CHECK_EQUAL(std::string(error_code_name(e.code())), std::string(error_code_name(code)));
    for (const std::string& fragment : fragments) {
      BOOST_CHECK_MESSAGE(e.message().find(fragment) != std::string::npos,
                          "message lacks \"" << fragment << "\":\n"
                                             << e.message());
    }
  }
}

}  // namespace volta::test
