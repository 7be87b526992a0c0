"""Benchmark: seqlearn's n-gram engine against KenLM (and NLTK), on Penn Treebank or a corpus of its shape.

    python bench/ngram.py [--repeats 3] [--quick]

Corpus: Penn Treebank (Mikolov's split) when it is in seqlearn's data cache
(``seqlearn.data.data_dir()``; it is never downloaded here), else a synthetic corpus of its
size and shape: about 887k training and 82k test tokens over a 10k vocabulary, from
``MarkovSource(2500, order=1)`` whose words come in up to four variants (``w12``,
``w12.1``, ...). The script says which it used. ``--quick`` runs a small corpus once (for
the test suite).

Every measurement runs in a fresh interpreter, so that its peak resident memory (Linux's
``VmHWM``, read by the child when the step is done) is its own; times are the median
of ``--repeats`` runs, all in this one run, with the load average printed.

1. Estimate a modified Kneser-Ney 3- and 5-gram model and write it as ARPA:
   ``seqlearn ngram estimate --discount-fallback`` (wall time of the whole command, its CPU
   time and peak memory) against KenLM's ``lmplz --discount_fallback`` when it is on the
   PATH or built by ``bench/build_lmplz.sh`` (its Python module cannot estimate; ``lmplz``
   is not on PyPI). lmplz is given as much memory (``-S``) as seqlearn's estimate used at
   its peak: by default it reserves 80% of the machine's memory, and faulting in that
   buffer can cost it more time than the estimate itself (15 s instead of 2 s on a 24 GB
   machine).
2. Load each ARPA file (seqlearn's ``read_arpa``, KenLM's ``kenlm.Model``), and the same
   model in seqlearn's binary format (``read_npz``; KenLM's own binary format needs its
   ``build_binary``, not on PyPI), then score the
   test text: every token's log-probability in one call (``token_logprobs``), every
   sentence's in one call (``sentence_logprobs``) and one sentence per call
   (``sentence_logprob``, plain Python for backoff models). KenLM has no
   batch call: all three are its ``score`` per sentence (the fastest of three passes, as
   for seqlearn).
3. ``seqlearn ngram perplexity`` of the 5-gram, end to end (time and peak memory).
4. NLTK's ``KneserNeyInterpolated`` on a prefix of the corpus (it is far too slow for all
   of it): fit and perplexity against seqlearn's on the same data. NLTK pads with N - 1
   ``<s>``/``</s>``, gives unseen words probability 0 and discounts by a fixed 0.1, so only
   the times are comparable.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _machine import cpu_name, load

from seqlearn.data import data_dir, load_ptb
from seqlearn.data.download import REGISTRY
from seqlearn.data.markov import MarkovSource
from seqlearn.data.vocab import read_sentences
from seqlearn.ngram import ModifiedKneserNey

ROOT = Path(__file__).resolve().parents[1]
ORDERS = (3, 5)
FALLBACK = (0.5, 1.0, 1.5)
LMPLZ_EARLIER = "3.9 s CPU for the 5-gram on Penn Treebank, measured earlier on a 2-core machine (not here)"

RUSAGE = """
import json, resource
def peak_mib():
    # VmHWM: this process's own peak (ru_maxrss also counts what the parent held when it forked)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
def report(**values):
    usage = resource.getrusage(resource.RUSAGE_SELF)
    values.update(cpu=usage.ru_utime + usage.ru_stime, peak_mib=peak_mib())
    print(json.dumps(values))
"""

ESTIMATE = (
    RUSAGE
    + """
import sys
from seqlearn.ngram.cli import main
status = main(["estimate", "--order", sys.argv[1], "--discount-fallback", "--text", sys.argv[2], "--arpa", sys.argv[3]])
report(status=status)
"""
)

PERPLEXITY = (
    RUSAGE
    + """
import sys
from seqlearn.ngram.cli import main
status = main(["perplexity", sys.argv[1], "--text", sys.argv[2]])
report(status=status)
"""
)

SEQLEARN_QUERY = (
    RUSAGE
    + """
