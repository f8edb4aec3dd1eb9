#include "volta/ir/tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "size_limit.h"
#include "volta/ir/host_memory.h"

namespace volta {
namespace {

std::byte* allocate(const Tensor& tensor) {
  return allocate_host(static_cast<int64_t>(tensor.nbytes()), kTensorAlignment, [&] {
    return "a " + tensor.shape().str() + " " + std::string(dtype_name(tensor.dtype())) + " tensor";
  });
}

}  // namespace

std::string_view memory_space_name(MemorySpace space) {
  return space == MemorySpace::Host ? "host" : "device";
}

void Tensor::AlignedFree::operator()(std::byte* p) const { std::free(p); }

Tensor::Tensor(DType dtype, Shape shape) : Tensor(dtype, std::move(shape), nullptr) {}

// Filled once: with `bytes` when given, else zeroed (a tensor never exposes another's bytes).
Tensor::Tensor(DType dtype, Shape shape, const void* bytes)
    : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_.dims()) {
    if (d < 0) {
      fail(ErrorCode::InvalidArgument, "Tensor: negative dimension in shape " + shape_.str());
    }
  }
  if (!bounded_numel(shape_.dims())) {
    fail(ErrorCode::InvalidArgument,
         "Tensor: shape " + shape_.str() + " has more than 2^48 elements, Volta's limit");
  }
  storage_.reset(allocate(*this));
  if (nbytes() == 0) return;
  if (bytes != nullptr) {
    std::memcpy(storage_.get(), bytes, nbytes());
  } else {
    std::memset(storage_.get(), 0, nbytes());
  }
}

Tensor Tensor::copy_of(const ConstTensorView& view) {
  if (view.space != MemorySpace::Host) {
    fail(ErrorCode::MemorySpaceMismatch,
         "Tensor::copy_of: the view is in device memory; a backend exports it to the host");
  }
  if (view.data == nullptr && view.numel() != 0) {
    fail(ErrorCode::InvalidArgument,
         "Tensor::copy_of: a view of " + view.shape.str() + " without data");
  }
  return Tensor(view.dtype, view.shape, view.data);
}

Tensor::Tensor(const Tensor& other) : Tensor(other.dtype_, other.shape_, other.data()) {}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}

void Tensor::check_type(DType requested) const {
  if (requested != dtype_) {
    fail(ErrorCode::InvalidArgument, "Tensor of dtype " + std::string(dtype_name(dtype_)) +
                                         " accessed as " + std::string(dtype_name(requested)));
  }
}

double Tensor::get_double(int64_t i) const {
  return visit_dtype(dtype_, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    return static_cast<double>(reinterpret_cast<const T*>(storage_.get())[i]);
  });
}

int64_t Tensor::get_int(int64_t i) const {
  return visit_dtype(dtype_, [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    const T value = reinterpret_cast<const T*>(storage_.get())[i];
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return static_cast<int64_t>(static_cast<float>(value));
    } else {
      return static_cast<int64_t>(value);  // u64: wraps, as set_int does
    }
  });
}

void Tensor::set_double(int64_t i, double v) {
  visit_dtype(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = reinterpret_cast<T*>(storage_.get());
    if constexpr (std::is_same_v<T, bool>) {
      p[i] = v != 0.0;
    } else {
      p[i] = static_cast<T>(v);  // the 16-bit floats round once, from the double
    }
  });
}

void Tensor::set_int(int64_t i, int64_t v) {
  visit_dtype(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = reinterpret_cast<T*>(storage_.get());
    if constexpr (std::is_same_v<T, bool>) {
      p[i] = v != 0;
    } else if constexpr (std::is_integral_v<T>) {
      // Wraps to the width: the conversion to an unsigned type is modular, and from it to a
      // signed type of the same width is too (C++20).
      p[i] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(v)));
    } else {
      p[i] = static_cast<T>(v);
    }
  });
}

bool Tensor::bit_equal(const Tensor& other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ &&
         (nbytes() == 0 || std::memcmp(storage_.get(), other.storage_.get(), nbytes()) == 0);
}

}  // namespace volta
