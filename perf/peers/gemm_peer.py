#!/usr/bin/env python3
"""The perf double pass's optimized-BLAS peer lanes: the f32 GEMMs of volta-perf's f32_gemm and
f32_gemm_mlp benchmarks (perf/gemm_benchmark.cpp) timed in the interop venv's libraries, at each
thread count, written as volta-perf sample lines (perf/perf_main.cpp's --volta_samples format):

  sample  NAME  REPETITION  SECONDS  ITERATIONS  VARIANT  THREADS  GFLOPS  GBPS  PEAK  CONTEXT

--library openblas: numpy.matmul(a, b, out=y) on the OpenBLAS that numpy's wheel bundles, its
  thread count set through OpenBLAS's own set_num_threads (found in the loaded library);
--library mlas: ONNX Runtime's MatMul (its MLAS GEMM) on a one-node model with both operands
  as inputs, so B is packed on every call as Volta's benchmark packs it, run through an I/O
  binding onto preallocated buffers, intra_op_num_threads T.

NAME is "peer:LIBRARY:f32_gemm/size:S/threads:T" for the square S x S x S products and
"peer:LIBRARY:f32_gemm_mlp/PRODUCT/tokens:BT/d:D/threads:T" for a transformer layer's (up
[BT,D]x[D,4D], down [BT,4D]x[4D,D], qkv [BT,D]x[D,3D]); `volta-audit report --perf` matches
each to the Volta benchmark of that name whatever its ISA segment. Repetitions are interleaved
across shapes and thread counts, as volta-perf interleaves benchmarks. Exit status: 0 samples
written, 2 bad arguments or unwritable samples, 3 the library is not importable or its thread
count cannot be set, 1 anything else.
"""

import argparse
import ctypes
import glob
import os
import sys

from peer_samples import add_lane_arguments, int_list, name_list, sample_line, time_batches

EXIT_NO_LIBRARY = 3
DEFAULT_SIZES = (64, 256, 512, 1024, 2048)
DEFAULT_TOKENS = (64, 512)
DEFAULT_WIDTHS = (64, 256, 512, 768)
DEFAULT_THREADS = (1, 2)
# perf/gemm_benchmark.cpp's kMlp: (name, K in widths, N in widths).
MLP_PRODUCTS = (("up", 1, 4), ("down", 4, 1), ("qkv", 1, 3))


class LibraryMissing(Exception):
    """The library cannot run here; the message says why."""


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="gemm_peer.py",
        description="Time f32 GEMMs in OpenBLAS (numpy) or MLAS (ONNX Runtime) and write "
        "volta-perf sample lines.")
    parser.add_argument("--library", required=True, choices=("openblas", "mlas"))
    add_lane_arguments(parser, "shape", DEFAULT_THREADS)
    parser.add_argument("--sizes", type=int_list, default=DEFAULT_SIZES, metavar="S,S,...",
                        help="square GEMM sizes (default 64,256,512,1024,2048)")
    parser.add_argument("--tokens", type=int_list, default=DEFAULT_TOKENS, metavar="BT,...",
                        help="rows of the transformer products (default 64,512)")
    parser.add_argument("--widths", type=int_list, default=DEFAULT_WIDTHS, metavar="D,...",
                        help="model widths of the transformer products (default 64,256,512,768)")
    parser.add_argument("--benchmarks", type=name_list, default=None, metavar="NAME,...",
                        help="time only these (\"f32_gemm/size:512/threads:1\", the names "
                        "without the peer prefix); default: every shape at every thread count")
    return parser.parse_args(argv)


def shapes(args):
    """(benchmark name without the library and threads, m, n, k) of every product timed."""
    out = [(f"f32_gemm/size:{s}", s, s, s) for s in args.sizes]
    for name, k_widths, n_widths in MLP_PRODUCTS:
        for tokens in args.tokens:
            for width in args.widths:
                out.append((f"f32_gemm_mlp/{name}/tokens:{tokens}/d:{width}", tokens,
                            n_widths * width, k_widths * width))
    return out


def openblas_thread_setter():
    """OpenBLAS's set_num_threads from the library numpy loaded (the wheel's, symbols prefixed)."""
    import numpy  # pylint: disable=import-outside-toplevel
    libs = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    names = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
             "openblas_set_num_threads64_", "openblas_set_num_threads")
    for path in sorted(glob.glob(os.path.join(libs, "*openblas*.so*"))):
        library = ctypes.CDLL(path)
        for name in names:
            if hasattr(library, name):
                setter = getattr(library, name)
                setter.argtypes = [ctypes.c_int]
                return setter
    raise LibraryMissing(f"no OpenBLAS set_num_threads in {libs} (numpy {numpy.__version__})")


