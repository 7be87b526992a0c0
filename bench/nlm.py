"""Benchmark: training and evaluation speed of Bengio et al.'s NLM, and its time to match Kneser-Ney.

    python bench/nlm.py [--threads 1] [--devices cpu,cuda] [--repeats 3]
                        [--ptb-tokens-cpu 10000] [--ptb-tokens-gpu 1000000]
                        [--reach-tokens 1000000] [--max-epochs 8] [--skip-chapter] [--skip-reach]

1. Throughput, in target tokens per second, of one training epoch (Adam, batches of 256
   windows, ``train_nlm``; the best of ``--repeats`` epochs) and of evaluation
   (``token_logprobs``) on every device present:

   * the chapter's size: ``ToyEnglish`` text (300k tokens, |V| = 109), n = 3, m = 30, h = 64;
   * a Penn-Treebank-sized model: |V| = 10 003 (``MarkovSource(10000, 0)``, Zipfian words),
     n = 5, m = 100, h = 300.

   Alongside, on the CPU at the chapter's size, the peer a user would write by hand: the same
   model from ``torch.nn.Embedding``/``torch.nn.Linear`` layers, trained from a
   ``DataLoader`` over a ``TensorDataset`` of every window materialised in memory; the
   ratio is seqlearn's speed over the peer's. Its memory for the windows is printed too.
2. The chapter's experiment: on ``ToyEnglish`` text (300k training, 30k validation, 50k
   test tokens), modified KN of orders 2..8 (the best on validation), the NLM of section 1
   trained for 3 epochs, and their mixture with the weight fitted on validation data; test
   perplexities and wall times.
3. Time to reach modified Kneser-Ney: on ``MarkovSource(200, 2)`` text (``--reach-tokens``
   training tokens; 100k validation, 100k test), the best modified KN of orders 2-5 (lmplz's
   fallback discounts (0.5, 1, 1.5) where the estimate is undefined) against the NLM
   (n = 3, m = 30, h = 100, Adam) trained epoch by epoch until its test perplexity is at most
   KN's; prints the training time to get there and the ratio to KN's estimation time.

``--threads`` sets ``torch.set_num_threads`` (default: leave torch's choice). On a machine
whose cores other processes are also using, more than one thread can be many times slower
than one (threads wait for each other at every operation); compare ``--threads 1`` and 2.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch

from seqlearn.data.markov import MarkovSource
from seqlearn.data.synthetic import ToyEnglish
from seqlearn.data.vocab import Vocab, encode_sentences
from seqlearn.lm import perplexity, token_logprobs
from seqlearn.ngram import ModifiedKneserNey
from seqlearn.nlm import (
    BengioNLM,
    WindowBatches,
    basics,
    evaluate_mixture,
    make_optimizer,
    nlm_loss,
    train_nlm,
)
from seqlearn.training import fit

FALLBACK = (0.5, 1.0, 1.5)
CHAPTER = dict(order=3, embedding_dim=30, hidden_size=64)  # n, m, h
PTB = dict(order=5, embedding_dim=100, hidden_size=300)
BATCH = 256


def math_sizes(size: dict, sep: str = " ") -> str:
    """The paper's letters for a model size: ``n=3 m=30 h=64`` (with ``sep`` between)."""
    return sep.join(f"{letter}={size[name]}" for letter, name in zip("nmh", ("order", "embedding_dim", "hidden_size")))


def markov_corpus(source: MarkovSource, n_tokens: int, seed: int) -> tuple[np.ndarray, Vocab]:
    """An encoded stream of about ``n_tokens`` tokens, over the source's full vocabulary."""
    vocab = Vocab(source.words)
    return encode_sentences(source.sample(n_tokens=n_tokens, rng=seed), vocab), vocab


def toy_corpus() -> tuple[list[np.ndarray], Vocab]:
    """The chapter's ToyEnglish streams: train (300k tokens), validation (30k), test (50k)."""
    toy = ToyEnglish()
    train, val, test = (toy.sample(n_tokens=n, rng=seed) for n, seed in ((300_000, 0), (30_000, 1), (50_000, 2)))
    vocab = Vocab.build(train)
    return [encode_sentences(s, vocab) for s in (train, val, test)], vocab


def sentences_prefix(stream: np.ndarray, n_sentences: int) -> np.ndarray:
    starts = np.flatnonzero(stream == Vocab.bos_id)
    return stream if n_sentences >= len(starts) else stream[: starts[n_sentences]]


