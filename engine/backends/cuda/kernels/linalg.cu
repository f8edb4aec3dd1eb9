// Linalg-family kernels (f32, f64): the launch of the GEMM behind MatMul, Gemm and FusedMatMul
// (gemm_kernel.cuh). Smaller tiles for a problem of few large ones; one block per tile of Y up to
// the hardware's limit, past it blocks stride over the tiles. Neither changes an element's value.

#include <cuda_runtime.h>

#include <cstdint>

#include "gemm_kernel.cuh"
#include "launch.h"

namespace volta::cuda {
namespace {

using gemm_detail::gemm_kernel;
using gemm_detail::kThreads;
using gemm_detail::tile_count;

// The most blocks a launch asks for; past them blocks stride over the tiles.
constexpr int64_t kMaxBlocks = 2147483647;

template <class Tile>
cudaError_t launch_tiles(const GemmLaunch<typename Tile::T>& g, cudaStream_t stream) {
  const int64_t tiles = tile_count<Tile>(g);
  const auto blocks = static_cast<unsigned>(tiles < kMaxBlocks ? tiles : kMaxBlocks);
  gemm_kernel<Tile><<<blocks, kThreads, 0, stream>>>(g, tiles);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_gemm(const GemmLaunch<T>& g, cudaStream_t stream) {
  using Tiles = gemm_detail::Tiles<T>;
  if (tile_count<typename Tiles::Large>(g) >= gemm_detail::kEnoughTiles) {
    return launch_tiles<typename Tiles::Large>(g, stream);
  }
  if (tile_count<typename Tiles::Medium>(g) >= gemm_detail::kEnoughTiles) {
    return launch_tiles<typename Tiles::Medium>(g, stream);
  }
  return launch_tiles<typename Tiles::Small>(g, stream);
}

}  // namespace

cudaError_t launch_f32_gemm(const GemmLaunch<float>& g, cudaStream_t stream) {
  return launch_gemm(g, stream);
}
cudaError_t launch_f64_gemm(const GemmLaunch<double>& g, cudaStream_t stream) {
  return launch_gemm(g, stream);
}

}  // namespace volta::cuda
