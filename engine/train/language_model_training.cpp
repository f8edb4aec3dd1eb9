#include "volta/train/language_model_training.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>

#include "../model/checkpoint_json.h"
#include "volta/error.h"
#include "volta/ir/printer.h"
#include "volta/sha256.h"
#include "volta/version.h"

namespace volta::train {
namespace {

// Metadata values are flat JSON objects whose values are strings: checkpoint_json's strict
// subset (no floats) reads them, and a double written with 17 significant digits reads back
// to the same bits.
using Entries = std::map<std::string, std::string>;

std::string exact(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

std::string flat_json(const Entries& entries) {
  std::string out = "{";
  for (const auto& [key, value] : entries) {
    if (out.size() > 1) out += ',';
    checkpoint_json::append_quoted(out, key);
    out += ':';
    checkpoint_json::append_quoted(out, value);
  }
  return out + "}";
}

[[noreturn]] void refuse(std::string_view what, const std::string& detail) {
  fail(ErrorCode::InvalidArgument, std::string(what) + ": " + detail);
}

Entries parse_flat_json(std::string_view text, std::string_view what) {
  Entries out;
  for (const checkpoint_json::Member& m : checkpoint_json::parse_object(text)) {
    const auto* value = std::get_if<std::string>(&m.value.data);
    if (value == nullptr) refuse(what, "\"" + m.key + "\" is not a string");
    out[m.key] = *value;
  }
  return out;
}

// Reads keys of a flat object, refusing unknown ones at the end.
class EntryReader {
 public:
  EntryReader(Entries entries, std::string_view what) : entries_(std::move(entries)), what_(what) {}
  const std::string* find(const std::string& key) {
    read_.insert(key);
    const auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
  }
  void read(const std::string& key, double& into) {
    if (const std::string* text = find(key)) {
      char* end = nullptr;
      into = std::strtod(text->c_str(), &end);
      if (text->empty() || *end != '\0') refuse(what_, "\"" + key + "\" is not a number");
    }
  }
  void read(const std::string& key, int64_t& into) {
    if (const std::string* text = find(key)) {
      char* end = nullptr;
      into = std::strtoll(text->c_str(), &end, 10);
      if (text->empty() || *end != '\0') refuse(what_, "\"" + key + "\" is not an integer");
    }
  }
  void read(const std::string& key, uint64_t& into) {
    if (const std::string* text = find(key)) {
      char* end = nullptr;
      into = std::strtoull(text->c_str(), &end, 10);
      if (text->empty() || text->front() == '-' || *end != '\0') {
        refuse(what_, "\"" + key + "\" is not a non-negative integer");
      }
    }
  }
  void read(const std::string& key, bool& into) {
    if (const std::string* text = find(key)) {
      if (*text != "true" && *text != "false") refuse(what_, "\"" + key + "\" is not true/false");
      into = *text == "true";
    }
  }
  void finish() const {
    for (const auto& [key, value] : entries_) {
      if (!read_.contains(key)) refuse(what_, "unknown key \"" + key + "\"");
    }
  }

 private:
  Entries entries_;
  std::string what_;
  std::set<std::string> read_;
};

std::string bool_text(bool b) { return b ? "true" : "false"; }

[[noreturn]] void refuse_checkpoint(std::string_view code, const std::string& detail) {
  throw CheckpointError(code, detail);
}

// Runs `read`, turning its refusal into CK-BAD-METADATA naming the entry.
template <typename Read>
auto read_metadata(const std::string& key, Read read) {
  try {
    return read();
  } catch (const CheckpointError&) {
    throw;
  } catch (const VoltaError& e) {
    refuse_checkpoint("CK-BAD-METADATA", "metadata \"" + key + "\": " + e.what());
  }
}

}  // namespace

std::string data_sha256(const std::vector<uint8_t>& data) {
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
}

std::string data_cursor_to_json(const DataCursor& c) {
  return flat_json({{"data_bytes", std::to_string(c.data_bytes)},
                    {"data_sha256", c.data_sha256},
                    {"next_step", std::to_string(c.next_step)},
                    {"order", batch_order_name(c.order.kind)},
                    {"seed", std::to_string(c.order.seed)},
                    {"stride", std::to_string(c.order.stride)}});
}

DataCursor data_cursor_from_json(std::string_view json) {
  EntryReader r(parse_flat_json(json, "data_cursor"), "data_cursor");
  DataCursor c;
  if (const std::string* order = r.find("order")) c.order.kind = parse_batch_order(*order);
  r.read("stride", c.order.stride);
  r.read("seed", c.order.seed);
  r.read("next_step", c.next_step);
  r.read("data_bytes", c.data_bytes);
  if (const std::string* digest = r.find("data_sha256")) c.data_sha256 = *digest;
  r.finish();
  return c;
}

const std::string& required_metadata(const LoadedCheckpoint& checkpoint, const std::string& key) {
  const auto it = checkpoint.checkpoint.metadata.find(key);
  if (it == checkpoint.checkpoint.metadata.end()) {
    refuse_checkpoint("CK-BAD-METADATA",
                      "the checkpoint has no \"" + key +
                          "\" metadata; a training checkpoint records its model, step, "
                          "optimizer_hyperparameters and data_cursor");
  }
  return it->second;
}

ResumePoint read_resume_point(const LoadedCheckpoint& checkpoint,
                              const std::vector<uint8_t>& data) {
  ResumePoint point;
  point.optimizer = read_metadata("optimizer_hyperparameters", [&] {
    return optimizer_from_json(required_metadata(checkpoint, "optimizer_hyperparameters"));
  });
  const DataCursor cursor = read_metadata("data_cursor", [&] {
    return data_cursor_from_json(required_metadata(checkpoint, "data_cursor"));
  });
  point.order = cursor.order;
  point.steps = cursor.next_step;
  const std::string& step = required_metadata(checkpoint, "step");
  if (step != std::to_string(cursor.next_step)) {
    refuse_checkpoint("CK-BAD-METADATA", "metadata step " + step +
                                             " differs from the data cursor's next step " +
                                             std::to_string(cursor.next_step));
  }
  const std::string given = data_sha256(data);
  if (given != cursor.data_sha256) {
    refuse_checkpoint("CK-DATA-MISMATCH",
                      "the checkpoint was trained on data of " + std::to_string(cursor.data_bytes) +
                          " bytes with sha256 " + cursor.data_sha256 + "; the data given holds " +
                          std::to_string(data.size()) + " bytes with sha256 " + given);
  }
  return point;
}

std::map<std::string, std::string> training_metadata(const TrainingSession& session,
                                                     const OptimizerConfig& optimizer,
                                                     const BatchOrder& order,
                                                     const std::vector<uint8_t>& data,
                                                     std::string_view engine_commit) {
  const int64_t steps = session.steps_taken();
  const DataCursor cursor{.order = order,
                          .next_step = steps,
                          .data_bytes = static_cast<int64_t>(data.size()),
                          .data_sha256 = data_sha256(data)};
  return {{"step", std::to_string(steps)},
          {"optimizer", optimizer_name(optimizer.kind)},
          {"optimizer_hyperparameters", optimizer_to_json(optimizer)},
          {"data_cursor", data_cursor_to_json(cursor)},
          {"graph_hash", hash_hex(session.plan().ir_hash)},
          {"engine_commit", std::string(engine_commit)},
          {"engine_version", std::string(kVersion)}};
}

std::vector<CheckpointTensor> training_tensors(const TrainingSession& session) {
  std::vector<CheckpointTensor> tensors;
  for (const std::string& name : session.parameter_names()) {
    tensors.push_back(checkpoint_tensor(name, session.state(name)));
  }
  for (const std::string& name : session.optimizer_state_names()) {
    tensors.push_back(
        checkpoint_tensor(std::string(kOptimizerTensorPrefix) + name, session.state(name)));
  }
  return tensors;
}

void restore_training_tensors(TrainingSession& session, const Checkpoint& checkpoint,
                              std::string_view optimizer_name) {
  std::map<std::string, const CheckpointTensor*> parameters;
  std::map<std::string, const CheckpointTensor*> moments;
  for (const CheckpointTensor& t : checkpoint.tensors) {
    if (t.name.starts_with(kOptimizerTensorPrefix)) {
      moments[t.name.substr(kOptimizerTensorPrefix.size())] = &t;
    } else {
      parameters[t.name] = &t;
    }
  }
  const auto refuse_extra = [](const std::map<std::string, const CheckpointTensor*>& given,
                               const std::vector<std::string>& expected, const std::string& what) {
    for (const auto& [name, tensor] : given) {
      if (std::ranges::find(expected, name) == expected.end()) {
        refuse_checkpoint("CK-SHAPE-MISMATCH", "tensor \"" + tensor->name + "\" is " + what);
      }
    }
  };
  const std::vector<std::string> parameter_names = session.parameter_names();
  const std::vector<std::string> moment_names = session.optimizer_state_names();
  refuse_extra(parameters, parameter_names, "no trainable parameter of the model");
  refuse_extra(moments, moment_names, "no state of " + std::string(optimizer_name));
  const auto restore = [&](const std::map<std::string, const CheckpointTensor*>& given,
                           const std::string& name, const std::string& missing) {
    const auto it = given.find(name);
    if (it == given.end()) refuse_checkpoint("CK-SHAPE-MISMATCH", missing);
    try {
      session.restore(name, tensor_of(*it->second));
    } catch (const CheckpointError&) {
      throw;
    } catch (const VoltaError& e) {
      refuse_checkpoint("CK-SHAPE-MISMATCH", e.message());
    }
  };
  for (const std::string& name : parameter_names) {
    restore(parameters, name,
            "the checkpoint has no tensor \"" + name + "\", a trainable parameter of the model");
  }
  for (const std::string& name : moment_names) {
    restore(moments, name,
            "the checkpoint has no optimizer tensor \"" + std::string(kOptimizerTensorPrefix) +
                name + "\", which " + std::string(optimizer_name) + " needs");
  }
}

LanguageModelRun default_run(int64_t steps) {
  LanguageModelRun run;
  run.optimizer.kind = OptimizerConfig::Kind::AdamW;
  run.optimizer.schedule = {.kind = Schedule::Kind::WarmupCosine,
                            .base_lr = 3e-3,
                            .step_size = std::max<int64_t>(1, steps / 3),  // for --schedule step
                            .total_steps = steps,
                            .warmup_steps = std::max<int64_t>(1, steps / 10),
                            .min_lr = 3e-3 / 10};
  // One step leaves no room to warm up: a constant rate then.
  if (steps < 2) run.optimizer.schedule.kind = Schedule::Kind::Constant;
  run.optimizer.weight_decay = 0.01;
  run.optimizer.clip_norm = 1.0;
  run.order = {.kind = BatchOrder::Kind::Sequential, .stride = run.model.seq};
  return run;
}

std::string optimizer_to_json(const OptimizerConfig& o) {
  Entries e = {{"kind", optimizer_name(o.kind)},
               {"schedule", schedule_name(o.schedule.kind)},
               {"base_lr", exact(o.schedule.base_lr)},
               {"min_lr", exact(o.schedule.min_lr)},
               {"step_size", std::to_string(o.schedule.step_size)},
               {"gamma", exact(o.schedule.gamma)},
               {"total_steps", std::to_string(o.schedule.total_steps)},
               {"warmup_steps", std::to_string(o.schedule.warmup_steps)},
               {"momentum", exact(o.momentum)},
               {"dampening", exact(o.dampening)},
               {"nesterov", bool_text(o.nesterov)},
               {"beta1", exact(o.beta1)},
               {"beta2", exact(o.beta2)},
               {"epsilon", exact(o.epsilon)},
               {"weight_decay", exact(o.weight_decay)}};
  if (o.clip_norm) e["clip_norm"] = exact(*o.clip_norm);
  return flat_json(e);
}

OptimizerConfig optimizer_from_json(std::string_view json) {
  EntryReader r(parse_flat_json(json, "optimizer"), "optimizer");
  OptimizerConfig o;
  if (const std::string* kind = r.find("kind")) o.kind = parse_optimizer_kind(*kind);
  if (const std::string* kind = r.find("schedule")) {
    o.schedule.kind = parse_schedule_kind(*kind);
  }
  r.read("base_lr", o.schedule.base_lr);
  r.read("min_lr", o.schedule.min_lr);
  r.read("step_size", o.schedule.step_size);
  r.read("gamma", o.schedule.gamma);
  r.read("total_steps", o.schedule.total_steps);
  r.read("warmup_steps", o.schedule.warmup_steps);
  r.read("momentum", o.momentum);
  r.read("dampening", o.dampening);
  r.read("nesterov", o.nesterov);
  r.read("beta1", o.beta1);
  r.read("beta2", o.beta2);
  r.read("epsilon", o.epsilon);
  r.read("weight_decay", o.weight_decay);
  if (r.find("clip_norm") != nullptr) {
    double clip = 0;
    r.read("clip_norm", clip);
    o.clip_norm = clip;
  }
  r.finish();
  o.validate();
  return o;
}

LanguageModelTrainer::LanguageModelTrainer(const LanguageModelRun& run, std::vector<uint8_t> data,
                                           int threads, const Backend& backend)
    : run_(run), data_(std::move(data)) {
  run_.model.validate();
  run_.optimizer.validate();
  check_token_data(data_, run_.model.seq, run_.model.vocab);
  window_start(run_.order, static_cast<int64_t>(data_.size()), run_.model.batch, 0, 0);
  data_sha256_ = train::data_sha256(data_);
  const model::LanguageModelGraph forward = model::training_graph(run_.model);
  session_ = std::make_unique<TrainingSession>(
      forward.graph, forward.output,
      model::bind_parameters(forward.graph, model::initial_parameters(run_.model)),
      TrainingOptions{.optimizer = run_.optimizer, .threads = threads}, backend,
      DeterminismMode::Strict);
}

LanguageModelTrainer LanguageModelTrainer::resume(const LoadedCheckpoint& checkpoint,
                                                  std::vector<uint8_t> data, int threads,
                                                  const Backend& backend) {
  LanguageModelRun run;
  run.model = read_metadata("config", [&] {
    return model::TransformerConfig::from_json(required_metadata(checkpoint, "config"));
  });
  const ResumePoint point = read_resume_point(checkpoint, data);
  run.optimizer = point.optimizer;
  run.order = point.order;
  LanguageModelTrainer trainer(run, std::move(data), threads, backend);
  restore_training_tensors(*trainer.session_, checkpoint.checkpoint,
                           optimizer_name(run.optimizer.kind));
  trainer.session_->resume_at(point.steps);
  return trainer;
}

StepRecord step_on_next_batch(TrainingSession& session, const std::vector<uint8_t>& data,
                              const BatchOrder& order, const Schedule& schedule, int64_t batch,
                              int64_t seq, int64_t vocab) {
  const int64_t s = session.steps_taken();
  TokenBatch windows = make_batch(data, order, batch, seq, vocab, s);
  const Tensor inputs[] = {std::move(windows.tokens), std::move(windows.targets)};
  StepRecord record;
  record.step = s + 1;
  record.learning_rate = schedule.learning_rate(s + 1);
  record.loss = session.step(inputs);
  record.gradient_norm = session.last_gradient_norm();
  return record;
}

StepRecord LanguageModelTrainer::step() {
  const model::TransformerConfig& m = run_.model;
  return step_on_next_batch(*session_, data_, run_.order, run_.optimizer.schedule, m.batch, m.seq,
                            m.vocab);
}

int64_t LanguageModelTrainer::steps_taken() const { return session_->steps_taken(); }

std::map<std::string, Tensor> LanguageModelTrainer::parameters() const {
  std::map<std::string, Tensor> out;
  for (const std::string& name : session_->parameter_names()) out[name] = session_->state(name);
  return out;
}

Checkpoint LanguageModelTrainer::checkpoint(std::string_view engine_commit) const {
  Checkpoint c;
  c.tensors = training_tensors(*session_);
  c.metadata = training_metadata(*session_, run_.optimizer, run_.order, data_, engine_commit);
  c.metadata["config"] = run_.model.to_json();
  c.metadata["seed"] = std::to_string(run_.model.seed);
  return c;
}

}  // namespace volta::train
