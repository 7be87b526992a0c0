"""Benchmark: training and evaluation speed of Bengio et al.'s NLM, and its time to match Kneser-Ney.

    python bench/nlm.py [--threads 2] [--devices cpu,cuda] [--chapter-tokens 300000]
                        [--ptb-tokens-cpu 20000] [--ptb-tokens-gpu 1000000]
                        [--reach-tokens 1000000] [--max-epochs 10] [--skip-reach]

1. Throughput, in target tokens per second, of one training epoch (Adam, batches of 256
   windows, ``train_nlm``) and of evaluation (``token_logprobs``) on every device present:

   * the chapter's size: ``MarkovSource(200, 2)`` text (|V| = 203), n = 4, m = 30, h = 100;
   * a Penn-Treebank-sized model: |V| = 10 003 (``MarkovSource(10000, 0)``, Zipfian words),
     n = 5, m = 100, h = 300.

   Alongside, on the CPU at the chapter's size, the peer a user would write by hand: the same
   model from ``torch.nn.Embedding``/``torch.nn.Linear`` layers, trained from a
   ``DataLoader`` over a ``TensorDataset`` of every window materialised in memory; the
   ratio is seqlearn's speed over the peer's. Its memory for the windows is printed too.
2. Time to reach modified Kneser-Ney: on ``MarkovSource(200, 2)`` text (``--reach-tokens``
   training tokens; 100k validation, 100k test), the best modified KN of orders 2-5 (lmplz's
   fallback discounts (0.5, 1, 1.5) where the estimate is undefined) against the NLM
   (n = 3, m = 30, h = 100, Adam) trained epoch by epoch until its test perplexity is at most
   KN's; prints the training time to get there and the ratio to KN's estimation time.

``--threads`` sets ``torch.set_num_threads`` (default: leave torch's choice).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch

from seqlearn.data.synthetic import MarkovSource
from seqlearn.data.vocab import Vocab, encode_sentences
from seqlearn.ngram import ModifiedKneserNey
from seqlearn.nlm import BengioNLM, WindowBatches, basics, make_optimizer, nlm_loss, perplexity, token_logprobs, train_nlm
from seqlearn.training import fit

FALLBACK = (0.5, 1.0, 1.5)
CHAPTER = dict(n=4, m=30, h=100)
PTB = dict(n=5, m=100, h=300)
BATCH = 256


def corpus(source: MarkovSource, n_tokens: int, seed: int) -> tuple[np.ndarray, Vocab]:
    """An encoded stream of about ``n_tokens`` tokens, over the source's full vocabulary."""
    vocab = Vocab(source.words)
    return encode_sentences(source.sample(n_tokens=n_tokens, rng=seed), vocab), vocab


def train_speed(model: BengioNLM, stream: np.ndarray, device) -> float:
    """Target tokens per second of one training epoch (after a short warm-up)."""
    warm = stream[: np.flatnonzero(stream == Vocab.bos_id)[min(50, (stream == Vocab.bos_id).sum() - 1)]]
    train_nlm(model, warm, None, epochs=1, batch_size=BATCH, device=device, progress=False)
    return train_nlm(model, stream, None, epochs=1, batch_size=BATCH, device=device, progress=False).tokens_per_second


def eval_speed(model: BengioNLM, stream: np.ndarray, device) -> float:
    """Target tokens per second of ``token_logprobs``."""
    token_logprobs(model, stream[:1000], device=device)
    start = time.perf_counter()
    n = len(token_logprobs(model, stream, device=device))
    return n / (time.perf_counter() - start)


class PlainNLM(torch.nn.Module):
    """The same model from standard layers (what one writes without seqlearn)."""

    def __init__(self, V, n, m, h):
        super().__init__()
        self.embedding = torch.nn.Embedding(V, m)
        self.hidden = torch.nn.Linear((n - 1) * m, h)
        self.output = torch.nn.Linear(h, V)
        self.direct = torch.nn.Linear((n - 1) * m, V, bias=False)

    def forward(self, contexts):
        x = self.embedding(contexts).flatten(1)
        return self.output(torch.tanh(self.hidden(x))) + self.direct(x)


def peer_train_speed(stream: np.ndarray, V: int, n: int, m: int, h: int) -> tuple[float, float]:
    """(tokens/s, MiB of materialised windows) of the plain DataLoader + nn.Linear peer, on the CPU."""
    contexts, targets = (torch.from_numpy(a) for a in basics.context_windows(stream, n))
    mib = (contexts.numel() + targets.numel()) * 8 / 2**20
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(contexts, targets), batch_size=BATCH,
                                         shuffle=True)
    model = PlainNLM(V, n, m, h)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    start = time.perf_counter()
    for c, t in loader:
        loss = torch.nn.functional.cross_entropy(model(c), t)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()
    return len(targets) / (time.perf_counter() - start), mib


