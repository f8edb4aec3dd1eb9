#!/usr/bin/env python3
"""The CUDA peers of volta-perf's cuda/ benchmarks (perf/cuda_benchmark.cpp), timed in PyTorch on
the same device, for the ratios of issue #18's targets. scripts/ci/cuda_verify.sh runs it where
python3 has PyTorch with CUDA (the lent GPU machines do; Volta itself depends on no Python):

  peer:torch:cuda/copy_peak       a 256 MiB device-to-device copy (GB/s: bytes read + written)
  peer:torch:cuda/gemm/f32/size:4096   torch.mm fp32 4096^3 with TF32 off: cuBLAS (GFLOP/s)
  peer:torch:cuda/lm/infer        the tiny transformer (perf/peers/lm_peer.py's model, batch 16)
                                  eager under torch.inference_mode(), tokens in and logits out
                                  through host memory as Volta's benchmark does

Each figure is the median of --repetitions timings of --iterations runs, CUDA events around
them, after a warm-up. Prints one line per benchmark: NAME  MICROSECONDS  RATE  UNIT. With
--volta-json (volta-perf's --benchmark_out of the cuda/ benchmarks, same machine, same call) it
then prints the issue's ratios: each memory-bound kernel's GB/s over Volta's measured copy peak
(target >= 70 %), Volta's GEMM over cuBLAS's (>= 60 %), and the tiny transformer's time against
0.5 ms and against PyTorch eager.
Exit status: 0 printed, 3 no PyTorch with CUDA here, 1 anything else.
"""

import argparse
import json
import statistics
import sys

from lm_peer import BATCH, D_MODEL, SEQ, VOCAB, make_torch_model

EXIT_NO_RUNTIME = 3


def timed(torch, fn, iterations, repetitions):
    """Median seconds of one call of fn."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repetitions):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iterations):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / iterations)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="cuda_peer.py", description=__doc__.split("\n")[0])
    parser.add_argument("--repetitions", type=int, default=9)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--volta-json", metavar="FILE")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError as error:
        print(f"cuda_peer.py: no PyTorch here: {error}", file=sys.stderr)
        return EXIT_NO_RUNTIME
    if not torch.cuda.is_available():
        print("cuda_peer.py: PyTorch sees no CUDA device", file=sys.stderr)
        return EXIT_NO_RUNTIME
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device("cuda")
    rows = []

    elements = 1 << 26
    source = torch.rand(elements, device=device)
    target = torch.empty_like(source)
    seconds = timed(torch, lambda: target.copy_(source), args.iterations, args.repetitions)
    rows.append(("cuda/copy_peak", seconds, 2 * 4 * elements / seconds / 1e9, "GB/s"))

    n = 4096
    a = torch.rand(n, n, device=device) * 2 - 1
    b = torch.rand(n, n, device=device) * 2 - 1
    seconds = timed(torch, lambda: torch.mm(a, b), args.iterations, args.repetitions)
    rows.append(("cuda/gemm/f32/size:4096", seconds, 2 * n ** 3 / seconds / 1e9, "GFLOP/s"))

    torch.manual_seed(1)
    model = make_torch_model(torch).to(device).eval()
    tokens = (torch.arange(BATCH * SEQ, dtype=torch.int64) * 7 % VOCAB).reshape(BATCH, SEQ)

    def infer():
        with torch.inference_mode():
            return model(tokens.to(device)).cpu()

    seconds = timed(torch, infer, args.iterations, args.repetitions)
    rows.append(("cuda/lm/infer", seconds, BATCH * SEQ / seconds, "tokens/s"))

    print(f"# torch {torch.__version__}, {torch.cuda.get_device_name()}, TF32 off, "
          f"d_model {D_MODEL}")
    for name, seconds, rate, unit in rows:
        print(f"peer:torch:{name}\t{seconds * 1e6:.1f} us\t{rate:.1f} {unit}")
    if args.volta_json:
        print_ratios(args.volta_json, {name: (seconds, rate) for name, seconds, rate, _ in rows})
    return 0


def volta_results(path):
    """name (without /real_time) -> (seconds, GB/s, GFLOP/s, error message) of each benchmark."""
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    out = {}
    for b in report.get("benchmarks", []):
        name = b["name"].removesuffix("/real_time")
        if b.get("error_occurred"):
            out[name] = (None, None, None, b.get("error_message", "error"))
            continue
        seconds = b["real_time"] * scale[b.get("time_unit", "ns")]
        out[name] = (seconds, b.get("GB/s"), b.get("GFLOP/s"), None)
    return out


def print_ratios(path, peers):
    volta = volta_results(path)
    print("# ratios (Volta and peers on this device, this run)")
    peak = volta.get("cuda/copy_peak", (None, None, None, None))[1]
    for name, (seconds, gbps, _, error) in sorted(volta.items()):
        if not name.startswith("cuda/kernel/"):
            continue
        if error:
            print(f"{name}\tnot run: {error}")
        elif peak and gbps:
            print(f"{name}\t{gbps:.0f} GB/s = {100 * gbps / peak:.0f} % of the copy peak "
                  f"({peak:.0f} GB/s; target >= 70 %)")
    gemm = volta.get("cuda/gemm/f32/size:4096")
    if gemm and gemm[3]:
        print(f"cuda/gemm/f32/size:4096\tnot run: {gemm[3]}")
    elif gemm:
        cublas = peers["cuda/gemm/f32/size:4096"][1]
        print(f"cuda/gemm/f32/size:4096\t{gemm[2]:.0f} GFLOP/s = {100 * gemm[2] / cublas:.0f} % of "
              f"cuBLAS fp32 ({cublas:.0f} GFLOP/s; target >= 60 %)")
    lm = volta.get("cuda/lm/infer")
    if lm and lm[3]:
        print(f"cuda/lm/infer\tnot run: {lm[3]}")
    elif lm:
        torch_seconds = peers["cuda/lm/infer"][0]
        print(f"cuda/lm/infer\t{lm[0] * 1e3:.3f} ms (target <= 0.5 ms); PyTorch eager "
              f"{torch_seconds * 1e3:.3f} ms: Volta / PyTorch = {lm[0] / torch_seconds:.2f}")


if __name__ == "__main__":
    sys.exit(main())