import math, sys, time
from seqlearn.data.vocab import read_sentences
from seqlearn.ngram import read_arpa
test = read_sentences(sys.argv[2])
start = time.perf_counter()
model = read_arpa(sys.argv[1])
load_s = time.perf_counter() - start
load_peak = peak_mib()
def fastest(score):
    times = []
    for _ in range(3):
        start = time.perf_counter()
        score()
        times.append(time.perf_counter() - start)
    return min(times)
logp = model.token_logprobs(test)
batch = fastest(lambda: model.token_logprobs(test))
sentences = fastest(lambda: model.sentence_logprobs(test))
start = time.perf_counter()
for sentence in test:
    model.sentence_logprob(sentence)
one = time.perf_counter() - start
report(load=load_s, load_peak_mib=load_peak, batch=batch, sentences=sentences, one=one, tokens=len(logp),
       log10=float(logp.sum() / math.log(10)))
"""
)

NPZ_LOAD = (
    RUSAGE
    + """
import sys
from seqlearn.ngram import read_arpa
read_arpa(sys.argv[1]).to_npz(sys.argv[2])
report()
""",
    RUSAGE
    + """
import sys, time
from seqlearn.ngram import read_npz
start = time.perf_counter()
model = read_npz(sys.argv[1])
load_s = time.perf_counter() - start
report(load=load_s, load_peak_mib=peak_mib())
""",
)

KENLM_QUERY = (
    RUSAGE
    + """
import sys, time
import kenlm
lines = [line for line in open(sys.argv[2], encoding="utf-8").read().splitlines() if line.strip()]
start = time.perf_counter()
model = kenlm.Model(sys.argv[1])
load_s = time.perf_counter() - start
load_peak = peak_mib()
batch = []
for _ in range(3):
    start = time.perf_counter()
    log10 = sum(model.score(line) for line in lines)
    batch.append(time.perf_counter() - start)
tokens = sum(len(line.split()) + 1 for line in lines)
report(load=load_s, load_peak_mib=load_peak, batch=min(batch), sentences=min(batch), one=min(batch), tokens=tokens,
       log10=log10)
"""
)


def child(code: str, *argv) -> dict:
    """Run ``code`` in a fresh interpreter; the JSON it prints last, with its wall time ("wall")."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"a benchmark step failed:\n{done.stderr}")
    return {**json.loads(done.stdout.splitlines()[-1]), "wall": wall}


def median_run(repeats: int, code: str, *argv) -> dict:
    """Each value's median over ``repeats`` runs of :func:`child`."""
    runs = [child(code, *argv) for _ in range(repeats)]
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


# -- the corpus -----------------------------------------------------------------------------------


def cached_ptb():
    """Penn Treebank's splits when all three are in the data cache, else None (nothing is downloaded)."""
    if not all((data_dir() / REGISTRY[f"ptb-{s}"].filename).exists() for s in ("train", "valid", "test")):
        return None
    return load_ptb()


def ptb_shaped(quick: bool):
    """A synthetic corpus of Penn Treebank's size and shape (about 10k word types, 21 words a sentence)."""
    source = MarkovSource(vocab_size=2500, order=1, mean_length=21.0, seed=0)
    n_train, n_test = (30_000, 3_000) if quick else (887_521, 78_669)
    splits = []
    for n, seed in ((n_train, 1), (n_test, 2)):
        rng = np.random.default_rng(seed + 10)
        sentences = [s for s in source.sample(n_tokens=n, rng=seed) if s]
        variants = [rng.choice(4, size=len(s), p=[0.55, 0.25, 0.12, 0.08]) for s in sentences]
        splits.append([[w if v == 0 else f"{w}.{v}" for w, v in zip(s, vs)] for s, vs in zip(sentences, variants)])
    return splits


