#!/usr/bin/env python3
"""The perf double pass's language-model peer lanes: the tiny transformer of volta-perf's
lm/ benchmarks (perf/lm_benchmark.cpp) timed in another library, at each thread count, written
as volta-perf sample lines (perf/perf_main.cpp's --volta_samples format):

  sample  NAME  REPETITION  SECONDS  ITERATIONS  VARIANT  THREADS  GFLOPS  GBPS  PEAK  CONTEXT

--runtime torch (system python3 with PyTorch): the same model written in PyTorch (pre-LN,
exact GELU, additive causal mask, learned position embedding, a separate head without bias),
  peer:torch:lm/train_step/threads:T  one AdamW step (3e-3 with volta train's warm-up and
                                      cosine, weight decay 0.01, gradients clipped at norm 1)
                                      on the next batch of sequential windows of --data
  peer:torch:lm/infer/threads:T       one forward under torch.inference_mode()
--runtime onnxruntime (the interop venv's python): the model `volta export` writes (a checkpoint
of one `volta train` step, exported at batch 16 by the CLI given as --volta),
  peer:onnxruntime:lm/infer/threads:T one InferenceSession.run, intra_op_num_threads T

`volta-audit report --perf` matches each to the Volta benchmark of the same name. Weights and
inputs do not change the time, so they are not Volta's; sizes, data and batch order are.
Repetitions are interleaved across benchmarks and thread counts, as volta-perf interleaves.
Exit status: 0 samples written, 2 bad arguments, 3 the runtime is not importable, 1 anything
else (data unreadable, the volta CLI failed, a model of other sizes).
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile

from peer_samples import add_lane_arguments, sample_line, time_batches

EXIT_FAILED = 1
EXIT_NO_RUNTIME = 3
DEFAULT_DATA = "/usr/share/common-licenses/GPL-3"
DEFAULT_THREADS = (1, 2)

# kTinyTransformer (engine/include/volta/model/transformer_lm.h) and default_run's optimizer
# and batch order (engine/include/volta/train/language_model_training.h).
VOCAB, D_MODEL, LAYERS, HEADS, D_FF, SEQ, BATCH = 256, 64, 2, 4, 256, 32, 16
MASKED_SCORE = -1e9  # model_builder.h kMaskedScore
LAYER_NORM_EPSILON = 1e-5
SCHEDULE_STEPS = 1000  # as lm_benchmark.cpp's kScheduleSteps
BASE_LR, MIN_LR, WARMUP_STEPS = 3e-3, 3e-4, SCHEDULE_STEPS // 10
WEIGHT_DECAY, CLIP_NORM = 0.01, 1.0
STRIDE = SEQ


class LaneError(Exception):
    """The lane cannot produce samples here; the message says why."""


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="lm_peer.py",
        description="Time the tiny transformer LM in PyTorch or ONNX Runtime and write "
                    "volta-perf sample lines.")
    parser.add_argument("--runtime", required=True, choices=("torch", "onnxruntime"))
    add_lane_arguments(parser, "benchmark and thread count", DEFAULT_THREADS)
    parser.add_argument("--data", default=DEFAULT_DATA, metavar="FILE",
                        help=f"the training bytes (default {DEFAULT_DATA})")
    parser.add_argument("--volta", metavar="CLI",
                        help="the volta CLI that trains and exports the model (onnxruntime)")
    args = parser.parse_args(argv)
    if args.runtime == "onnxruntime" and not args.volta:
        parser.error("--runtime onnxruntime needs --volta CLI, which exports the model it runs")
    return args


def read_data(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as error:
        raise LaneError(f"cannot read the data {path}: {error}") from error
    if len(data) < SEQ + 1:
        raise LaneError(f"the data {path} has {len(data)} bytes, fewer than one window "
                        f"({SEQ + 1})")
    return data


def window_rows(data, step):
    """Rows of seq + 1 bytes of step `step`: row b starts at ((step * batch + b) * stride) mod
    len and wraps, as volta::train::make_batch reads sequential windows."""
    n = len(data)
    rows = []
    for b in range(BATCH):
        start = ((step * BATCH + b) * STRIDE) % n
        rows.append([data[(start + i) % n] for i in range(SEQ + 1)])
    return rows


def forward_flops():
    """The GEMM flops of one forward, counted as lm_benchmark.cpp counts them."""
    tokens = BATCH * SEQ
    per_layer = 2.0 * tokens * (4 * D_MODEL * D_MODEL + 2 * SEQ * D_MODEL + 2 * D_MODEL * D_FF)
    return LAYERS * per_layer + 2.0 * tokens * D_MODEL * VOCAB


def learning_rate(step):
    """default_run's WarmupCosine at 1-based `step` (engine/train/schedule.cpp)."""
    if step <= WARMUP_STEPS:
        return BASE_LR * step / WARMUP_STEPS
    total = SCHEDULE_STEPS - WARMUP_STEPS
    t = min(step - WARMUP_STEPS, total)
    return MIN_LR + (BASE_LR - MIN_LR) * (1 + math.cos(math.pi * t / total)) / 2


