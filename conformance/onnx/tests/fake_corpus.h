#pragma once
// A tiny ONNX backend test corpus written with the ONNX library's protobuf types, in the
// layout of libonnx-testdata (FOLDER/TEST/model.onnx + test_data_set_N/{input,output}_K.pb),
// so the onnx suite's tests need neither Python nor the real package. Removed with the object.

#include <onnx/onnx_pb.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "volta/conformance/onnx_corpus.h"
#include "volta/conformance/onnx_expectations.h"

namespace volta::conformance {

// For Boost.Test messages (found by argument-dependent lookup).
inline std::ostream& operator<<(std::ostream& os, Outcome o) { return os << outcome_name(o); }
inline std::ostream& operator<<(std::ostream& os, OnnxCategory c) {
  return os << onnx_category_name(c);
}

}  // namespace volta::conformance

namespace volta::conformance::testing {

namespace pb = ::onnx;

// One float or int64 tensor for a .pb file.
struct PbTensor {
  int elem_type = pb::TensorProto::FLOAT;
  std::vector<int64_t> dims;
  std::vector<float> floats = {};
  std::vector<int64_t> ints = {};
};

class FakeCorpus {
 public:
  FakeCorpus() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "volta-onnx-corpus-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
    for (std::string_view folder : kOnnxFolders)
      std::filesystem::create_directories(root_ / folder);
  }
  ~FakeCorpus() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  FakeCorpus(const FakeCorpus&) = delete;
  FakeCorpus& operator=(const FakeCorpus&) = delete;

  const std::filesystem::path& root() const { return root_; }

  // A model whose nodes have these op types (chained x -> ... -> y; for discovery only).
  std::filesystem::path add_model(const std::string& folder, const std::string& name,
                                  const std::vector<std::string>& ops, int64_t opset = 13) {
    pb::ModelProto m;
    pb::GraphProto* g = m.mutable_graph();
    g->set_name(name);
    std::string value = "x";
    for (size_t i = 0; i < ops.size(); ++i) {
      pb::NodeProto* n = g->add_node();
      n->set_op_type(ops[i]);
      n->add_input(value);
      value = i + 1 == ops.size() ? "y" : "v" + std::to_string(i);
      n->add_output(value);
    }
    add_io(g->add_input(), "x", pb::TensorProto::FLOAT, {2, 3});
    add_io(g->add_output(), "y", pb::TensorProto::FLOAT, {2, 3});
    return write_model(folder, name, m, opset);
  }

  // y = OP(x) over [2, 3] tensors of `elem_type`.
  std::filesystem::path add_unary(const std::string& folder, const std::string& name,
                                  const std::string& op, int elem_type = pb::TensorProto::FLOAT,
                                  int64_t opset = 13) {
    pb::ModelProto m;
    pb::GraphProto* g = m.mutable_graph();
    g->set_name(name);
    pb::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->add_input("x");
    n->add_output("y");
    add_io(g->add_input(), "x", elem_type, {2, 3});
    add_io(g->add_output(), "y", elem_type, {2, 3});
    return write_model(folder, name, m, opset);
  }

  void add_data_set(const std::filesystem::path& test_dir, int index,
                    const std::vector<PbTensor>& inputs, const std::vector<PbTensor>& outputs) {
    const std::filesystem::path dir = test_dir / ("test_data_set_" + std::to_string(index));
    std::filesystem::create_directories(dir);
    for (size_t k = 0; k < inputs.size(); ++k) {
      write_tensor(dir / ("input_" + std::to_string(k) + ".pb"), inputs[k]);
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      write_tensor(dir / ("output_" + std::to_string(k) + ".pb"), outputs[k]);
    }
  }

  static void write_file(const std::filesystem::path& file, const std::string& bytes) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << bytes;
  }

 private:
  static void add_io(pb::ValueInfoProto* v, const std::string& name, int elem_type,
                     const std::vector<int64_t>& dims) {
    v->set_name(name);
    pb::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem_type);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  }

  std::filesystem::path write_model(const std::string& folder, const std::string& name,
                                    pb::ModelProto& m, int64_t opset) {
    m.set_ir_version(8);
    pb::OperatorSetIdProto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    std::filesystem::path dir = root_ / folder / name;
    write_file(dir / "model.onnx", m.SerializeAsString());
    return dir;
  }

  static void write_tensor(const std::filesystem::path& file, const PbTensor& t) {
    pb::TensorProto p;
    p.set_data_type(t.elem_type);
    for (int64_t d : t.dims) p.add_dims(d);
    for (float f : t.floats) p.add_float_data(f);
    for (int64_t i : t.ints) {
      if (t.elem_type == pb::TensorProto::INT64) {
        p.add_int64_data(i);
      } else {
        p.add_int32_data(static_cast<int32_t>(i));
      }
    }
    write_file(file, p.SerializeAsString());
  }

  std::filesystem::path root_;
};

}  // namespace volta::conformance::testing