def corpus(quick: bool, tmp: Path) -> tuple[str, Path, Path]:
    """Write the training and test text to ``tmp``; returns a description and the two paths."""
    ptb = None if quick else cached_ptb()
    if ptb is not None:
        name, train, test = "Penn Treebank (Mikolov's split, from the data cache)", ptb["train"], ptb["test"]
    else:
        why = "--quick" if quick else f"Penn Treebank is not in the data cache ({data_dir()})"
        name = f"synthetic corpus of Penn Treebank's shape ({why})"
        train, test = ptb_shaped(quick)
    paths = tmp / "train.txt", tmp / "test.txt"
    for path, sentences in zip(paths, (train, test)):
        path.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
    return name, *paths


# -- the steps --------------------------------------------------------------------------------------


def fmt_time(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 0.1 else f"{seconds * 1e3:.1f} ms"


def ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}x"


def estimate(repeats: int, train: Path, tmp: Path) -> dict[int, dict]:
    """seqlearn's CLI estimate for each order; writes tmp/model{N}.arpa."""
    return {N: median_run(repeats, ESTIMATE, N, train, tmp / f"model{N}.arpa") for N in ORDERS}


def watched(command: list[str]) -> tuple[str, float]:
    """Run ``command``; its standard error and its peak resident memory (MiB).

    The peak is the process's own ``VmHWM``, read every few milliseconds while it runs (its
    ``ru_maxrss`` would include the size of this process, which it was forked from).
    """
    with tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        peak = 0.0
        while process.poll() is None:
            with contextlib.suppress(OSError, StopIteration), open(f"/proc/{process.pid}/status") as status:
                peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
            time.sleep(0.005)
        if process.returncode != 0:
            raise subprocess.CalledProcessError(process.returncode, command)
        err.seek(0)
        return err.read(), peak


def lmplz_binary() -> str | None:
    """KenLM's lmplz: on the PATH, or built by ``bench/build_lmplz.sh`` into ``build/kenlm``."""
    built = ROOT / "build" / "kenlm" / "build" / "bin" / "lmplz"
    return shutil.which("lmplz") or (str(built) if built.exists() else None)


def lmplz(repeats: int, train: Path, tmp: Path, est: dict[int, dict]) -> dict[int, dict] | str:
    """lmplz for each order (wall, CPU and peak memory from its own report), given as much memory
    (``-S``) as seqlearn's estimate of that order peaked at; or why there is none."""
    binary = lmplz_binary()
    if binary is None:
        return (
            "lmplz is absent (KenLM's binaries are not on PyPI: bench/build_lmplz.sh builds it); "
            f"for reference, lmplz took {LMPLZ_EARLIER}"
        )
    results = {}
    for N in ORDERS:
        memory = f"{max(int(est[N]['peak_mib']), 64)}M"
        runs = []
        for _ in range(repeats):
            command = [binary, "-o", str(N), "-S", memory, "--discount_fallback", "-T", str(tmp)]
            command += ["--text", str(train), "--arpa", str(tmp / "lmplz.arpa")]
            stderr, peak = watched(command)
            report = dict(re.findall(r"(\w+):([\d.]+)", stderr.splitlines()[-1]))  # "... CPU:<s> real:<s>"
            runs.append({"wall": float(report["real"]), "cpu": float(report["CPU"]), "peak_mib": peak})
        results[N] = {key: statistics.median(run[key] for run in runs) for key in runs[0]} | {"memory": memory}
    return results


def query(repeats: int, test: Path, tmp: Path) -> tuple[dict, dict | str]:
    """Load and scoring of each order's ARPA file by seqlearn and by KenLM (or why not KenLM), and
    seqlearn's load of the same model in its binary format ("npz")."""
    ours = {N: median_run(repeats, SEQLEARN_QUERY, tmp / f"model{N}.arpa", test) for N in ORDERS}
    for N in ORDERS:
        child(NPZ_LOAD[0], tmp / f"model{N}.arpa", tmp / f"model{N}.npz")
        ours[N]["npz"] = median_run(repeats, NPZ_LOAD[1], tmp / f"model{N}.npz")
    if importlib.util.find_spec("kenlm") is None:
        return ours, "KenLM's Python module is not installed (pip install -e '.[kenlm]')"
    return ours, {N: median_run(repeats, KENLM_QUERY, tmp / f"model{N}.arpa", test) for N in ORDERS}


