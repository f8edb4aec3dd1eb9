#!/usr/bin/env python3
"""The perf double pass's torch peer lane: times torch.mm on the f32 square GEMMs that
volta-perf's f32_gemm benchmarks time, at 1 and 2 threads, and writes one sample line per
repetition in volta-perf's --volta_samples format (perf/perf_main.cpp):

  sample  NAME  REPETITION  SECONDS  ITERATIONS  VARIANT  THREADS  GFLOPS  GBPS  PEAK  CONTEXT

NAME is "peer:torch:f32_gemm/size:S/threads:T"; `volta-audit report --perf` matches it to
every Volta GEMM benchmark of that size and thread count whatever its ISA segment. Repetitions
are interleaved across shapes, as volta-perf interleaves benchmarks. Only the standard library,
torch and peer_samples.py beside it; exits 3 when torch is not importable, 2 on bad arguments.
"""

import argparse
import sys

from peer_samples import add_lane_arguments, int_list, name_list, sample_line, time_batches

EXIT_NO_TORCH = 3
DEFAULT_SIZES = (64, 256, 512, 1024, 2048)
DEFAULT_THREADS = (1, 2)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="torch_peer.py",
        description="Time torch.mm on f32 square GEMMs and write volta-perf sample lines.")
    add_lane_arguments(parser, "shape", DEFAULT_THREADS)
    parser.add_argument("--sizes", type=int_list, default=DEFAULT_SIZES, metavar="S,S,...",
                        help="square GEMM sizes (default 64,256,512,1024,2048)")
    parser.add_argument("--benchmarks", type=name_list, default=None, metavar="NAME,...",
                        help="time only these (\"f32_gemm/size:512/threads:1\", the names "
                        "without the peer prefix); default: every size at every thread count")
    return parser.parse_args(argv)


def import_torch():
    """torch, or the ImportError that says why it is not there."""
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        return None, error
    return torch, None


class GemmTimer:
    """Times torch.mm(a, b, out=y) on random f32 operands with time_batches."""

    def __init__(self, torch, min_time):
        self.torch = torch
        self.min_time = min_time
        self.operands = {}

    def __call__(self, size, threads):
        torch = self.torch
        torch.set_num_threads(threads)
        if size not in self.operands:
            generator = torch.Generator().manual_seed(size)
            a = torch.rand(size, size, generator=generator, dtype=torch.float32) * 2 - 1
            b = torch.rand(size, size, generator=generator, dtype=torch.float32) * 2 - 1
            self.operands[size] = (a, b, torch.empty(size, size, dtype=torch.float32))
        a, b, y = self.operands[size]
        return time_batches(lambda: torch.mm(a, b, out=y), self.min_time)


def benchmark_name(size, threads):
    return f"peer:torch:f32_gemm/size:{size}/threads:{threads}"


def run(args, torch, timer, out):
    """Writes every sample line to `out`; returns how many."""
    variant = f"torch {getattr(torch, '__version__', 'unknown')} mm"
    written = 0
    timed = [(size, threads) for size in args.sizes for threads in args.threads
             if args.benchmarks is None
             or benchmark_name(size, threads).split(":", 2)[2] in args.benchmarks]
    for repetition in range(args.repetitions):
        for size, threads in timed:
            seconds, iterations = timer(size, threads)
            gflops = 2.0 * size * size * size / seconds / 1e9
            out.write(sample_line(benchmark_name(size, threads), repetition, seconds,
                                  iterations, variant, threads, gflops))
            out.flush()
            written += 1
    return written


def main(argv=None, torch_importer=import_torch, timer_factory=GemmTimer):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    torch, error = torch_importer()
    if torch is None:
        print(f"torch_peer.py: torch is not importable by {sys.executable} ({error}): the torch "
              "peer lane needs PyTorch; skipped", file=sys.stderr)
        return EXIT_NO_TORCH
    timer = timer_factory(torch, args.min_time)
    try:
        with open(args.volta_samples, "w", encoding="utf-8") as out:
            written = run(args, torch, timer, out)
    except OSError as error:
        print(f"torch_peer.py: cannot write samples to '{args.volta_samples}': {error}",
              file=sys.stderr)
        return 2
    print(f"torch_peer.py: {written} samples of torch.mm written to {args.volta_samples}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
