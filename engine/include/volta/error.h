#pragma once
// Errors are typed exceptions carrying a stable code: tests pin the code and the message,
// tools print both, and nothing in Volta aborts on bad input.

#include <stdexcept>
#include <string>
#include <string_view>

namespace volta {

// Stable diagnostic codes. Append only: the names are part of the public contract.
#define VOLTA_ERROR_CODES(X)                                                                  \
  X(InvalidArgument, "E-INVALID-ARGUMENT")                                                    \
  X(VerifyUndefinedValue, "V-UNDEFINED-VALUE")   /* an id that names no value */              \
  X(VerifyUseBeforeDef, "V-USE-BEFORE-DEF")      /* read before the node that defines it */   \
  X(VerifyRedefinedValue, "V-REDEFINED-VALUE")   /* SSA: a value defined twice */             \
  X(VerifyUndefinedOutput, "V-UNDEFINED-OUTPUT") /* graph output never defined */             \
  X(VerifyArity, "V-ARITY")                      /* input count */                            \
  X(VerifyOutputArity, "V-OUTPUT-ARITY")         /* output count */                           \
  X(VerifyMissingInput, "V-MISSING-INPUT")       /* required input left empty */              \
  X(VerifyUnknownAttribute, "V-UNKNOWN-ATTRIBUTE")                                            \
  X(VerifyMissingAttribute, "V-MISSING-ATTRIBUTE")                                            \
  X(VerifyAttributeType, "V-ATTRIBUTE-TYPE")                                                  \
  X(VerifyAttributeRange, "V-ATTRIBUTE-RANGE")                                                \
  X(VerifyDType, "V-DTYPE")                /* dtype outside the op's constraint */            \
  X(VerifyShape, "V-SHAPE")                /* shapes the op cannot accept */                  \
  X(VerifyDeclaredType, "V-DECLARED-TYPE") /* declared output != inferred */                  \
  X(VerifyParameter, "V-PARAMETER")        /* initializer data != declared type */            \
  X(VerifyDuplicateName, "V-DUPLICATE-NAME")                                                  \
  X(VerifyStateUpdate, "V-STATE-UPDATE") /* a state's next value that cannot be written */    \
  X(PassFailed, "P-PASS-FAILED")         /* a pass left the IR invalid */                     \
  X(PlanSchedule, "L-SCHEDULE")          /* verify_schedule */                                \
  X(PlanAllocation, "L-ALLOCATION")      /* verify_allocation */                              \
  X(MissingKernel, "R-MISSING-KERNEL")   /* backend has no kernel: never a fallback */        \
  X(NonDeterministicKernel, "R-STRICT-NONDETERMINISTIC")                                      \
  X(InputMismatch, "R-INPUT-MISMATCH")     /* execute() given wrong inputs */                 \
  X(BackendMismatch, "R-BACKEND-MISMATCH") /* plan or context of another backend */           \
  X(UnknownBackend, "R-UNKNOWN-BACKEND")   /* no backend of that name in this binary */       \
  X(MemorySpaceMismatch, "R-MEMORY-SPACE") /* a view of memory its kernel cannot read */      \
  X(KernelFailure, "R-KERNEL-FAILURE")     /* a kernel rejected its data at run time */       \
  X(ImportInvalidModel, "I-INVALID-MODEL") /* not a valid ONNX model (parse, checker) */      \
  X(ImportUnsupported, "I-UNSUPPORTED")    /* op, attribute, dtype or domain not supported */ \
  X(ImportNotStatic, "I-NOT-STATIC")       /* a shape or attribute value unknown at import */ \
  X(DeviceUnavailable, "R-NO-DEVICE")      /* no driver, no device or an unsupported one */   \
  X(DeviceFailure, "R-DEVICE-FAILURE")     /* a device call failed (copy, launch, memory) */  \
  X(OutOfMemory, "R-OUT-OF-MEMORY")        /* a host allocation over the limit or refused */

enum class ErrorCode {
#define VOLTA_ERROR_ENUM(name, text) name,
  VOLTA_ERROR_CODES(VOLTA_ERROR_ENUM)
#undef VOLTA_ERROR_ENUM
};

std::string_view error_code_name(ErrorCode code);

class VoltaError : public std::runtime_error {
 public:
  VoltaError(ErrorCode code, const std::string& message);

  ErrorCode code() const { return code_; }
  // The message without the "[CODE] " prefix that what() carries.
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

[[noreturn]] void fail(ErrorCode code, const std::string& message);

}  // namespace volta