def import_runtime(name):
    """The module, or the ImportError that says why it is not there."""
    try:
        return __import__(name), None
    except ImportError as error:
        return None, error


class TorchLane:
    """The tiny transformer in PyTorch, trained and run eagerly as a PyTorch user would."""

    def __init__(self, torch, data):
        self.torch = torch
        self.variant = f"torch {getattr(torch, '__version__', 'unknown')} eager"
        tokens = torch.tensor(list(data), dtype=torch.int64)
        self.data, self.length = tokens, tokens.numel()
        self.offsets = torch.arange(SEQ + 1, dtype=torch.int64)
        self.step_index = 0
        torch.manual_seed(1)
        self.train_model = make_torch_model(torch)
        self.infer_model = make_torch_model(torch).eval()
        self.optimizer = torch.optim.AdamW(self.train_model.parameters(), lr=BASE_LR,
                                           betas=(0.9, 0.999), eps=1e-8,
                                           weight_decay=WEIGHT_DECAY)
        self.infer_tokens = self.batch(0)[:, :SEQ]

    def benchmarks(self):
        return (("lm/train_step", 3 * forward_flops(), self.train_step),
                ("lm/infer", forward_flops(), self.infer))

    def set_threads(self, threads):
        self.torch.set_num_threads(threads)

    def batch(self, step):
        """[batch, seq + 1] int64: the windows of `step`, as window_rows reads them."""
        starts = (step * BATCH + self.torch.arange(BATCH, dtype=self.torch.int64)) * STRIDE
        index = (starts.remainder(self.length).unsqueeze(1) + self.offsets).remainder(self.length)
        return self.data[index]

    def train_step(self):
        torch = self.torch
        rows = self.batch(self.step_index)
        self.step_index += 1
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate(self.step_index)
        self.optimizer.zero_grad(set_to_none=True)
        logits = self.train_model(rows[:, :SEQ])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB),
                                                 rows[:, 1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.train_model.parameters(), CLIP_NORM)
        self.optimizer.step()
        return loss

    def infer(self):
        with self.torch.inference_mode():
            return self.infer_model(self.infer_tokens)


def make_torch_model(torch):
    """transformer_lm.h's architecture. nn.Linear stores [out, in] where Volta stores [in, out];
    the products are the same."""
    nn, functional = torch.nn, torch.nn.functional
    head_dim = D_MODEL // HEADS
    scale = 1.0 / math.sqrt(head_dim)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k = nn.Linear(D_MODEL, D_MODEL), nn.Linear(D_MODEL, D_MODEL)
            self.v, self.out = nn.Linear(D_MODEL, D_MODEL), nn.Linear(D_MODEL, D_MODEL)
            # Additive: 0 where the key is at or before the query, MASKED_SCORE after it.
            self.register_buffer("mask", torch.full((SEQ, SEQ), MASKED_SCORE).triu(1))

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = (layer(x).view(b, t, HEADS, head_dim).transpose(1, 2)
                       for layer in (self.q, self.k, self.v))
            scores = q @ k.transpose(-2, -1) * scale + self.mask
            context = torch.softmax(scores, dim=-1) @ v
            return self.out(context.transpose(1, 2).reshape(b, t, D_MODEL))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(D_MODEL, eps=LAYER_NORM_EPSILON)
            self.attn = Attention()
            self.ln2 = nn.LayerNorm(D_MODEL, eps=LAYER_NORM_EPSILON)
            self.up, self.down = nn.Linear(D_MODEL, D_FF), nn.Linear(D_FF, D_MODEL)

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.down(functional.gelu(self.up(self.ln2(x)), approximate="none"))

    class TinyTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb = nn.Embedding(VOCAB, D_MODEL)
            self.pos_emb = nn.Parameter(torch.randn(SEQ, D_MODEL) * 0.02)
            self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
            self.ln_f = nn.LayerNorm(D_MODEL, eps=LAYER_NORM_EPSILON)
            self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

        def forward(self, tokens):
            x = self.tok_emb(tokens) + self.pos_emb
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

    return TinyTransformer()