class OpenBlasTimer:
    """Times numpy.matmul(a, b, out=y) on random f32 operands."""

    def __init__(self, min_time):
        try:
            import numpy  # pylint: disable=import-outside-toplevel
        except ImportError as error:
            raise LibraryMissing(f"numpy is not importable by {sys.executable} ({error})")
        self.numpy = numpy
        self.set_threads = openblas_thread_setter()
        self.min_time = min_time
        self.variant = f"OpenBLAS (numpy {numpy.__version__}) matmul"
        self.operands = {}

    def __call__(self, m, n, k, threads):
        np = self.numpy
        self.set_threads(threads)
        if (m, n, k) not in self.operands:
            rng = np.random.default_rng(m * 65537 + n * 257 + k)
            a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
            b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
            self.operands[(m, n, k)] = (a, b, np.empty((m, n), dtype=np.float32))
        a, b, y = self.operands[(m, n, k)]
        return time_batches(lambda: np.matmul(a, b, out=y), self.min_time)


class MlasTimer:
    """Times ONNX Runtime's MatMul(A, B) with both operands bound as inputs."""

    def __init__(self, min_time):
        try:
            import numpy  # pylint: disable=import-outside-toplevel
            import onnx  # pylint: disable=import-outside-toplevel
            import onnxruntime  # pylint: disable=import-outside-toplevel
        except ImportError as error:
            raise LibraryMissing(f"onnxruntime is not importable by {sys.executable} ({error})")
        self.numpy, self.onnx, self.ort = numpy, onnx, onnxruntime
        self.min_time = min_time
        self.variant = f"ONNX Runtime {onnxruntime.__version__} MatMul (MLAS)"
        self.runs = {}

    def session(self, m, n, k, threads):
        onnx = self.onnx
        helper, f32 = onnx.helper, onnx.TensorProto.FLOAT
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["A", "B"], ["Y"])], "gemm",
            [helper.make_tensor_value_info("A", f32, [m, k]),
             helper.make_tensor_value_info("B", f32, [k, n])],
            [helper.make_tensor_value_info("Y", f32, [m, n])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        options = self.ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        return self.ort.InferenceSession(model.SerializeToString(), options,
                                         providers=["CPUExecutionProvider"])

    def __call__(self, m, n, k, threads):
        np = self.numpy
        key = (m, n, k, threads)
        if key not in self.runs:
            session = self.session(m, n, k, threads)
            rng = np.random.default_rng(m * 65537 + n * 257 + k)
            a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
            b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
            y = np.empty((m, n), dtype=np.float32)
            binding = session.io_binding()
            binding.bind_cpu_input("A", a)
            binding.bind_cpu_input("B", b)
            binding.bind_output("Y", "cpu", 0, np.float32, [m, n], y.ctypes.data)
            # The arrays stay referenced: the binding points at their memory.
            self.runs[key] = (session, binding, (a, b, y))
        session, binding, _ = self.runs[key]
        return time_batches(lambda: session.run_with_iobinding(binding), self.min_time)


def run(args, timer, out):
    """Writes every sample line to `out`; returns how many."""
    written = 0
    timed = [(name, m, n, k, threads)
             for name, m, n, k in shapes(args) for threads in args.threads
             if args.benchmarks is None or f"{name}/threads:{threads}" in args.benchmarks]
    for repetition in range(args.repetitions):
        for name, m, n, k, threads in timed:
            seconds, iterations = timer(m, n, k, threads)
            gflops = 2.0 * m * n * k / seconds / 1e9
            out.write(sample_line(f"peer:{args.library}:{name}/threads:{threads}", repetition,
                                  seconds, iterations, timer.variant, threads, gflops))
            out.flush()
            written += 1
    return written


TIMERS = {"openblas": OpenBlasTimer, "mlas": MlasTimer}


def main(argv=None, timers=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        timer = (timers or TIMERS)[args.library](args.min_time)
    except LibraryMissing as error:
        print(f"gemm_peer.py: {error}: the {args.library} peer lane is skipped", file=sys.stderr)
        return EXIT_NO_LIBRARY
    try:
        with open(args.volta_samples, "w", encoding="utf-8") as out:
            written = run(args, timer, out)
    except OSError as error:
        print(f"gemm_peer.py: cannot write samples to '{args.volta_samples}': {error}",
              file=sys.stderr)
        return 2
    print(f"gemm_peer.py: {written} samples of {timer.variant} written to {args.volta_samples}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
