"""The Examples sections of the chapter packages' main entry points run, and print what they say.

One module per chapter package (and the ARPA readers): each example is short, deterministic and
prints only numbers that do not depend on the floating-point path (shapes, exact values, rounded
or compared ones).
"""

import doctest
import importlib

import pytest

MODULES = {
    "seqlearn.ngram.arpa": ["parse_arpa"],
    "seqlearn.ngram.arpa_plain": ["read_arpa_plain"],
    "seqlearn.nlm.model": ["BengioNLM"],
    "seqlearn.rnn.elman": ["elman_forward"],
    "seqlearn.gated.cells": ["LSTMCell"],
    "seqlearn.reservoir.esn": ["EchoStateNetwork"],
    "seqlearn.learnability.models": ["run_cell"],
    "seqlearn.lowrank.linear_training": ["gd_overlaps"],
}
"""Module -> the names whose docstrings hold an Examples section."""


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_a_module_run_as_written(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = {t.name.rpartition(".")[2]: t for t in finder.find(module) if t.examples}
    assert set(MODULES[name]) <= set(tests), f"{name}: no Examples in {sorted(set(MODULES[name]) - set(tests))}"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in tests.values():
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (see the output above)"


def test_a_wrong_example_fails():
    test = doctest.DocTestParser().get_doctest(">>> 1 + 1\n3\n", {}, "wrong", None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test, out=lambda _: None)
    assert runner.summarize(verbose=False).failed == 1
