// Placeholder: replaced by the importer implementation.
#include "volta/onnx/model.h"
