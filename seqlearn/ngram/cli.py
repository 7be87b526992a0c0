"""The ``seqlearn ngram`` command, in the style of KenLM's ``lmplz`` and ``query``.

The top-level ``seqlearn`` command registers it with :func:`add_subparser` and runs
``args.func(args)``; :func:`main` runs it on its own (``python -m seqlearn.ngram.cli``).
What it does is :data:`HELP`, which ``--help`` prints.
"""

from __future__ import annotations

import argparse
import functools
import sys

import numpy as np

from ..data.vocab import Vocab, decode_utf8, read_text, sentence_starts, tokenize
from .models import METHODS, DiscountEstimationError, make_model, read_arpa, read_npz
from .npz import is_npz

__all__ = ["HELP", "add_subparser", "main"]

HELP = """\
n-gram language models, in the style of KenLM's lmplz and query.

Text is read one sentence per line, tokens separated by whitespace:

    seqlearn ngram estimate --order 3 [--method mkn|kn|abs|addk|mle] [--k K] < train.txt > model.arpa
    seqlearn ngram perplexity model.arpa < test.txt

estimate builds the vocabulary from the training text and writes the model in ARPA format
(add-k only for order 1: higher orders are not backoff models); with --npz PATH it writes
seqlearn's binary format, which loads many times faster, instead (or as well, with --arpa).
perplexity reads either format, counts </s> and not <s>, maps unknown words to <unk>, and
reports the perplexity with and without the OOV positions, with the token and OOV counts.
"""


def _reporting_errors(command):
    """Run ``command(args)``; print a bad-input error to stderr and return 1 instead of raising."""

    @functools.wraps(command)
    def run(args) -> int:
        try:
            return command(args)
        except (ValueError, TypeError, OSError) as e:
            print(f"seqlearn ngram {args.ngram_command}: error: {e}", file=sys.stderr)
            return 1

    return run


def _read_text(path: str | None) -> str:
    """The text of a file, or of standard input when ``path`` is None or ``-``."""
    if path in (None, "-"):
        return decode_utf8(sys.stdin.buffer.read(), "standard input")
    return read_text(path)


LMPLZ_FALLBACK = [0.5, 1.0, 1.5]
"""lmplz's ``--discount_fallback`` default, D1 D2 D3+."""


def _discount_option(values: list[float]):
    """One number for every order, or the list as given."""
    return values[0] if len(values) == 1 else values


def _model_options(args) -> dict:
    """Keyword arguments of the chosen model class from ``--k``, ``--discount`` and ``--discount-fallback``."""
    given = [name for name in ("discount", "discount_fallback") if getattr(args, name) is not None]
    if args.method in ("addk", "mle") and given:
        raise ValueError(f"--{given[0].replace('_', '-')} does not apply to --method {args.method}")
    if args.method == "addk":
        return {"k": args.k}
    options = {}
    if args.discount is not None:
        options["discounts"] = _discount_option(args.discount)
    if args.discount_fallback == [] and args.method != "mkn":
        raise ValueError(f"--discount-fallback needs a value with --method {args.method}")
    if args.discount_fallback is not None:
        options["fallback_discounts"] = _discount_option(args.discount_fallback or LMPLZ_FALLBACK)
    return options


def _fit(args, stream: np.ndarray, vocab: Vocab):
    """The model the options ask for, fitted; a discount that cannot be estimated names the CLI flags."""
    try:
        return make_model(args.method, args.order, **_model_options(args)).fit(stream, vocab)
    except DiscountEstimationError as e:
        fallback = "--discount-fallback (lmplz's 0.5 1 1.5)" if args.method == "mkn" else "--discount-fallback D"
        raise ValueError(
            f"cannot estimate the discounts of order {e.order} from this text ({e.reason}); this happens on "
            f"small or artificial text: pass {fallback}, or --discount"
        ) from None


@_reporting_errors
def _estimate(args) -> int:
    vocab, stream = Vocab.build_and_encode_text(_read_text(args.text))
    model = _fit(args, stream, vocab)
    if args.npz is not None:
        model.to_npz(args.npz)
    if args.arpa == "-" or (args.arpa is None and args.npz is None):
        model.to_arpa(sys.stdout)
    elif args.arpa is not None:
        model.to_arpa(args.arpa)
    sizes = " ".join(f"{k}={model.index_.size(k)}" for k in range(1, model.order + 1))
    sentences = len(sentence_starts(stream))
    print(f"{args.method} {model.order}-gram model, {sentences} sentences; n-gram types: {sizes}", file=sys.stderr)
    if args.method in ("abs", "kn", "mkn"):
        print(f"discounts D1 D2 D3+ per order: {np.round(model.D_, 6).tolist()}", file=sys.stderr)
    return 0


@_reporting_errors
def _perplexity(args) -> int:
    model = read_npz(args.model) if is_npz(args.model) else read_arpa(args.model)
    print(model.evaluate(tokenize(_read_text(args.text))))
    return 0


def _add_commands(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="ngram_command", metavar="{estimate,perplexity}", required=True)
    estimate = commands.add_parser(
        "estimate",
        help="estimate an n-gram model from text and write it as ARPA",
        description="Estimate an n-gram model from text (one sentence per line) and write it in ARPA format.",
    )
    estimate.add_argument("--order", "-o", type=int, required=True, help="the order N of the model")
    estimate.add_argument("--method", choices=sorted(METHODS), default="mkn", help="smoothing method (default: mkn)")
    estimate.add_argument("--k", type=float, default=1.0, help="k of add-k smoothing (default: 1)")
    estimate.add_argument(
        "--discount",
        type=float,
        nargs="+",
        metavar="D",
        help="abs/kn: one D for every order or N of them; mkn: D1 D2 D3+ for every order (default: estimated)",
    )
    estimate.add_argument(
        "--discount-fallback",
        type=float,
        nargs="*",
        metavar="D",
        help="discounts for the orders where the estimate is undefined (small or artificial text), as for "
        "--discount; with no value, lmplz's 0.5 1 1.5 (mkn only)",
    )
    estimate.add_argument("--text", help="training text, one sentence per line (default: standard input)")
    estimate.add_argument("--arpa", help="where to write the ARPA file (default: standard output unless --npz)")
    estimate.add_argument("--npz", help="where to write the model in seqlearn's binary format (.npz)")
    estimate.set_defaults(func=_estimate)
    perplexity = commands.add_parser("perplexity", help="perplexity of text under an ARPA model")
    perplexity.add_argument("model", help="an ARPA file, or a model in seqlearn's binary format (--npz)")
    perplexity.add_argument("--text", help="test text, one sentence per line (default: standard input)")
    perplexity.set_defaults(func=_perplexity)


def add_subparser(subparsers) -> argparse.ArgumentParser:
    """Register ``ngram`` (with ``estimate`` and ``perplexity``) on the top-level command's subparsers."""
    parser = subparsers.add_parser(
        "ngram",
        help="n-gram language models: estimate (ARPA), perplexity",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_commands(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``seqlearn ngram ...`` with ``argv`` (default: the process arguments); returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="seqlearn ngram", description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    _add_commands(parser)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
