"""Benchmark: modified Kneser-Ney estimation and perplexity, seqlearn against NLTK (and lmplz).

    python bench/ngram.py [--train-tokens 1000000] [--test-tokens 100000]
                          [--nltk-train-tokens 20000] [--nltk-test-tokens 2000]

The corpus is the course's own synthetic text: ``MarkovSource(vocab_size=3000, order=1,
seed=0)`` (Zipfian words, a first-order Markov chain), training and test sentences drawn
with different seeds. Every word of it follows many different words, so no unigram has an
adjusted count of 1 to 3 and the unigram discounts cannot be estimated: the models use
lmplz's fallback discounts (0.5, 1, 1.5) for that order, as ``lmplz --discount_fallback``
does; the other orders are estimated.

1. seqlearn at full size: estimation of 3- and 5-gram models (vocabulary and encoding
   timed apart from the vectorised estimation), perplexity of the test text, and the peak
   memory of each step (``tracemalloc``, a second run so that tracing does not slow the
   timed one).
2. NLTK's ``KneserNeyInterpolated`` is far too slow for the full corpus, so both libraries
   run on the same prefix of it (``--nltk-*-tokens``): fit from sentences and perplexity of
   test sentences, timed end to end (seqlearn's times include building its vocabulary and
   encoding). The ratio is of these times. NLTK's figure at full size is extrapolated
   linearly per token, which flatters NLTK: its per-token scoring cost grows with the model.
   NLTK pads with N - 1 ``<s>``/``</s>`` and gives unseen words probability 0, so its
   perplexity is not comparable to seqlearn's; only the times are.
3. If KenLM's ``lmplz`` is on the PATH, its wall time for the same full-size models
   (it uses several threads).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path

from seqlearn.data.synthetic import MarkovSource
from seqlearn.data.vocab import Vocab, encode_sentences
from seqlearn.ngram import ModifiedKneserNey

FALLBACK = (0.5, 1.0, 1.5)
ORDERS = (3, 5)


def timed(func, *args):
    """(result, seconds) of ``func(*args)``."""
    start = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - start


def peak_mib(func, *args) -> float:
    """Peak Python/numpy memory allocated while ``func(*args)`` runs, in MiB."""
    tracemalloc.start()
    func(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def n_tokens(sentences) -> int:
    return sum(len(s) for s in sentences)


def prefix(sentences, tokens: int):
    """The first sentences holding at least ``tokens`` words."""
    total = 0
    for i, s in enumerate(sentences):
        total += len(s)
        if total >= tokens:
            return sentences[: i + 1]
    return sentences


def encode(sentences):
    vocab = Vocab.build(sentences)
    return vocab, encode_sentences(sentences, vocab)


def fit_mkn(N: int, data, vocab=None) -> ModifiedKneserNey:
    return ModifiedKneserNey(N, fallback_discounts=FALLBACK).fit(data, vocab)


def fit_nltk(N: int, sentences):
    from nltk.lm import KneserNeyInterpolated
    from nltk.lm.preprocessing import padded_everygram_pipeline

    lm = KneserNeyInterpolated(N)
    lm.fit(*padded_everygram_pipeline(N, sentences))
    return lm


def bench_seqlearn(train, test) -> dict[str, float]:
    """Full-size seqlearn timings; returns seconds by step ("encode", "fit3", "arpa5", ...)."""
    (vocab, train_ids), t_encode = timed(encode, train)
    test_ids = encode_sentences(test, vocab)
    print(f"  vocabulary + encoding of {n_tokens(train):,} tokens: {t_encode:.2f} s (pure Python, seqlearn.data)")
    seconds = {"encode": t_encode}
    for N in ORDERS:
        model, t_fit = timed(fit_mkn, N, train_ids, vocab)
        report, t_ppl = timed(model.evaluate, test_ids)
        m_fit, m_ppl = peak_mib(fit_mkn, N, train_ids, vocab), peak_mib(model.evaluate, test_ids)
        sizes = " ".join(f"{model.index_.size(k):,}" for k in range(1, N + 1))
        print(f"  {N}-gram: estimation {t_fit:.2f} s (peak {m_fit:.0f} MiB; n-gram types {sizes})")
        print(
            f"          perplexity of {report.n_tokens:,} tokens: {t_ppl:.3f} s (peak {m_ppl:.0f} MiB), "
            f"{report.n_tokens / t_ppl:,.0f} tokens/s; perplexity {report.perplexity:.2f}"
        )
        with tempfile.TemporaryDirectory() as tmp:
            _, t_arpa = timed(model.to_arpa, Path(tmp) / "model.arpa")
        print(f"          writing the ARPA file: {t_arpa:.2f} s (Python string formatting)")
        seconds.update({f"fit{N}": t_fit, f"ppl{N}": t_ppl, f"arpa{N}": t_arpa})
    return seconds


def bench_against_nltk(train, test, full_train_tokens: int, full_test_tokens: int, full: dict[str, float]) -> None:
    import nltk
    from nltk.lm.preprocessing import pad_both_ends
    from nltk.util import ngrams

    n_train, n_test = n_tokens(train), n_tokens(test) + len(test)  # test tokens include </s>
    print(f"  NLTK {nltk.__version__} KneserNeyInterpolated vs seqlearn ModifiedKneserNey, on a prefix of the corpus")
    print(f"  same data for both: {n_train:,} training words, {n_test:,} test tokens")
    for N in ORDERS:
        lm, t_nltk_fit = timed(fit_nltk, N, train)
        test_ngrams = [g for s in test for g in ngrams(pad_both_ends(s, n=N), N)]
        nltk_ppl, t_nltk_ppl = timed(lm.perplexity, test_ngrams)
        model, t_fit = timed(fit_mkn, N, train)
        ppl, t_ppl = timed(model.perplexity, test)
        for step, t_nltk, t_ours in (("fit:       ", t_nltk_fit, t_fit), ("perplexity:", t_nltk_ppl, t_ppl)):
            print(f"  {N}-gram {step} NLTK {t_nltk:7.2f} s   seqlearn {t_ours:.4f} s   ratio {t_nltk / t_ours:,.0f}x")
        both = (t_nltk_fit + t_nltk_ppl) / (t_fit + t_ppl)
        print(f"  {N}-gram fit + perplexity ratio {both:,.0f}x (perplexities: NLTK {nltk_ppl:.4g}, seqlearn {ppl:.4g})")
        nltk_fit, nltk_ppl = t_nltk_fit * full_train_tokens / n_train, t_nltk_ppl * full_test_tokens / n_test
        ours_fit = full["encode"] + full[f"fit{N}"]
        print(
            f"          full size, NLTK extrapolated: fit {nltk_fit:,.0f} s = {nltk_fit / ours_fit:,.0f}x seqlearn's "
            f"vocabulary + encoding + estimation ({nltk_fit / full[f'fit{N}']:,.0f}x its estimation alone); "
            f"perplexity {nltk_ppl / 60:,.0f} min = {nltk_ppl / full[f'ppl{N}']:,.0f}x"
        )


def run_quietly(command: list[str]) -> None:
    subprocess.run(command, check=True, capture_output=True)


def bench_lmplz(train, full: dict[str, float]) -> None:
    lmplz = shutil.which("lmplz")
    if lmplz is None:
        print("  lmplz not found on the PATH: skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "train.txt"
        text.write_text("\n".join(" ".join(s) for s in train) + "\n", encoding="utf-8")
        for N in ORDERS:
            command = [lmplz, "-o", str(N), "--discount_fallback", "-S", "20%", "-T", tmp, "--text", str(text)]
            command += ["--arpa", str(Path(tmp) / "model.arpa")]
            _, seconds = timed(run_quietly, command)
            ours = full["encode"] + full[f"fit{N}"] + full[f"arpa{N}"]
            print(
                f"  {N}-gram, text to ARPA file: lmplz {seconds:.2f} s (wall, several threads), seqlearn {ours:.2f} s "
                f"(of which estimation {full[f'fit{N}']:.2f} s)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train-tokens", type=int, default=1_000_000)
    parser.add_argument("--test-tokens", type=int, default=100_000)
    parser.add_argument("--nltk-train-tokens", type=int, default=20_000)
    parser.add_argument("--nltk-test-tokens", type=int, default=2_000)
    args = parser.parse_args()

    source = MarkovSource(vocab_size=3000, order=1, seed=0)
    (train, test), t_sample = timed(
        lambda: (source.sample(n_tokens=args.train_tokens, rng=1), source.sample(n_tokens=args.test_tokens, rng=2))
    )
    print(
        f"corpus: {source!r}; {n_tokens(train):,} training and {n_tokens(test):,} test words "
        f"({t_sample:.1f} s to sample); entropy-rate perplexity floor {source.perplexity_floor():.2f}"
    )
    print("seqlearn (one core, numpy):")
    full = bench_seqlearn(train, test)
    print("NLTK:")
    bench_against_nltk(
        prefix(train, args.nltk_train_tokens),
        prefix(test, args.nltk_test_tokens),
        n_tokens(train),
        n_tokens(test) + len(test),
        full,
    )
    print("KenLM lmplz, same full-size training text:")
    bench_lmplz(train, full)
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10  # kB on Linux
    print(f"peak resident memory of this process: {peak_rss:,.0f} MiB")


if __name__ == "__main__":
    main()