def train_speed(size: dict, V: int, stream: np.ndarray, device, repeats: int) -> float:
    """Best target tokens per second of one training epoch, over ``repeats`` epochs (after a warm-up)."""
    model = BengioNLM(V, **size, seed=0)
    train_nlm(model, sentences_prefix(stream, 50), None, epochs=1, batch_size=BATCH, device=device, progress=False)
    return max(
        train_nlm(
            model, stream, None, epochs=1, batch_size=BATCH, device=device, seed=r, progress=False
        ).tokens_per_second
        for r in range(repeats)
    )


def eval_speed(size: dict, V: int, stream: np.ndarray, device, repeats: int) -> float:
    """Best target tokens per second of ``token_logprobs`` over ``repeats`` runs."""
    model = BengioNLM(V, **size, seed=0).to(device)
    token_logprobs(model, sentences_prefix(stream, 50), device=device)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        n = len(token_logprobs(model, stream, device=device))
        rates.append(n / (time.perf_counter() - start))
    return max(rates)


class PlainNLM(torch.nn.Module):
    """The same model from standard layers (what one writes without seqlearn)."""

    def __init__(self, vocab_size, order, embedding_dim, hidden_size):
        super().__init__()
        V, n, m, h = vocab_size, order, embedding_dim, hidden_size
        self.embedding = torch.nn.Embedding(V, m)
        self.hidden = torch.nn.Linear((n - 1) * m, h)
        self.output = torch.nn.Linear(h, V)
        self.direct = torch.nn.Linear((n - 1) * m, V, bias=False)

    def forward(self, contexts):
        x = self.embedding(contexts).flatten(1)
        return self.output(torch.tanh(self.hidden(x))) + self.direct(x)


def peer_train_speed(stream: np.ndarray, V: int, size: dict, repeats: int) -> tuple[float, float]:
    """(best tokens/s, MiB of materialised windows) of the DataLoader + nn.Linear peer, on the CPU."""
    contexts, targets = (torch.from_numpy(a) for a in basics.context_windows(stream, size["order"]))
    mib = (contexts.numel() + targets.numel()) * 8 / 2**20
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(contexts, targets), batch_size=BATCH, shuffle=True
    )
    model = PlainNLM(V, **size)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for c, t in loader:
            loss = torch.nn.functional.cross_entropy(model(c), t)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss.item()
        rates.append(len(targets) / (time.perf_counter() - start))
    return max(rates), mib


def throughput(devices: list[str], args) -> None:
    print("1. Throughput (target tokens/s; Adam, batch 256; best of", args.repeats, "runs)")
    (toy_train, _, _), toy_vocab = toy_corpus()
    ptb_source = MarkovSource(10_000, 0, seed=0)
    print(f"{'size':<42}{'device':<8}{'train tok/s':>14}{'eval tok/s':>14}")
    rates: dict = {}
    for name, size in (("chapter", CHAPTER), ("PTB-sized", PTB)):
        for device in devices:
            if name == "chapter":
                stream, V = toy_train, len(toy_vocab)
            else:
                n_tokens = args.ptb_tokens_cpu if device == "cpu" else args.ptb_tokens_gpu
                stream, V = markov_corpus(ptb_source, n_tokens, seed=1)[0], ptb_source.vocab_size + 3
            rates[name, device] = train = train_speed(size, V, stream, device, args.repeats)
            label = f"{name} |V|={V} {math_sizes(size)}"
            print(
                f"{label:<42}{device:<8}{train:>14,.0f}{eval_speed(size, V, stream, device, args.repeats):>14,.0f}",
                flush=True,
            )
    for name in ("chapter", "PTB-sized"):
        if "cuda" in devices and "cpu" in devices:
            print(f"GPU / CPU training speed, {name}: {rates[name, 'cuda'] / rates[name, 'cpu']:.1f}x")
    if "cpu" in devices:
        peer, mib = peer_train_speed(toy_train, len(toy_vocab), CHAPTER, args.repeats)
        held = (8 * len(toy_train) + 9 * int((toy_train != Vocab.bos_id).sum())) / 2**20
        print(
            f"peer: nn.Embedding/nn.Linear + DataLoader over all windows materialised ({mib:.1f} MiB; "
            f"WindowBatches hold {held:.1f} MiB at any n), chapter size, cpu: {peer:,.0f} tok/s; "
            f"seqlearn / peer = {rates['chapter', 'cpu'] / peer:.2f}x"
        )


