// Fine-tuning an imported ONNX causal LM (fine_tune.h): the interface check, the loss appended
// to the imported forward, and checkpoints that name the model they fine-tune.
#include "volta/onnx/fine_tune.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "volta/error.h"
#include "volta/runtime/runtime.h"
#include "volta/sha256.h"

namespace volta::onnx {
namespace {

[[noreturn]] void refuse(const std::string& what) { fail(ErrorCode::InvalidArgument, what); }

std::string dims_text(const std::vector<int64_t>& dims, bool has_shape) {
  if (!has_shape) return "of unknown shape";
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    out += (i == 0 ? "" : ",") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
  }
  return out + "]";
}

std::string names_of(const std::vector<ValueSpec>& specs) {
  std::string out;
  for (const ValueSpec& s : specs) out += (out.empty() ? "'" : ", '") + s.name + "'";
  return out;
}

constexpr std::string_view kTokensNeeded =
    "a causal LM takes one input, int64 tokens [batch, seq] of static sizes";

}  // namespace

CausalLmShape declared_causal_lm(const Model& model) {
  const std::vector<ValueSpec>& inputs = model.inputs();
  if (inputs.size() != 1) {
    refuse("the model has " + std::to_string(inputs.size()) + " inputs (" + names_of(inputs) +
           "); " + std::string(kTokensNeeded));
  }
  const ValueSpec& in = inputs[0];
  const bool static_rows = in.has_shape && in.dims.size() == 2 &&
                           std::ranges::all_of(in.dims, [](int64_t d) { return d > 0; });
  if (in.dtype != DType::I64 || !static_rows) {
    refuse("model input '" + in.name + "' is " + in.type + " " + dims_text(in.dims, in.has_shape) +
           "; " + std::string(kTokensNeeded));
  }
  const std::vector<ValueSpec>& outputs = model.outputs();
  if (outputs.size() != 1) {
    refuse("the model has " + std::to_string(outputs.size()) + " outputs (" + names_of(outputs) +
           "); a causal LM gives one, float logits [batch, seq, vocab]");
  }
  return {.tokens = in.name, .logits = outputs[0].name, .batch = in.dims[0], .seq = in.dims[1]};
}

namespace {

// The imported logits must be [batch, seq, vocab]: the vocab is read from them.
void check_logits(const Graph& graph, CausalLmShape& shape) {
  const Value& logits = graph.value(graph.outputs()[0]);
  const std::vector<int64_t>& d = logits.shape.dims();
  if (!kFloatTypes.contains(logits.dtype) || d.size() != 3 || d[0] != shape.batch ||
      d[1] != shape.seq || d[2] <= 0) {
    refuse("model output '" + shape.logits + "' is " + std::string(dtype_name(logits.dtype)) + " " +
           logits.shape.str() + " for tokens [" + std::to_string(shape.batch) + "," +
           std::to_string(shape.seq) + "]; a causal LM gives float logits [batch, seq, vocab] = [" +
           std::to_string(shape.batch) + "," + std::to_string(shape.seq) + ",vocab]");
  }
  shape.vocab = d[2];
}

// The mean cross-entropy of every position's logits against its target, as the built-in
// model's training graph computes it (model::training_graph): Reshape is a view, no copy.
ValueId append_loss(Graph& g, const CausalLmShape& shape) {
  const ValueId logits = g.outputs()[0];
  const ValueId targets =
      g.add_input(g.unique_name("targets"), DType::I64, Shape{shape.batch, shape.seq});
  const int64_t positions = shape.batch * shape.seq;
  const ValueId scores =
      g.add(OpKind::Reshape, {logits}, {{"shape", std::vector<int64_t>{positions, shape.vocab}}},
            g.unique_name("scores"));
  const ValueId labels =
      g.add(OpKind::Reshape, {targets}, {{"shape", std::vector<int64_t>{positions}}},
            g.unique_name("labels"));
  const ValueId loss = g.add(OpKind::SoftmaxCrossEntropyLoss, {scores, labels},
                             {{"reduction", std::string("mean")}}, g.unique_name("loss"));
  g.set_outputs({loss});
  return loss;
}

[[noreturn]] void mismatch(const std::string& detail) {
  throw CheckpointError("CK-MODEL-MISMATCH", detail);
}

}  // namespace

FineTuneModel FineTuneModel::load(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) refuse("cannot read the model '" + file.string() + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) refuse("reading the model '" + file.string() + "' failed");
  std::string data = std::move(bytes).str();
  Model model = Model::parse(data, file.string());
  std::string sha256 = sha256_hex(data);
  return {.name = file.filename().string(),
          .sha256 = std::move(sha256),
          .bytes = std::move(data),
          .model = std::move(model)};
}

FineTuneRun default_fine_tune_run(int64_t steps, int64_t seq) {
  const train::LanguageModelRun defaults = train::default_run(steps);
  return {.optimizer = defaults.optimizer,
          .order = {.kind = train::BatchOrder::Kind::Sequential, .stride = seq}};
}

