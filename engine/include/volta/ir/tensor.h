#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "volta/error.h"
#include "volta/ir/dtype.h"
#include "volta/ir/shape.h"

namespace volta {

// Every buffer Volta hands to a kernel is aligned to a cache line.
inline constexpr size_t kTensorAlignment = 64;

// Where a view's bytes live: a kernel reads and writes only the memory of its backend, and
// refuses a view of another space.
enum class MemorySpace : uint8_t { Host, Device };
std::string_view memory_space_name(MemorySpace space);  // "host", "device"

// Non-owning views: what kernels read and write. `data` is null for an absent optional input.
struct TensorView {
  DType dtype = DType::F32;
  Shape shape;
  void* data = nullptr;
  MemorySpace space = MemorySpace::Host;

  template <class T>
  T* as() const {
    return static_cast<T*>(data);
  }
  int64_t numel() const { return shape.numel(); }
};

struct ConstTensorView {
  DType dtype = DType::F32;
  Shape shape;
  const void* data = nullptr;
  MemorySpace space = MemorySpace::Host;

  ConstTensorView() = default;
  ConstTensorView(DType d, Shape s, const void* p, MemorySpace where = MemorySpace::Host)
      : dtype(d), shape(std::move(s)), data(p), space(where) {}
  ConstTensorView(const TensorView& v)  // NOLINT: a writable view reads as a readable one
      : dtype(v.dtype), shape(v.shape), data(v.data), space(v.space) {}

  template <class T>
  const T* as() const {
    return static_cast<const T*>(data);
  }
  int64_t numel() const { return shape.numel(); }
  bool present() const { return data != nullptr || shape.numel() == 0; }
};

// An owning, contiguous, aligned tensor with value semantics (copies are deep).
class Tensor {
 public:
  Tensor() : Tensor(DType::F32, Shape{0}) {}
  Tensor(DType dtype, Shape shape);  // zero-filled
  // A copy of a host view's elements (written once, by the copy, without a zero fill first).
  static Tensor copy_of(const ConstTensorView& view);

  template <class T>
  static Tensor from(Shape shape, std::span<const T> values);
  template <class T>
  static Tensor from(Shape shape, std::initializer_list<T> values) {
    return from<T>(std::move(shape), std::span<const T>(values.begin(), values.size()));
  }

  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  ~Tensor() = default;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_.numel(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }

  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }
  // Typed access; throws InvalidArgument when T is not the storage type of dtype().
  template <class T>
  T* data_as();
  template <class T>
  const T* data_as() const;

  TensorView view() { return {dtype_, shape_, data()}; }
  ConstTensorView view() const { return {dtype_, shape_, data()}; }

  // Element access through double / int64, for tests, printing and the reference engine.
  double get_double(int64_t i) const;
  int64_t get_int(int64_t i) const;
  void set_double(int64_t i, double v);  // rounds to the dtype (integers: truncation)
  void set_int(int64_t i, int64_t v);    // wraps to the dtype's width; bool: v != 0

  // Bitwise equality of dtype, shape and bytes (NaN payloads compared as bits).
  bool bit_equal(const Tensor& other) const;

 private:
  struct AlignedFree {
    void operator()(std::byte* p) const;
  };
  Tensor(DType dtype, Shape shape, const void* bytes);  // bytes: nbytes() of them, or nullptr
  void check_type(DType requested) const;

  DType dtype_;
  Shape shape_;
  std::unique_ptr<std::byte[], AlignedFree> storage_;
};

namespace detail {
template <class T>
constexpr int dtype_code_of() {
  for (int code = 0; code < kDTypeCount; ++code) {
    const bool stores_t = visit_dtype(static_cast<DType>(code),
                                      []<class U>(TypeTag<U>) { return std::is_same_v<U, T>; });
    if (stores_t) return code;
  }
  return -1;
}
}  // namespace detail

// The dtype whose storage type is T.
template <class T>
constexpr DType dtype_of() {
  constexpr int kCode = detail::dtype_code_of<T>();
  static_assert(kCode >= 0, "no dtype stores this C++ type");
  return static_cast<DType>(kCode);
}

template <class T>
Tensor Tensor::from(Shape shape, std::span<const T> values) {
  Tensor t(dtype_of<T>(), std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel()) {
    fail(ErrorCode::InvalidArgument, "Tensor::from: " + std::to_string(values.size()) +
                                         " values given for shape " + t.shape().str() +
                                         " which holds " + std::to_string(t.numel()));
  }
  std::copy(values.begin(), values.end(), t.data_as<T>());
  return t;
}

template <class T>
T* Tensor::data_as() {
  check_type(dtype_of<T>());
  return reinterpret_cast<T*>(storage_.get());
}
template <class T>
const T* Tensor::data_as() const {
  check_type(dtype_of<T>());
  return reinterpret_cast<const T*>(storage_.get());
}

}  // namespace volta
