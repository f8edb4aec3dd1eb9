#pragma once
// What the language-model training tests share: language_model_training_test trains the tiny
// transformer, fine_tune_test the same model exported as ONNX, on the same bytes, and both
// compare runs by their checkpoint files.

#include <cstdint>
#include <string>
#include <vector>

#include "volta/model/checkpoint.h"

namespace volta::testing {

// Eight copies of one English sentence, about 1 KiB: enough for a small model's loss to fall
// within a few dozen steps.
inline std::vector<uint8_t> training_text() {
  const std::string line =
      "It is a truth universally acknowledged, that a single man in possession of a good "
      "fortune, must be in want of a wife. ";
  std::string all;
  for (int i = 0; i < 8; ++i) all += line;
  return {all.begin(), all.end()};
}

// The checkpoint file of `trainer` (train::LanguageModelTrainer, onnx::FineTuner) once it has
// taken `steps` steps.
template <class Trainer>
std::string checkpoint_file_after(Trainer& trainer, int64_t steps) {
  while (trainer.steps_taken() < steps) trainer.step();
  return serialize_checkpoint(trainer.checkpoint("test"));
}

}  // namespace volta::testing
