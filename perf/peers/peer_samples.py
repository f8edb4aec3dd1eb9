"""What the peer lanes of perf/peers share: their numeric arguments, timing a call the way
Google Benchmark picks an iteration count, and volta-perf's sample lines (perf/perf_main.cpp's
--volta_samples format). Only the standard library."""

import argparse
import time


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def positive_float(text):
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def int_list(text):
    try:
        return tuple(positive_int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of integers, got {text}")


def name_list(text):
    """The --benchmarks argument: peer keys (Volta benchmark names without ISA segments and
    /real_time), comma-separated."""
    names = frozenset(part for part in text.split(",") if part)
    if not names:
        raise argparse.ArgumentTypeError("expected a comma-separated list of benchmark names")
    return names


def add_lane_arguments(parser, sampled, default_threads=(1, 2)):
    """The arguments every lane takes: where its samples go (--volta_samples), how many per
    `sampled` (--repetitions), how long each is timed (--min-time) and at which thread counts
    (--threads)."""
    parser.add_argument("--volta_samples", required=True, metavar="FILE",
                        help="where to write the sample lines")
    parser.add_argument("--repetitions", type=positive_int, default=9, metavar="N",
                        help=f"samples per {sampled} (default 9)")
    parser.add_argument("--min-time", type=positive_float, default=0.05, metavar="S",
                        help="minimum seconds timed per sample (default 0.05)")
    parser.add_argument("--threads", type=int_list, default=default_threads, metavar="T,T,...",
                        help="thread counts (default %s)" % ",".join(map(str, default_threads)))


def time_batches(call, min_time):
    """Seconds per call and calls: whole batches of calls, grown until one lasts min_time, like
    Google Benchmark's iteration count."""
    call()  # warm-up: threads started, buffers allocated, caches filled
    iterations = 1
    while True:
        start = time.perf_counter()
        for _ in range(iterations):
            call()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time or iterations >= 1 << 30:
            return elapsed / iterations, iterations
        grow = 10 if elapsed <= 0 else min(10.0, 1.4 * min_time / elapsed)
        iterations = max(iterations + 1, int(iterations * grow))


def number(value):
    """As perf_main.cpp writes numbers: printf %.9g."""
    return "%.9g" % value


def sample_line(name, repetition, seconds, iterations, variant, threads, gflops):
    fields = ["sample", name, str(repetition), number(seconds), str(iterations), variant,
              str(threads), number(gflops), "", "", ""]
    return "\t".join(fields) + "\n"
