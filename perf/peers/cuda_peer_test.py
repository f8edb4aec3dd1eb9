#!/usr/bin/env python3
"""cuda_peer.py's ratios from a volta-perf JSON report (no GPU or PyTorch needed)."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuda_peer  # noqa: E402


def benchmark(name, microseconds, **counters):
    return dict(name=name + "/real_time", real_time=microseconds, time_unit="us", **counters)


class RatioTest(unittest.TestCase):
    def ratios(self, benchmarks, peers):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"benchmarks": benchmarks}, f)
        try:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                cuda_peer.print_ratios(f.name, peers)
            return out.getvalue()
        finally:
            os.unlink(f.name)

    def test_each_target_is_a_ratio_of_this_runs_figures(self):
        text = self.ratios(
            [benchmark("cuda/copy_peak", 200.0, **{"GB/s": 3000.0}),
             benchmark("cuda/kernel/add", 300.0, **{"GB/s": 2400.0}),
             benchmark("cuda/gemm/f32/size:4096", 5000.0, **{"GFLOP/s": 30000.0}),
             benchmark("cuda/lm/infer", 400.0)],
            {"cuda/gemm/f32/size:4096": (0.003, 50000.0), "cuda/lm/infer": (0.002, 1.0)})
        self.assertIn("cuda/kernel/add\t2400 GB/s = 80 % of the copy peak (3000 GB/s", text)
        self.assertIn("30000 GFLOP/s = 60 % of cuBLAS fp32 (50000 GFLOP/s", text)
        self.assertIn("0.400 ms (target <= 0.5 ms); PyTorch eager 2.000 ms: "
                      "Volta / PyTorch = 0.20", text)

    def test_a_benchmark_that_could_not_run_says_why(self):
        text = self.ratios(
            [dict(name="cuda/gemm/f32/size:4096/real_time", error_occurred=True,
                  error_message="[R-MISSING-KERNEL] no MatMul kernel")], {})
        self.assertIn("cuda/gemm/f32/size:4096\tnot run: [R-MISSING-KERNEL] no MatMul kernel", text)


if __name__ == "__main__":
    unittest.main()