def table(est, lm, ours, kenlm, ppl) -> None:
    """The comparison table: seqlearn, KenLM, ratio (seqlearn / KenLM: above 1 is slower or bigger)."""
    rows = []
    k3, k5 = (kenlm[3], kenlm[5]) if isinstance(kenlm, dict) else (None, None)
    for N, k in ((3, k3), (5, k5)):
        o = ours[N]
        rows.append(
            (
                f"load the {N}-gram ARPA",
                f"{fmt_time(o['load'])}, peak {o['load_peak_mib']:.0f} MiB",
                f"{fmt_time(k['load'])}, peak {k['load_peak_mib']:.0f} MiB" if k else "-",
                f"{ratio(o['load'], k['load'])} time, {ratio(o['load_peak_mib'], k['load_peak_mib'])} memory"
                if k
                else "-",
            )
        )
    for N, k in ((3, k3), (5, k5)):
        o = ours[N]["npz"]
        rows.append(
            (
                f"load the {N}-gram, seqlearn's .npz",
                f"{fmt_time(o['load'])}, peak {o['load_peak_mib']:.0f} MiB",
                "(its ARPA load above)" if k else "-",
                f"{ratio(o['load'], k['load'])} time, {ratio(o['load_peak_mib'], k['load_peak_mib'])} memory"
                if k
                else "-",
            )
        )
    for N, k in ((3, k3), (5, k5)):
        o = ours[N]
        speed = o["tokens"] / o["batch"], o["tokens"] / o["sentences"], o["tokens"] / o["one"]
        theirs = (k["tokens"] / k["batch"],) * 3 if k else None
        labels = ("all tokens in one call", "sentence scores in one call", "one sentence per call")
        for i, label in enumerate(labels):
            rows.append(
                (
                    f"score {N}-gram, {label}",
                    f"{speed[i] / 1e6:.2f}M tok/s",
                    f"{theirs[i] / 1e6:.2f}M tok/s" if theirs else "-",
                    f"{theirs[i] / speed[i]:.2f}x slower" if theirs else "-",
                )
            )
    for N in ORDERS:
        e, k = est[N], lm[N] if isinstance(lm, dict) else None
        rows.append(
            (
                f"estimate MKN {N}-gram -> ARPA (CLI)",
                f"{fmt_time(e['wall'])} wall, {e['cpu']:.2f} s CPU, peak {e['peak_mib']:.0f} MiB",
                f"lmplz -S {k['memory']}: {fmt_time(k['wall'])} wall, {k['cpu']:.2f} s CPU, "
                f"peak {k['peak_mib']:.0f} MiB"
                if k
                else "lmplz absent (see below)",
                f"{ratio(e['wall'], k['wall'])} wall, {ratio(e['cpu'], k['cpu'])} CPU" if k else "-",
            )
        )
    rows.append(
        (
            "seqlearn ngram perplexity, 5-gram",
            f"{fmt_time(ppl['wall'])} wall, peak {ppl['peak_mib']:.0f} MiB",
            "-",
            "-",
        )
    )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    header = ("operation", "seqlearn", "KenLM", "ratio seqlearn/KenLM")
    widths = [max(w, len(h)) for w, h in zip(widths, header)]
    for row in (header, tuple("-" * w for w in widths), *rows):
        print("  " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)))


def agreement(ours: dict, kenlm) -> None:
    """The test set's log10 probability by both (KenLM computes in float32)."""
    for N in ORDERS:
        line = f"  {N}-gram test log10 P: seqlearn {ours[N]['log10']:.4f}"
        if isinstance(kenlm, dict):
            rel = abs(ours[N]["log10"] - kenlm[N]["log10"]) / abs(kenlm[N]["log10"])
            line += f", KenLM {kenlm[N]['log10']:.4f} (relative difference {rel:.1e})"
        print(line + f"; perplexity {10 ** (-ours[N]['log10'] / ours[N]['tokens']):.2f}")


