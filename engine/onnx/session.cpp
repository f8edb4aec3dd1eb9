#include "volta/onnx/session.h"
