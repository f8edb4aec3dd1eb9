#include "volta/error.h"

#include <array>

namespace volta {

std::string_view error_code_name(ErrorCode code) {
  static constexpr std::array kNames = {
#define VOLTA_ERROR_NAME(name, text) std::string_view(text),
      VOLTA_ERROR_CODES(VOLTA_ERROR_NAME)
#undef VOLTA_ERROR_NAME
  };
  return kNames.at(static_cast<size_t>(code));
}

VoltaError::VoltaError(ErrorCode code, const std::string& message)
    : std::runtime_error("[" + std::string(error_code_name(code)) + "] " + message),
      code_(code),
      message_(message) {}

void fail(ErrorCode code, const std::string& message) { throw VoltaError(code, message); }

}  // namespace volta