def chapter_experiment(device: str) -> None:
    print(f"\n2. The chapter's experiment (ToyEnglish, 300k training tokens, {device})")
    start = time.perf_counter()
    (train, val, test), vocab = toy_corpus()
    print(f"sampling and encoding: {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    models = [ModifiedKneserNey(k, fallback_discounts=FALLBACK).fit(train, vocab) for k in range(2, 9)]
    kn = min(models, key=lambda model: model.perplexity(val))
    print(f"modified KN orders 2..8 fitted and compared in {time.perf_counter() - start:.1f} s; best order {kn.order}")
    model = BengioNLM(len(vocab), **CHAPTER, seed=0)
    history = train_nlm(model, train, val, epochs=3, batch_size=BATCH, lr=3e-3, device=device, seed=0, progress=False)
    print(
        f"NLM ({math_sizes(CHAPTER, ', ')}, Adam 3e-3, batch {BATCH}, 3 epochs) "
        f"trained in {history.seconds:.1f} s ({history.tokens_per_second:,.0f} tok/s incl. validation); "
        f"validation perplexity by epoch {[round(p, 3) for p in history.val_perplexity]}"
    )
    report = evaluate_mixture(
        token_logprobs(model, val), kn.token_logprobs(val), token_logprobs(model, test), kn.token_logprobs(test)
    )
    better = min(report.perplexity_a, report.perplexity_b)
    print(
        f"test perplexity: KN {report.perplexity_b:.3f}, NLM {report.perplexity_a:.3f} "
        f"({report.perplexity_a / report.perplexity_b:.3f}x KN), mixture {report.perplexity_mixture:.3f} "
        f"(lambda = {report.lam:.3f}; {report.perplexity_mixture / better:.3f}x the better model)"
    )


def time_to_reach_kn(device: str, args) -> None:
    print(
        f"\n3. Time for the NLM to reach modified Kneser-Ney (MarkovSource(200, 2), "
        f"{args.reach_tokens:,} training tokens, {device})"
    )
    source = MarkovSource(200, 2, seed=0)
    (train, vocab), (val, _), (test, _) = (
        markov_corpus(source, n, seed) for n, seed in ((args.reach_tokens, 1), (100_000, 2), (100_000, 3))
    )
    start = time.perf_counter()
    models = [ModifiedKneserNey(k, fallback_discounts=FALLBACK).fit(train, vocab) for k in range(2, 6)]
    kn_seconds = (time.perf_counter() - start) / len(models)
    kn = min(models, key=lambda model: model.perplexity(val))
    target = kn.perplexity(test)
    print(
        f"modified KN, best order {kn.order}: test perplexity {target:.3f} (one fit: {kn_seconds:.2f} s); "
        f"the source's entropy rate is perplexity {math.exp(source.entropy_rate()):.3f}"
    )
    model = BengioNLM(len(vocab), 3, 30, 100, seed=0).to(device)
    batches = WindowBatches(train, 3, BATCH, shuffle=True, seed=0, vocab_size=len(vocab), device=device)
    opt = make_optimizer(model, "adam", lr=3e-3)
    seconds = 0.0
    for epoch in range(1, args.max_epochs + 1):
        start = time.perf_counter()
        fit(model, nlm_loss, opt, batches, epochs=1, device=device, progress=False)
        seconds += time.perf_counter() - start
        ppl = perplexity(model, test, device=device)
        print(f"  epoch {epoch}: NLM (n=3, m=30, h=100) test perplexity {ppl:.3f} after {seconds:.1f} s", flush=True)
        if ppl <= target:
            print(
                f"the NLM reaches KN's test perplexity after {epoch} epochs: {seconds:.1f} s of training, "
                f"{seconds / kn_seconds:.0f}x the time to fit one KN model"
            )
            return
    print(
        f"the NLM did not reach KN's {target:.3f} within {args.max_epochs} epochs ({seconds:.1f} s, "
        f"{seconds / kn_seconds:.0f}x the time to fit one KN model)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--devices", default=None, help="comma-separated (default: cpu, and cuda if present)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ptb-tokens-cpu", type=int, default=10_000)
    parser.add_argument("--ptb-tokens-gpu", type=int, default=1_000_000)
    parser.add_argument("--reach-tokens", type=int, default=1_000_000)
    parser.add_argument("--max-epochs", type=int, default=8)
    parser.add_argument("--skip-chapter", action="store_true")
    parser.add_argument("--skip-reach", action="store_true")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    devices = args.devices.split(",") if args.devices else ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads, devices {devices}\n")
    throughput(devices, args)
    fastest = "cuda" if "cuda" in devices else devices[0]
    if not args.skip_chapter:
        chapter_experiment(fastest)
    if not args.skip_reach:
        time_to_reach_kn(fastest, args)


if __name__ == "__main__":
    main()
