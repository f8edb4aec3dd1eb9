// GEMM micro-kernels: filled in by the linalg work.
