// Initializers whose data lies in a file beside the model (TensorProto external data, as
// exporters write models over 2 GiB): read from the model's folder only. A location that
// leaves it (absolute, `..`, a symlink out), a missing file, and an offset or length that do
// not fit are refused with the location named, before any tensor is allocated; a model too
// large for protobuf is refused by its size.
#define BOOST_TEST_MODULE onnx_external_data

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

namespace fs = std::filesystem;

// A fresh folder under the temporary directory, removed at the end of the test.
class Folder {
 public:
  Folder() {
    static int count = 0;
    path_ = fs::temp_directory_path() /
            ("volta_external_" + std::to_string(::getpid()) + "_" + std::to_string(count++));
    fs::remove_all(path_);
    fs::create_directories(path_ / "model");
  }
  ~Folder() { fs::remove_all(path_); }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  const fs::path& root() const { return path_; }
  fs::path model_dir() const { return path_ / "model"; }

 private:
  fs::path path_;
};

void write_floats(const fs::path& file, const std::vector<float>& values, int64_t pad = 0) {
  std::ofstream out(file, std::ios::binary);
  const std::string padding(static_cast<size_t>(pad), 'x');
  out.write(padding.data(), static_cast<std::streamsize>(padding.size()));
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
}

// y = x + w, w a [3] f32 initializer whose data the `external_data` entries locate; the model
// is written to the folder's model/ and loaded from there.
Model add_external(const Folder& folder,
                   const std::vector<std::pair<std::string, std::string>>& external_data) {
  pb::ModelProto m = empty_model(13, "external");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), {"x", kFloat, {3}});
  add_io(g->add_output(), {"y", kFloat, {3}});
  pb::NodeProto* n = g->add_node();
  n->set_op_type("Add");
  n->set_name("add");
  n->add_input("x");
  n->add_input("w");
  n->add_output("y");
  pb::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(kFloat);
  w->add_dims(3);
  w->set_data_location(pb::TensorProto::EXTERNAL);
  for (const auto& [key, value] : external_data) {
    auto* entry = w->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  const fs::path file = folder.model_dir() / "model.onnx";
  std::ofstream(file, std::ios::binary) << m.SerializeAsString();
  return Model::load(file);
}

const std::vector<Tensor> kX = {tensor<float>(Shape{3}, {1, 2, 3})};

BOOST_AUTO_TEST_CASE(external_data_is_read_from_the_models_folder_at_its_offset) {
  const Folder folder;
  fs::create_directories(folder.model_dir() / "weights");
  write_floats(folder.model_dir() / "weights" / "w.bin", {10, 20, 30, 40}, 8);
  const Model model =
      add_external(folder, {{"location", "weights/w.bin"}, {"offset", "12"}, {"length", "12"}});
  check_values(run_cpu(model, kX).at(0), {21, 32, 43});
  // Without offset and length: the whole file, which must then be the tensor's 12 bytes.
  write_floats(folder.model_dir() / "whole.bin", {5, 6, 7});
  check_values(run_cpu(add_external(folder, {{"location", "whole.bin"}}), kX).at(0), {6, 8, 10});
}

BOOST_AUTO_TEST_CASE(a_location_that_leaves_the_models_folder_is_refused) {
  const Folder folder;
  write_floats(folder.root() / "outside.bin", {1, 1, 1});
  const std::string absolute = (folder.root() / "outside.bin").string();
  for (const std::string& location :
       {std::string("../outside.bin"), absolute, std::string("sub/../../outside.bin")}) {
    expect_import_error(add_external(folder, {{"location", location}}), kX,
                        ErrorCode::ImportInvalidModel,
                        "location '" + location + "' is refused: external data must be a " +
                            "relative path without '..' inside the model's folder");
  }
  // A symlink in the folder that points out of it.
  fs::create_symlink(folder.root() / "outside.bin", folder.model_dir() / "link.bin");
  expect_import_error(add_external(folder, {{"location", "link.bin"}}), kX,
                      ErrorCode::ImportInvalidModel,
                      "outside the model's folder " + fs::canonical(folder.model_dir()).string() +
                          " (a symlink out is refused)");
}

BOOST_AUTO_TEST_CASE(missing_files_and_bad_ranges_are_refused_before_allocating) {
  const Folder folder;
  write_floats(folder.model_dir() / "w.bin", {1, 2, 3});
  expect_import_error(add_external(folder, {{"location", "nope.bin"}}), kX,
                      ErrorCode::ImportInvalidModel,
                      "initializer 'w''s external data: cannot open");
  expect_import_error(
      add_external(folder, {{"location", "w.bin"}, {"offset", "8"}, {"length", "12"}}), kX,
      ErrorCode::ImportInvalidModel, "offset 8 and length 12 reach past the end of");
  expect_import_error(add_external(folder, {{"location", "w.bin"}, {"length", "8"}}), kX,
                      ErrorCode::ImportInvalidModel,
                      "external data is 8 bytes; its dims and type need 12");
  expect_import_error(add_external(folder, {{"location", "w.bin"}, {"offset", "-4"}}), kX,
                      ErrorCode::ImportInvalidModel, "offset '-4' is not a byte count");
  expect_import_error(add_external(folder, {{"location", "w.bin"}, {"compression", "zip"}}), kX,
                      ErrorCode::ImportInvalidModel,
                      "has the key 'compression'; ONNX defines location, offset, length, checksum");
}

// Protobuf reads at most 2^31 - 1 bytes: 3 GiB of bytes (mapped, never touched) are refused by
// their size, before a parse whose int length would wrap.
BOOST_AUTO_TEST_CASE(a_model_over_2_gib_is_refused_by_its_size) {
  const size_t size = size_t{3} << 30;
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  BOOST_REQUIRE(p != MAP_FAILED);
  try {
    Model::parse(std::string_view(static_cast<const char*>(p), size), "big.onnx");
    BOOST_FAIL("expected I-UNSUPPORTED");
  } catch (const VoltaError& e) {
    BOOST_TEST(std::string(error_code_name(e.code())) == "I-UNSUPPORTED");
    BOOST_TEST(e.message() ==
               "big.onnx is 3221225472 bytes; an ONNX ModelProto holds at most "
               "2^31 - 1 (2 GiB): save the model with its weights as external data");
  }
  ::munmap(p, size);
}

BOOST_AUTO_TEST_CASE(a_model_read_from_bytes_has_no_folder_for_external_data) {
  const Folder folder;
  write_floats(folder.model_dir() / "w.bin", {1, 2, 3});
  add_external(folder, {{"location", "w.bin"}});
  std::ifstream in(folder.model_dir() / "model.onnx", std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  expect_import_error(Model::parse(bytes, "bytes"), kX, ErrorCode::ImportUnsupported,
                      "keeps its data in an external file, and this model was read from bytes");
}

}  // namespace
}  // namespace volta::onnx::test
