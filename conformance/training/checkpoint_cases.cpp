// The checkpoint-round-trip family: checkpoint format v1 read back exactly, by Volta and by the
// Python safetensors package; bad files refused with their CK- code and never modified; saves
// atomic.

#include <fstream>

#include "training_cases.h"
#include "volta/runtime/registry.h"
#include "volta/sha256.h"

namespace volta::conformance::training {
namespace {

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail(ErrorCode::InvalidArgument, "cannot write " + path.string());
}

// A trained checkpoint's bytes (3 steps of the reference run: moments are nonzero).
std::string trained_file(const TrainingSuiteOptions& o) {
  train::LanguageModelTrainer trainer(train::default_run(3), read_data(o), 1, cpu());
  while (trainer.steps_taken() < 3) trainer.step();
  return serialize_checkpoint(trainer.checkpoint(o.engine_commit));
}

CaseOutcome save_load_save(const TrainingSuiteOptions& o) {
  const ScratchDir dir(o, "round-trip");
  const std::string file = trained_file(o);
  const std::filesystem::path path = dir / "a.ckpt";
  save_checkpoint(parse_checkpoint(file).checkpoint, path);
  const LoadedCheckpoint loaded = load_checkpoint(path);
  if (read_file(path) != file) return failed("save(parse(f)) wrote other bytes than f");
  if (serialize_checkpoint(loaded.checkpoint) != file) {
    return failed("serialize(load(f)) differs from f");
  }
  // The state itself: resumed and saved again without a step, the same file.
  const train::LanguageModelTrainer resumed =
      train::LanguageModelTrainer::resume(loaded, read_data(o), 2, cpu());
  if (serialize_checkpoint(resumed.checkpoint(o.engine_commit)) != file) {
    return failed("a trainer resumed from f saves other bytes than f");
  }
  return pass(std::to_string(loaded.checkpoint.tensors.size()) + " tensors, " +
              std::to_string(file.size()) +
              " bytes: save(load(f)) == f, and a trainer resumed "
              "from f saves f");
}

CaseOutcome python_safetensors_reads(const TrainingSuiteOptions& o) {
  std::string why_not;
  const std::optional<std::filesystem::path> python = interop_python(o, why_not);
  if (!python) return skipped(why_not);
  const ScratchDir dir(o, "safetensors");
  const std::string file = trained_file(o);
  write_file(dir / "a.ckpt", file);
  const CliResult r =
      run_program({python->string(), (o.interop_scripts / "read_safetensors.py").string(),
                   (dir / "a.ckpt").string(), "--dump", (dir / "dump.json").string()});
  if (r.exit_code != 0)
    return failed("read_safetensors.py exited " + std::to_string(r.exit_code) + ": " + r.output);
  const std::string dump = read_file(dir / "dump.json");
  // json.dumps(sort_keys=True, separators=(",", ":")): each tensor reads as dtype, sha256, shape.
  const LoadedCheckpoint loaded = parse_checkpoint(file);
  for (const CheckpointTensor& t : loaded.checkpoint.tensors) {
    std::string shape;
    for (const int64_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    const std::string expect = "\"" + t.name + "\":{\"dtype\":\"F32\",\"sha256\":\"" +
                               sha256_hex(std::string_view(
                                   reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size())) +
                               "\",\"shape\":[" + shape + "]}";
    if (dump.find(expect) == std::string::npos) {
      return failed("safetensors read tensor '" + t.name + "' otherwise than Volta wrote it");
    }
  }
  if (dump.find("\"step\":\"3\"") == std::string::npos) {
    return failed("safetensors did not read the metadata step 3");
  }
  return pass("the safetensors package read all " +
              std::to_string(loaded.checkpoint.tensors.size()) +
              " tensors with Volta's dtypes, shapes and bytes (sha256), and the metadata");
}

// A damaged copy of a trained checkpoint, and the code it must be refused with.
struct Damage {
  const char* name;
  const char* code;
  std::string (*apply)(const std::string& file);
};

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) fail(ErrorCode::InvalidArgument, "no '" + from + "' to replace");
  return text.replace(at, from.size(), to);
}

// safetensors' header: 8 bytes of length, then the JSON. Flipping a byte of the last tensor's
// data keeps every structure valid; only its digest disagrees.
std::string corrupt(const std::string& f) {
  std::string out = f;
  out.back() = static_cast<char>(out.back() ^ 0x10);
  return out;
}

