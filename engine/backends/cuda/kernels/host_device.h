#pragma once
// VOLTA_HD marks the functions of the kernel headers that nvcc compiles for the device and the
// host emulation tests compile as plain C++ for the host.

#ifdef __CUDACC__
#define VOLTA_HD __host__ __device__ __forceinline__
#else
#define VOLTA_HD inline
#endif
