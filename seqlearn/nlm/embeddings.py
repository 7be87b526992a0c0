r"""Looking at learned word embeddings: nearest neighbours and a 2-D projection.

The rows :math:`C_w` of the NLM's embedding matrix place words that behave alike near each
other. :func:`nearest_neighbours` ranks words by cosine similarity
:math:`\cos(C_u, C_w) = C_u \cdot C_w / (\|C_u\| \|C_w\|)`; :func:`project_2d` gives the
coordinates of every word on the first two principal components of :math:`C`.
"""

from __future__ import annotations

import numpy as np

from ..data.vocab import SPECIALS, Vocab
from ..validation import integer

__all__ = ["embedding_matrix", "cosine_similarities", "nearest_neighbours", "same_label_share", "project_2d"]


def embedding_matrix(C) -> np.ndarray:
    """``C`` as a float64 NumPy array of shape ``(|V|, m)``.

    ``C``: an array, a tensor, or a model with an embedding matrix attribute ``C``.
    """
    import torch

    if isinstance(C, torch.nn.Module):
        if not isinstance(getattr(C, "C", None), torch.Tensor):
            raise TypeError(f"{type(C).__name__} has no embedding matrix C")
        C = C.C
    if isinstance(C, torch.Tensor):
        C = C.detach().cpu().double().numpy()
    C = np.asarray(C)
    if C.ndim != 2 or C.shape[0] == 0 or C.shape[1] == 0 or not np.issubdtype(C.dtype, np.number):
        raise ValueError(f"C must be a numeric matrix of shape (|V|, m), got shape {C.shape} and dtype {C.dtype}")
    C = C.astype(np.float64)
    if not np.isfinite(C).all():
        raise ValueError("C has non-finite entries")
    return C


def cosine_similarities(C, w: int) -> np.ndarray:
    r""":math:`\cos(C_w, C_u)` for every row :math:`u`; shape ``(|V|,)`` (0 where a row is zero)."""
    C = embedding_matrix(C)
    norms = np.linalg.norm(C, axis=1)  # (|V|,)
    dots = C @ C[w]  # (|V|,)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norms * norms[w] > 0, dots / (norms * norms[w]), 0.0)


def nearest_neighbours(C, vocab: Vocab, word: str, k: int = 5, skip_specials: bool = True) -> list[tuple[str, float]]:
    r"""The ``k`` words whose embeddings have the highest cosine similarity to ``word``'s.

    Parameters
    ----------
    C : array or tensor, shape ``(|V|, m)``, or a model with attribute ``C``
        Embeddings, row ``w`` for token id ``w``.
    vocab : Vocab
        The vocabulary of the ids (``len(vocab) == |V|``).
    word : str
        The query word; it is excluded from its own neighbours.
    k : int
        How many neighbours.
    skip_specials : bool
        Leave ``<unk>``, ``<s>`` and ``</s>`` out of the candidates.

    Returns
    -------
    list of (str, float)
        ``(neighbour, cosine similarity)``, most similar first (ties: lower id first).
    """
    C = embedding_matrix(C)
    if not isinstance(vocab, Vocab):
        raise TypeError(f"vocab must be a seqlearn Vocab, got {type(vocab).__name__}")
    if len(vocab) != len(C):
        raise ValueError(f"C has {len(C)} rows but the vocabulary has {len(vocab)} tokens")
    if not isinstance(word, str):
        raise TypeError(f"word must be a str, got {type(word).__name__}")
    if word not in vocab:
        raise ValueError(f"{word!r} is not in the vocabulary (e.g. {vocab.itos[3:8]})")
    k = integer(k, "k", low=1)
    w = vocab.stoi[word]
    candidates = np.array(
        [u for u in range(len(vocab)) if u != w and not (skip_specials and vocab.itos[u] in SPECIALS)], dtype=np.int64
    )
    sims = cosine_similarities(C, w)[candidates]
    best = candidates[np.argsort(-sims, kind="stable")[:k]]
    return [(vocab.itos[u], float(s)) for u, s in zip(best, cosine_similarities(C, w)[best])]


def same_label_share(C, vocab: Vocab, labels: dict[str, object], k: int = 3) -> float:
    r"""How often a word's nearest neighbours share its label: do the embeddings group by it?

    For every word :math:`w` of ``labels``, take its :math:`k` nearest neighbours by cosine
    similarity among the *other labelled words* and count those with the same label; the
    result is the mean share over the words,

    .. math::
        \frac{1}{|L|} \sum_{w \in L} \frac{1}{k} \big|\{u \in N_k(w) : \ell(u) = \ell(w)\}\big| .

    Ties in similarity are broken by the order of ``labels``. Compare the share for two
    labellings of the same words (e.g. by number and by class) to see which one the
    embeddings follow; for labels drawn at random it is about the chance that two words share one.

    Parameters
    ----------
    C : array or tensor, shape ``(|V|, m)``, or a model with attribute ``C``
    vocab : Vocab
    labels : dict
        ``word -> label`` for the words compared (at least :math:`k + 1` of them, all in ``vocab``).
    k : int
        Neighbours per word.

    Returns
    -------
    float in ``[0, 1]``
    """
    C = embedding_matrix(C)
    if not isinstance(vocab, Vocab):
        raise TypeError(f"vocab must be a seqlearn Vocab, got {type(vocab).__name__}")
    words = list(labels)
    k = integer(k, "k", low=1)
    if len(words) <= k:
        raise ValueError(f"labels must name more than k = {k} words, got {len(words)}")
    missing = [w for w in words if w not in vocab]
    if missing:
        raise ValueError(f"words not in the vocabulary: {missing[:5]}")
    ids = np.array([vocab.stoi[w] for w in words])  # (L,)
    unit = C[ids] / np.linalg.norm(C[ids], axis=1, keepdims=True)  # (L, m)
    sims = unit @ unit.T  # (L, L)
    np.fill_diagonal(sims, -np.inf)
    nearest = np.argsort(-sims, axis=1, kind="stable")[:, :k]  # (L, k)
    tags = np.array([labels[w] for w in words], dtype=object)
    return float(np.mean(tags[nearest] == tags[:, None]))


def project_2d(C) -> np.ndarray:
    r"""Coordinates of every embedding on the first two principal components of :math:`C`.

    With the centred matrix :math:`\bar C = C - \mathbf{1}\mu^\top = U S V^\top` (SVD), the
    coordinates are :math:`\bar C v_1, \bar C v_2` (the first two columns of :math:`U S`).
    The sign of each component is fixed so that its coordinate of largest magnitude is
    positive, which makes the result deterministic.

    Returns
    -------
    numpy.ndarray, shape ``(|V|, 2)``
        (Fewer columns are padded with zeros when :math:`C` has rank below 2.)
    """
    C = embedding_matrix(C)
    centred = C - C.mean(axis=0)  # (|V|, m)
    U, S, _ = np.linalg.svd(centred, full_matrices=False)
    coords = np.zeros((len(C), 2))
    r = min(2, len(S))
    coords[:, :r] = U[:, :r] * S[:r]  # (|V|, r)
    peak = coords[np.argmax(np.abs(coords), axis=0), np.arange(2)]  # (2,) largest-magnitude coordinate
    return coords * np.where(peak < 0, -1.0, 1.0)
