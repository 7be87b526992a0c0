"""seqlearn: reference implementations for a course on how sequence models remember.

One subpackage per chapter:

* :mod:`seqlearn.ngram` (Chapter 1): n-gram counts, add-k, absolute discounting, Kneser-Ney
  and modified Kneser-Ney, ARPA files, perplexity, the ``seqlearn ngram`` command.
* :mod:`seqlearn.nlm` (Chapter 2): Bengio et al.'s neural probabilistic language model,
  its training, the NLM + n-gram mixture, embeddings.
* :mod:`seqlearn.rnn` (Chapter 3): the Elman RNN, backpropagation through time, Jacobian
  products and the spectral radius, gradient clipping, RNN language and task models.
* :mod:`seqlearn.gated` and :mod:`seqlearn.reservoir` (Chapter 4): LSTM and GRU cells equal
  to torch.nn's, their language and task models, gate and memory diagnostics; echo state
  networks, the echo-state property, memory capacity.
* :mod:`seqlearn.learnability` (Chapter 5): alpha-stable tools, the learnability window and
  its closed forms, the five gated architectures and their transport factors.
* :mod:`seqlearn.lowrank` (Chapter 6): learning in low-rank RNNs seen in overlap space: linear
  and erf networks, their latent models, the flip-flop and twin-memory experiments.
* :mod:`seqlearn.attention` (Chapter 7, the epilogue): causal self-attention and a small attention
  language model, raced against the Elman network and the GRU on long-distance agreement.

Shared parts: :mod:`seqlearn.data` (vocabularies, synthetic corpora, long-distance agreement, downloads),
:mod:`seqlearn.tasks` (synthetic sequence tasks), :mod:`seqlearn.losses` (the masked loss),
:mod:`seqlearn.training` (one training loop), :mod:`seqlearn.lm` (one evaluation of every
language model: perplexity, the agreement scorer, the training history), :mod:`seqlearn.gradcheck` (finite-difference
gradient checks), :mod:`seqlearn.device` (device choice, seeding), :mod:`seqlearn.validation`
(argument checks), :mod:`seqlearn.viz` (style, explorers, labels), :mod:`seqlearn.guard`
(graded references refuse to run inside answers), :mod:`seqlearn.grading` (what autograder
test cells call). The instructor's tools are in :mod:`seqlearn.course`: the ``seqlearn``
command, headless runs of the chapters, the book, the release, nbgrader's helpers and the
sealed grader. Importing :mod:`seqlearn` imports none of them, so ``import seqlearn`` is cheap
and has no side effects.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