# -- NLTK -----------------------------------------------------------------------------------------


def n_words(sentences) -> int:
    return sum(len(s) for s in sentences)


def prefix(sentences, tokens: int):
    """The first sentences holding at least ``tokens`` words."""
    total = 0
    for i, s in enumerate(sentences):
        total += len(s)
        if total >= tokens:
            return sentences[: i + 1]
    return sentences


def timed(func, *args):
    start = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - start


def fit_nltk(N: int, sentences):
    from nltk.lm import KneserNeyInterpolated
    from nltk.lm.preprocessing import padded_everygram_pipeline

    lm = KneserNeyInterpolated(N)
    lm.fit(*padded_everygram_pipeline(N, sentences))
    return lm


def bench_nltk(train, test) -> None:
    """NLTK and seqlearn on the same prefix: fit from sentences, perplexity of test sentences."""
    if importlib.util.find_spec("nltk") is None:
        print("  NLTK is not installed: skipped")
        return
    import nltk
    from nltk.lm.preprocessing import pad_both_ends
    from nltk.util import ngrams

    print(f"  NLTK {nltk.__version__} KneserNeyInterpolated vs seqlearn ModifiedKneserNey on the same prefix:")
    print(f"  {n_words(train):,} training words, {n_words(test) + len(test):,} test tokens")
    for N in ORDERS:
        lm, t_nltk_fit = timed(fit_nltk, N, train)
        test_ngrams = [g for s in test for g in ngrams(pad_both_ends(s, n=N), N)]
        nltk_ppl, t_nltk_ppl = timed(lm.perplexity, test_ngrams)
        model, t_fit = timed(ModifiedKneserNey(N, fallback_discounts=FALLBACK).fit, train)
        ppl, t_ppl = timed(model.perplexity, test)
        for step, t_nltk, t_ours in (("fit:       ", t_nltk_fit, t_fit), ("perplexity:", t_nltk_ppl, t_ppl)):
            print(f"  {N}-gram {step} NLTK {t_nltk:8.3f} s   seqlearn {t_ours:.4f} s   ratio {t_nltk / t_ours:,.0f}x")
        print(f"          perplexities: NLTK {nltk_ppl:.4g}, seqlearn {ppl:.4g} (not comparable, see the docstring)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement (the median is shown)")
    parser.add_argument("--quick", action="store_true", help="a small synthetic corpus, one run each")
    parser.add_argument("--nltk-train-tokens", type=int, default=20_000)
    parser.add_argument("--nltk-test-tokens", type=int, default=2_000)
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    print(f"{cpu_name()}, {os.cpu_count()} cores, {load()} at the start; median of {repeats} run(s)")
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        name, train, test = corpus(args.quick, tmp)
        train_sentences, test_sentences = read_sentences(train), read_sentences(test)
        vocab = {w for s in train_sentences for w in s}
        print(
            f"corpus: {name}: {n_words(train_sentences):,} training words in {len(train_sentences):,} sentences, "
            f"{n_words(test_sentences) + len(test_sentences):,} test tokens (words and </s>), "
            f"{len(vocab):,} word types"
        )
        est = estimate(repeats, train, tmp)
        lm = lmplz(repeats, train, tmp, est)
        ours, kenlm = query(repeats, test, tmp)
        ppl = median_run(repeats, PERPLEXITY, tmp / "model5.arpa", test)
        print(f"\nseqlearn vs KenLM ({load()} at the end):")
        table(est, lm, ours, kenlm, ppl)
        for what in (lm, kenlm):
            if isinstance(what, str):
                print(f"  {what}")
        agreement(ours, kenlm)
    quick_nltk = (2_000, 300) if args.quick else (args.nltk_train_tokens, args.nltk_test_tokens)
    print("\nNLTK:")
    bench_nltk(prefix(train_sentences, quick_nltk[0]), prefix(test_sentences, quick_nltk[1]))


if __name__ == "__main__":
    main()