def export_volta_model(volta, data_path, directory):
    """`volta train --steps 1 --save` then `volta export --batch 16`: the model's path."""
    checkpoint = os.path.join(directory, "lm.ckpt")
    model = os.path.join(directory, "lm.onnx")
    for command in ([volta, "train", "--data", data_path, "--steps", "1", "--save", checkpoint],
                    [volta, "export", "--checkpoint", checkpoint, "--onnx", model,
                     "--batch", str(BATCH)]):
        try:
            done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, check=False)
        except OSError as error:
            raise LaneError(f"cannot run {' '.join(command)}: {error}") from error
        if done.returncode != 0:
            raise LaneError(f"{' '.join(command)} exited {done.returncode}: "
                            f"{(done.stderr or done.stdout).strip()[-2000:]}")
    return model


class OnnxRuntimeLane:
    """The exported model in ONNX Runtime's CPU provider, one session per thread count."""

    def __init__(self, ort, numpy, data, model):
        self.ort = ort
        self.model = model
        self.variant = f"onnxruntime {getattr(ort, '__version__', 'unknown')} CPU"
        self.feed = {"tokens": numpy.array([row[:SEQ] for row in window_rows(data, 0)],
                                           dtype=numpy.int64)}
        self.sessions = {}
        self.session = None
        self.set_threads(1)  # loads the model now: a bad one fails before any timing
        inputs = [(i.name, list(i.shape)) for i in self.session.get_inputs()]
        if inputs != [("tokens", [BATCH, SEQ])]:
            raise LaneError(f"{model} has inputs {inputs}, not tokens [{BATCH}, {SEQ}]")

    def benchmarks(self):
        return (("lm/infer", forward_flops(), self.infer),)

    def set_threads(self, threads):
        if threads not in self.sessions:
            options = self.ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.execution_mode = self.ort.ExecutionMode.ORT_SEQUENTIAL
            try:
                self.sessions[threads] = self.ort.InferenceSession(
                    self.model, sess_options=options, providers=["CPUExecutionProvider"])
            except Exception as error:  # ONNX Runtime's errors derive from Exception only
                raise LaneError(f"ONNX Runtime cannot load {self.model}: {error}") from error
        self.session = self.sessions[threads]

    def infer(self):
        return self.session.run(None, self.feed)


def run(args, lane, out):
    """Writes every sample line to `out`; returns how many."""
    written = 0
    for repetition in range(args.repetitions):
        for name, flops, call in lane.benchmarks():
            for threads in args.threads:
                lane.set_threads(threads)
                seconds, iterations = time_batches(call, args.min_time)
                out.write(sample_line(f"peer:{args.runtime}:{name}/threads:{threads}", repetition,
                                      seconds, iterations, lane.variant, threads,
                                      flops / seconds / 1e9))
                out.flush()
                written += 1
    return written


def make_lane(args, importer, scratch):
    """The lane for args.runtime; LaneError when it cannot run, None with the reason printed
    when the runtime is not importable."""
    runtime, error = importer(args.runtime)
    if runtime is None:
        print(f"lm_peer.py: {args.runtime} is not importable by {sys.executable} ({error}): "
              f"the {args.runtime} language-model lane is skipped", file=sys.stderr)
        return None
    data = read_data(args.data)
    if args.runtime == "torch":
        return TorchLane(runtime, data)
    numpy, error = importer("numpy")
    if numpy is None:
        print(f"lm_peer.py: numpy is not importable by {sys.executable} ({error}): the "
              "onnxruntime language-model lane is skipped", file=sys.stderr)
        return None
    return OnnxRuntimeLane(runtime, numpy, data, export_volta_model(args.volta, args.data, scratch))


def main(argv=None, importer=import_runtime):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="volta-lm-peer-") as scratch:
        try:
            lane = make_lane(args, importer, scratch)
            if lane is None:
                return EXIT_NO_RUNTIME
            with open(args.volta_samples, "w", encoding="utf-8") as out:
                written = run(args, lane, out)
        except LaneError as error:
            print(f"lm_peer.py: {args.runtime}: {error}", file=sys.stderr)
            return EXIT_FAILED
        except OSError as error:
            print(f"lm_peer.py: cannot write samples to '{args.volta_samples}': {error}",
                  file=sys.stderr)
            return EXIT_FAILED
    print(f"lm_peer.py: {written} samples of {lane.variant} written to {args.volta_samples}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