FineTuner::FineTuner(const FineTuneModel& model, const FineTuneRun& run, std::vector<uint8_t> data,
                     int threads, const Backend& backend)
    : run_(run),
      shape_(declared_causal_lm(model.model)),
      model_name_(model.name),
      model_sha256_(model.sha256),
      data_(std::move(data)) {
  run_.optimizer.validate();
  ImportOptions options;
  options.evaluator = make_backend_evaluator(backend, DeterminismMode::Strict);
  options.trainable = true;
  const Tensor tokens(DType::I64, Shape{shape_.batch, shape_.seq});
  ImportedGraph imported = model.model.import_for(std::span(&tokens, 1), options);
  if (!imported.value_inputs.empty()) {
    refuse("model input '" + shape_.tokens +
           "' feeds a shape or attribute argument, so each token value would need its own plan; "
           "a causal LM's tokens are data only");
  }
  check_logits(imported.graph, shape_);
  for (const ValueId s : imported.graph.states()) {
    const std::string& name = imported.graph.value(s).name;
    if (name.starts_with(kOptimizerTensorPrefix)) {
      refuse("initializer '" + name + "' is named with the prefix '" +
             std::string(kOptimizerTensorPrefix) +
             "' that checkpoints reserve for optimizer state");
    }
  }
  train::check_token_data(data_, shape_.seq, shape_.vocab);
  train::window_start(run_.order, static_cast<int64_t>(data_.size()), shape_.batch, 0, 0);
  data_sha256_ = train::data_sha256(data_);
  const ValueId loss = append_loss(imported.graph, shape_);
  session_ = std::make_unique<train::TrainingSession>(
      imported.graph, loss, std::move(imported.initial_states),
      train::TrainingOptions{.optimizer = run_.optimizer, .threads = threads}, backend,
      DeterminismMode::Strict);
}

FineTuner::~FineTuner() = default;
FineTuner::FineTuner(FineTuner&&) noexcept = default;
FineTuner& FineTuner::operator=(FineTuner&&) noexcept = default;

void check_fine_tune_model(const FineTuneModel& model, const LoadedCheckpoint& checkpoint) {
  const std::map<std::string, std::string>& metadata = checkpoint.checkpoint.metadata;
  const auto sha256 = metadata.find(std::string(kFineTuneModelSha256Key));
  if (sha256 == metadata.end()) {
    mismatch("the checkpoint fine-tunes no ONNX model (it has no \"" +
             std::string(kFineTuneModelSha256Key) + "\" metadata" +
             (metadata.contains("config") ? "; it is the built-in model's, named by its \"config\""
                                          : "") +
             "); the model given is '" + model.name + "'");
  }
  if (sha256->second != model.sha256) {
    const auto name = metadata.find(std::string(kFineTuneModelKey));
    mismatch("the checkpoint fine-tunes '" +
             (name == metadata.end() ? std::string("?") : name->second) + "' (sha256 " +
             sha256->second + "); the model given is '" + model.name + "' (sha256 " + model.sha256 +
             ")");
  }
}

FineTuner FineTuner::resume(const FineTuneModel& model, const LoadedCheckpoint& checkpoint,
                            std::vector<uint8_t> data, int threads, const Backend& backend) {
  check_fine_tune_model(model, checkpoint);
  const train::ResumePoint point = train::read_resume_point(checkpoint, data);
  FineTuner tuner(model, {.optimizer = point.optimizer, .order = point.order}, std::move(data),
                  threads, backend);
  train::restore_training_tensors(*tuner.session_, checkpoint.checkpoint,
                                  train::optimizer_name(point.optimizer.kind));
  tuner.session_->resume_at(point.steps);
  return tuner;
}

train::StepRecord FineTuner::step() {
  return train::step_on_next_batch(*session_, data_, run_.order, run_.optimizer.schedule,
                                   shape_.batch, shape_.seq, shape_.vocab);
}

int64_t FineTuner::steps_taken() const { return session_->steps_taken(); }

const ExecutionPlan& FineTuner::plan() const { return session_->plan(); }

std::string FineTuner::config_json() const {
  // Keys sorted, no whitespace; the file name is left to the run record's model column (it
  // would need escaping here, and the sha256 names the model exactly).
  return "{\"batch\":" + std::to_string(shape_.batch) + ",\"model_sha256\":\"" + model_sha256_ +
         "\",\"seq\":" + std::to_string(shape_.seq) + ",\"vocab\":" + std::to_string(shape_.vocab) +
         "}";
}

Checkpoint FineTuner::checkpoint(std::string_view engine_commit) const {
  Checkpoint c;
  c.tensors = train::training_tensors(*session_);
  c.metadata =
      train::training_metadata(*session_, run_.optimizer, run_.order, data_, engine_commit);
  c.metadata[std::string(kFineTuneModelKey)] = model_name_;
  c.metadata[std::string(kFineTuneModelSha256Key)] = model_sha256_;
  c.metadata["seed"] = std::to_string(run_.order.seed);
  return c;
}

std::map<std::string, Tensor> FineTuner::parameters() const {
  std::map<std::string, Tensor> out;
  for (const std::string& name : session_->parameter_names()) out[name] = session_->state(name);
  return out;
}

}  // namespace volta::onnx