constexpr Damage kDamages[] = {
    {"truncated", "CK-TRUNCATED", [](const std::string& f) { return f.substr(0, f.size() - 16); }},
    {"corrupted", "CK-DIGEST-MISMATCH", corrupt},
    {"foreign", "CK-FOREIGN",
     [](const std::string& f) {
       return replace_once(f, "\"format\":\"volta-checkpoint\"", "\"format\":\"safetensors-file\"");
     }},
    {"newer-major", "CK-NEWER-MAJOR",
     [](const std::string& f) {
       return replace_once(f,
                           "\"format_version\":\"" + std::string(kCheckpointFormatVersion) + "\"",
                           "\"format_version\":\"2.0\"");
     }},
    {"wrong-shape", "CK-SHAPE-MISMATCH",
     [](const std::string& f) {
       // The config says d_model 64; a checkpoint claiming 32 has weights of other shapes.
       return replace_once(f, "\\\"d_model\\\":64", "\\\"d_model\\\":32");
     }},
};

CaseOutcome refused_untouched(const TrainingSuiteOptions& o, const Damage& damage) {
  const ScratchDir dir(o, std::string("refuse-") + damage.name);
  const std::string bytes = damage.apply(trained_file(o));
  const std::filesystem::path path = dir / "damaged.ckpt";
  write_file(path, bytes);
  const std::string digest = sha256_hex(bytes);
  std::string message;
  // Every command that reads a checkpoint refuses it; a resume writes nothing.
  const std::vector<std::vector<std::string>> commands = {
      {"eval", "--checkpoint", path.string(), "--data", o.data.string()},
      {"generate", "--checkpoint", path.string(), "--prompt", "The"},
      {"train", "--data", o.data.string(), "--resume", path.string(), "--save",
       (dir / "out.ckpt").string()},
  };
  for (const std::vector<std::string>& args : commands) {
    const CliResult r = run_volta(o, args);
    if (r.exit_code != 1 || r.output.find(damage.code) == std::string::npos) {
      return failed("volta " + args[0] + " on a " + damage.name + " checkpoint exited " +
                    std::to_string(r.exit_code) + " without " + damage.code + ": " + r.output);
    }
    if (message.empty()) message = r.output.substr(0, r.output.find('\n'));
  }
  if (sha256_hex(read_file(path)) != digest) return failed("the refused file was modified");
  if (std::filesystem::exists(dir / "out.ckpt")) {
    return failed("a refused resume wrote its --save file");
  }
  return pass("eval, generate and train --resume refuse it, the file unchanged: " + message);
}

CaseOutcome interrupted_save_keeps_the_previous(const TrainingSuiteOptions& o) {
  const ScratchDir dir(o, "atomic-save");
  const std::string first = trained_file(o);
  const std::filesystem::path path = dir / "a.ckpt";
  write_file(path, first);
  train::LanguageModelTrainer trainer(train::default_run(3), read_data(o), 1, cpu());
  trainer.step();
  try {
    save_checkpoint(trainer.checkpoint(o.engine_commit), path,
                    {.before_rename = [](const std::filesystem::path&) {
                      throw std::runtime_error("killed before the rename");
                    }});
    return failed("the planted kill before the rename did not stop the save");
  } catch (const std::runtime_error&) {
  }
  if (read_file(path) != first) return failed("an interrupted save changed the previous file");
  int files = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator(path.parent_path())) {
    ++files;
  }
  if (files != 1) return failed("an interrupted save left a temporary file behind");
  return pass(
      "a save stopped after its temporary is written and synced, before the rename, "
      "leaves the previous checkpoint byte for byte and no temporary");
}

}  // namespace

void checkpoint_cases(const TrainingSuiteOptions& options, std::vector<TrainingCase>& out) {
  const std::string family(kCheckpointFamily);
  out.push_back({family, "round-trip:save-load-save", "steps=3",
                 [options] { return save_load_save(options); }});
  out.push_back({family, "interop:safetensors-python", "steps=3",
                 [options] { return python_safetensors_reads(options); },
                 "the interop venv (scripts/ci/bootstrap.sh)"});
  for (const Damage& d : kDamages) {
    out.push_back({family, std::string("refuse:") + d.name, std::string("code=") + d.code,
                   [options, &d] { return refused_untouched(options, d); }});
  }
  out.push_back({family, "atomic-save:interrupted", "steps=3",
                 [options] { return interrupted_save_keeps_the_previous(options); }});
}

}  // namespace volta::conformance::training