def throughput(devices: list[str], args) -> None:
    print("1. Throughput (target tokens/s; Adam, batch 256)")
    chapter_src, ptb_src = MarkovSource(200, 2, seed=0), MarkovSource(10_000, 0, seed=0)
    chapter_stream, chapter_vocab = corpus(chapter_src, args.chapter_tokens, seed=1)
    print(f"{'size':<40}{'device':<8}{'train tok/s':>14}{'eval tok/s':>14}")
    train_rates: dict = {}
    for name, size, src in (("chapter", CHAPTER, chapter_src), ("PTB-sized", PTB, ptb_src)):
        for device in devices:
            if name == "chapter":
                stream, vocab = chapter_stream, chapter_vocab
            else:
                n_tokens = args.ptb_tokens_cpu if device == "cpu" else args.ptb_tokens_gpu
                stream, vocab = corpus(src, n_tokens, seed=1)
            model = BengioNLM(len(vocab), size["n"], size["m"], size["h"], seed=0)
            label = f"{name} |V|={len(vocab)} n={size['n']} m={size['m']} h={size['h']}"
            train_rates[name, device] = train = train_speed(model, stream, device)
            print(f"{label:<40}{device:<8}{train:>14,.0f}{eval_speed(model, stream, device):>14,.0f}", flush=True)
    for name in ("chapter", "PTB-sized"):
        if ("cuda" in devices) and ("cpu" in devices):
            print(f"GPU / CPU training speed, {name}: {train_rates[name, 'cuda'] / train_rates[name, 'cpu']:.1f}x")
    if "cpu" in devices:
        peer, mib = peer_train_speed(chapter_stream, len(chapter_vocab), **CHAPTER)
        print(f"peer (nn.Embedding/nn.Linear + DataLoader over materialised windows, {mib:.0f} MiB of windows), "
              f"chapter size, cpu: {peer:,.0f} tok/s; seqlearn / peer = {train_rates['chapter', 'cpu'] / peer:.2f}x")
        held = 8 * len(chapter_stream) + 9 * int((chapter_stream != Vocab.bos_id).sum())
        print(f"seqlearn's WindowBatches hold {held / 2**20:.0f} MiB for the same data (any n)")


def best_kneser_ney(train, val, vocab) -> tuple[ModifiedKneserNey, int, float]:
    """The modified KN of order 2..5 with the lowest validation perplexity, and the time to fit all."""
    start = time.perf_counter()
    fits = [ModifiedKneserNey(k, fallback_discounts=FALLBACK).fit(train, vocab) for k in range(2, 6)]
    seconds = time.perf_counter() - start
    best = min(fits, key=lambda kn: kn.perplexity(val))
    return best, best.order, seconds / len(fits)


def time_to_reach_kn(device: str, args) -> None:
    print(f"\n2. Time for the NLM to reach modified Kneser-Ney (MarkovSource(200, 2), "
          f"{args.reach_tokens:,} training tokens, {device})")
    src = MarkovSource(200, 2, seed=0)
    train, vocab = corpus(src, args.reach_tokens, seed=1)
    val, _ = corpus(src, 100_000, seed=2)
    test, _ = corpus(src, 100_000, seed=3)
    kn, order, kn_seconds = best_kneser_ney(train, val, vocab)
    target = kn.perplexity(test)
    print(f"modified KN, best order {order}: test perplexity {target:.3f} (fit in {kn_seconds:.1f} s); "
          f"source entropy-rate perplexity {math.exp(src.entropy_rate()):.3f}")
    model = BengioNLM(len(vocab), 3, 30, 100, seed=0).to(device)
    batches = WindowBatches(train, 3, BATCH, shuffle=True, seed=0, vocab_size=len(vocab), device=device)
    opt = make_optimizer(model, "adam", lr=3e-3)
    seconds = 0.0
    for epoch in range(1, args.max_epochs + 1):
        start = time.perf_counter()
        fit(model, nlm_loss, opt, batches, epochs=1, device=device, progress=False)
        seconds += time.perf_counter() - start
        ppl = perplexity(model, test, device=device)
        print(f"  epoch {epoch}: NLM test perplexity {ppl:.3f} after {seconds:.1f} s of training", flush=True)
        if ppl <= target:
            print(f"NLM reaches KN's test perplexity after {epoch} epochs, {seconds:.1f} s of training "
                  f"({seconds / kn_seconds:.0f}x the time to fit one KN model)")
            return
    print(f"NLM did not reach KN's {target:.3f} within {args.max_epochs} epochs ({seconds:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--devices", default=None, help="comma-separated (default: cpu, and cuda if present)")
    parser.add_argument("--chapter-tokens", type=int, default=300_000)
    parser.add_argument("--ptb-tokens-cpu", type=int, default=20_000)
    parser.add_argument("--ptb-tokens-gpu", type=int, default=1_000_000)
    parser.add_argument("--reach-tokens", type=int, default=1_000_000)
    parser.add_argument("--max-epochs", type=int, default=10)
    parser.add_argument("--skip-reach", action="store_true")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    devices = args.devices.split(",") if args.devices else ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads, devices {devices}\n")
    throughput(devices, args)
    if not args.skip_reach:
        time_to_reach_kn("cuda" if "cuda" in devices else devices[0], args)


if __name__ == "__main__":
    main()
