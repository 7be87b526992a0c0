"""Benchmark: the RNN language model of Chapter 3 against torch.nn.RNN, and NumPy BPTT against autograd.

    python bench/rnn.py [--threads 1] [--devices cpu,cuda] [--repeats 3] [--epochs 6]
                        [--skip-chapter] [--skip-bptt]

1. Training throughput, in target tokens per second (best of ``--repeats`` epochs), of
   :class:`seqlearn.rnn.RNNLM` (explicit Elman loop, Adam, batches of 64 whole
   sentences bucketed by length, ``masked_cross_entropy``) at the chapter's size
   (``ToyEnglish``, 300k tokens, |V| = 109, m = 32, H = 64, Adam 2e-3) on every device
   present, against the peer a user would write: ``torch.nn.Embedding`` + ``torch.nn.RNN`` + ``torch.nn.Linear``
   on the same batches and loss (ratio: seqlearn over peer).
2. The chapter's experiment: the same model trained for ``--epochs`` epochs (300k training,
   30k validation, 50k test tokens of ``ToyEnglish``); test perplexity next to modified
   Kneser-Ney and the Chapter 2 NLM, agreement accuracy per distance 0..8.
3. :func:`bench_bptt`: the NumPy reference ``seqlearn.rnn.bptt_gradients`` (backward
   recursion) against torch autograd through the same float64 network (skipped with a
   message when ``seqlearn.rnn`` has no reference BPTT).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn

from seqlearn.data.synthetic import ToyEnglish, agreement_accuracy, agreement_examples
from seqlearn.data.vocab import Vocab, encode_sentences
from seqlearn.lm import agreement_scorer, perplexity
from seqlearn.rnn import RNNLM, SentenceBatches, rnn_lm_loss, train_rnn_lm
from seqlearn.training import fit

SIZES = dict(embedding_dim=32, hidden_size=64)  # the chapter's m and H
CHAPTER = dict(batch_size=64, lr=2e-3, clip_grad_norm=1.0)
REFERENCE = {"modified KN (best order)": 12.23, "Chapter 2 NLM n=3": 12.08, "Chapter 2 NLM n=6": 10.21}


def toy_corpus():
    """(train, val, test) streams of ToyEnglish (300k, 30k, 50k tokens; rng 0, 1, 2) and the vocab."""
    te = ToyEnglish()
    train, val, test = (te.sample(n_tokens=n, rng=r) for n, r in ((300_000, 0), (30_000, 1), (50_000, 2)))
    vocab = Vocab.build(train)
    return tuple(encode_sentences(s, vocab) for s in (train, val, test)), vocab


class TorchRNNLM(nn.Module):
    """The peer: ``nn.Embedding`` -> ``nn.RNN(tanh)`` -> ``nn.Linear``, same interface as RNNLM."""

    def __init__(self, vocab_size: int, embedding_dim: int, hidden_size: int):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, embedding_dim)
        self.rnn = nn.RNN(embedding_dim, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, vocab_size)

    def forward(self, ids, h0=None):
        h, h_T = self.rnn(self.emb(ids), h0)
        return self.out(h), h_T


def epoch_speed(model, stream, device: str, repeats: int) -> float:
    """Best tokens/s of one training epoch over ``repeats`` epochs."""
    model.to(device)
    batches = SentenceBatches(stream, CHAPTER["batch_size"], shuffle=True, seed=0, device=device)
    opt = torch.optim.Adam(model.parameters(), lr=CHAPTER["lr"])
    best = 0.0
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fit(
            model,
            rnn_lm_loss,
            opt,
            batches,
            epochs=1,
            clip_grad_norm=CHAPTER["clip_grad_norm"],
            device=device,
            progress=False,
        )
        if device == "cuda":
            torch.cuda.synchronize()
        best = max(best, batches.n_targets / (time.perf_counter() - start))
    return best


def throughput(devices: list[str], repeats: int) -> None:
    print(
        f"1. Training throughput (target tokens/s; Adam, batches of {CHAPTER['batch_size']} sentences, "
        f"m={SIZES['embedding_dim']}, H={SIZES['hidden_size']}; best of {repeats} epochs)"
    )
    (train, _, _), vocab = toy_corpus()
    for device in devices:
        ours = epoch_speed(RNNLM(len(vocab), **SIZES, seed=0), train, device, repeats)
        torch.manual_seed(0)
        peer = epoch_speed(TorchRNNLM(len(vocab), **SIZES), train, device, repeats)
        print(
            f"   {device:5s} seqlearn RNNLM {ours:10,.0f}   torch.nn.RNN peer {peer:10,.0f}   ratio {ours / peer:.2f}"
        )


def chapter_experiment(device: str, epochs: int) -> None:
    print(f"\n2. The chapter's experiment (ToyEnglish 300k/30k/50k tokens, {epochs} epochs, {device})")
    (train, val, test), vocab = toy_corpus()
    model = RNNLM(len(vocab), **SIZES, seed=0)
    history = train_rnn_lm(
        model,
        train,
        val,
        lr=CHAPTER["lr"],
        epochs=epochs,
        batch_size=CHAPTER["batch_size"],
        clip_grad_norm=CHAPTER["clip_grad_norm"],
        device=device,
        progress=False,
    )
    print(
        f"   trained in {history.seconds:.1f} s; validation perplexity per epoch "
        + ", ".join(f"{p:.2f}" for p in history.val_perplexity)
    )
    print(
        f"   test perplexity: RNN LM {perplexity(model, test):.2f}   "
        + "   ".join(f"{k} {v:.2f}" for k, v in REFERENCE.items())
    )
    examples = agreement_examples(distances=range(9), n_per_distance=150, seed=0)
    accuracy = agreement_accuracy(agreement_scorer(model, vocab), examples)
    print("   agreement accuracy by distance: " + " ".join(f"{d}:{a:.2f}" for d, a in accuracy.items()))


def bench_bptt(T: int = 100, B: int = 16, D: int = 8, H: int = 64, O: int = 8, repeats: int = 5) -> None:
    """Time ``seqlearn.rnn.bptt_gradients`` (NumPy) against torch autograd on the same float64 network."""
    print(f"\n3. BPTT gradients: NumPy reference vs torch autograd (float64, B={B}, T={T}, D={D}, H={H}, O={O})")
    try:
        from seqlearn.rnn import bptt_gradients, init_elman_params
    except ImportError as e:
        print(f"   skipped: seqlearn.rnn has no NumPy reference BPTT yet ({e})")
        return
    params = init_elman_params(D, H, O, rho=0.9, seed=0)
    rng = np.random.default_rng(0)
    x, targets = rng.standard_normal((B, T, D)), rng.standard_normal((B, T, O))

    def numpy_grads():
        return bptt_gradients(x, targets, **params, phi="tanh", loss="mse")

    tp = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    tx, ttargets = torch.from_numpy(x), torch.from_numpy(targets)

    def torch_grads():
        h = tp["h0"].expand(B, H)
        a_x = tx @ tp["W_xh"].T + tp["b_h"]
        states = []
        for t in range(T):
            h = torch.tanh(a_x[:, t] + h @ tp["W_hh"].T)
            states.append(h)
        y = torch.stack(states, 1) @ tp["W_hy"].T + tp["b_y"]
        loss = 0.5 * ((y - ttargets) ** 2).sum()
        return dict(zip(tp, torch.autograd.grad(loss, list(tp.values()))))

    def best(f):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            out = f()
            times.append(time.perf_counter() - start)
        return min(times), out

    t_np, g_np = best(numpy_grads)
    t_torch, g_torch = best(torch_grads)
    error = max(float(np.max(np.abs(g_np[k] - g_torch[k].numpy()))) for k in g_np)
    print(
        f"   NumPy {t_np * 1e3:8.2f} ms   torch autograd {t_torch * 1e3:8.2f} ms   "
        f"ratio (torch time / NumPy time) {t_torch / t_np:.2f}   max |difference| {error:.1e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--devices", default=None, help="comma-separated (default: cpu, and cuda if present)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--skip-chapter", action="store_true")
    parser.add_argument("--skip-bptt", action="store_true")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    devices = args.devices.split(",") if args.devices else ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    throughput(devices, args.repeats)
    if not args.skip_chapter:
        chapter_experiment(devices[0], args.epochs)
    if not args.skip_bptt:
        bench_bptt()


if __name__ == "__main__":
    main()
