"""Answers to every graded exercise, written without seqlearn: correct ones, and the usual mistakes.

:data:`CORRECT` maps each exercise (the name of the function a student writes) to an
implementation independent of seqlearn's reference (another algorithm where there is one:
the double sum for BPTT, golden-section search for the mixture weight). :data:`MISTAKES`
maps it to ``{mistake: (wrong answer, words its targeted hint must contain)}``.
``tests/test_grading_chapters.py`` grades them all.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

BOS = 1  # the id of <s> in Chapter 2 (Chapter 1 works with the string "<s>")

# ============================================================================= Chapter 1: n-grams


def my_count_ngrams(sentences, n):
    out = {}  # a plain dict: a Counter is not required
    for sentence in sentences:
        tokens = ["<s>"] + list(sentence) + ["</s>"]
        for gram in zip(*(tokens[i:] for i in range(n))):
            if gram != ("<s>",):
                out[gram] = out.get(gram, 0) + 1
    return out


def my_add_k_prob(context, word, counts, k, vocab_size):
    h = tuple(context)
    total = sum(c for gram, c in counts.items() if gram[: len(h)] == h and len(gram) == len(h) + 1)
    return (counts.get(h + (word,), 0) + k) / (total + k * vocab_size)


def my_perplexity(log_probs):
    if len(log_probs) == 0:
        raise ValueError("no tokens")
    return float(np.exp(-np.mean(log_probs)))


def my_continuation_counts(counts):
    return Counter(gram[1:] for gram, c in counts.items() if c > 0)


def my_kn_bigram_prob(context, word, bigram_counts, d, continuation=None):
    """P_KN from the continuation counts it is given, else from my_continuation_counts (as the notebook's cell)."""
    if continuation is None:
        continuation = my_continuation_counts(bigram_counts)
    p_cont = continuation.get((word,), 0) / sum(continuation.values())
    following = {b: c for (a, b), c in bigram_counts.items() if a == context}
    total = sum(following.values())
    if total == 0:
        return p_cont
    weight = d * sum(1 for c in following.values() if c > 0) / total
    return max(following.get(word, 0) - d, 0) / total + weight * p_cont


def my_mkn_discounts(count_of_counts):
    n = [count_of_counts.get(r, 0) for r in range(1, 5)]
    if 0 in n[:3]:
        raise ValueError("n1, n2, n3 must be positive")
    y = n[0] / (n[0] + 2 * n[1])
    discounts = tuple(r + 1 - (r + 2) * y * n[r + 1] / n[r] for r in range(3))
    if any(not 0 <= d <= r + 1 for r, d in enumerate(discounts)):
        raise ValueError("a discount is outside [0, r]")
    return discounts


def _with_bos_unigram(sentences, n):
    counts = my_count_ngrams(sentences, n)
    if n == 1:
        counts[("<s>",)] = len(sentences)
    return counts


def _occurrences(counts):
    result = Counter()
    for gram, c in counts.items():
        result[gram[1:]] += c
    return result


def my_order_sweep(train, test, orders, k, vocab_size, counts=None):
    """Each distinct (context, word) pair of the test scored once, weighted by how often the test has it."""
    result = []
    for n in orders:
        grams = counts[n] if counts is not None else my_count_ngrams(train, n)
        histories = Counter()
        for gram, c in grams.items():
            histories[gram[:-1]] += c
        pairs = Counter()
        for sentence in test:
            tokens = ["<s>", *sentence, "</s>"]
            pairs.update((tuple(tokens[max(0, t - n + 1) : t]), tokens[t]) for t in range(1, len(tokens)))
        weights = np.array(list(pairs.values()), dtype=float)
        probs = np.array([(grams.get((*h, w), 0) + k) / (histories.get(h, 0) + k * vocab_size) for h, w in pairs])
        result.append(float(np.exp(-weights @ np.log(probs) / weights.sum())))
    return result


def _sweep_one_stream(train, test, orders, k, vocab_size, counts=None):
    """The test sentences joined into one stream: contexts reach into the previous sentence."""
    stream = [word for sentence in test for word in [*sentence, "</s>"]]
    return my_order_sweep(train, [stream[:-1]], orders, k, vocab_size, counts)


NGRAM_MISTAKES = {
    "count_ngrams": {
        "<s> as a unigram": (_with_bos_unigram, "('<s>',) is not a unigram"),
        "string keys": (lambda s, n: {" ".join(g): c for g, c in my_count_ngrams(s, n).items()}, "keys must be tuples"),
    },
    "add_k_prob": {
        "no k |V|": (lambda h, w, counts, k, v: my_add_k_prob(h, w, counts, k, 0), "add k |V| to the denominator"),
    },
    "perplexity": {"sign": (lambda lp: 1 / my_perplexity(lp), "mind the sign")},
    "continuation_counts": {"occurrences": (_occurrences, "distinct left neighbours")},
    "order_sweep": {
        "no minus": (
            lambda *args, **kwargs: [1 / p for p in my_order_sweep(*args, **kwargs)],
            "the minus sign",
        ),
        "one stream": (_sweep_one_stream, "pad each test sentence on its own"),
    },
    "kn_bigram_prob": {
        "unseen context": (
            lambda v, w, counts, d, continuation=None: 0.0 if v == "zebra" else my_kn_bigram_prob(v, w, counts, d),
            "for a context never seen",
        ),
    },
}

# ============================================================================= Chapter 2: the neural LM


def my_context_windows(stream, n):
    contexts, targets, start = [], [], 0
    for t, token in enumerate(stream):
        if token == BOS:
            start = t
            continue
        contexts.append([stream[j] if j >= start else BOS for j in range(t - n + 1, t)])
        targets.append(token)
    return np.array(contexts, dtype=np.int64).reshape(len(targets), n - 1), np.array(targets)


def my_nlm_logits(contexts, C, H, d, U, b, W=None):
    x = np.stack([np.concatenate([C[w] for w in row]) for row in contexts])
    y = b + np.tanh(d + x @ H.T) @ U.T
    return y if W is None else y + x @ W.T


def log_softmax_rows(logits):
    top = logits.max(axis=1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))


def my_masked_cross_entropy(logits, targets, mask):
    logits = np.asarray(logits, dtype=float)
    flat = logits.reshape(-1, logits.shape[-1])
    t, m = np.asarray(targets).ravel(), np.asarray(mask, dtype=float).ravel()
    if m.sum() == 0:
        raise ValueError("no real token")
    nll = -log_softmax_rows(flat)[np.arange(len(t)), t]
    return float((nll * m).sum() / m.sum())


def my_perplexity_from_loss(mean_nll):
    if not mean_nll >= 0:
        raise ValueError("a loss is >= 0")
    return float(np.exp(mean_nll))


def _mean_log_likelihood(lam, p_a, p_b):
    with np.errstate(divide="ignore"):
        return np.mean(np.log(lam * p_a + (1 - lam) * p_b))


def my_best_interpolation_weight(p_a, p_b):
    """Golden-section search of the concave mean log-likelihood, ends compared explicitly."""
    p_a, p_b = np.asarray(p_a, dtype=float), np.asarray(p_b, dtype=float)
    if p_a.shape != p_b.shape:
        raise ValueError("one probability per token in each array")
    lo, hi, ratio = 0.0, 1.0, (math.sqrt(5) - 1) / 2
    while hi - lo > 1e-11:
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if _mean_log_likelihood(a, p_a, p_b) < _mean_log_likelihood(b, p_a, p_b):
            lo = a
        else:
            hi = b
    return max([0.0, (lo + hi) / 2, 1.0], key=lambda lam: _mean_log_likelihood(lam, p_a, p_b))


def windows_across(stream, n):
    """The mistake of sliding one window over the whole stream, across sentence boundaries."""
    padded = [BOS] * (n - 1) + list(stream)
    pairs = [(padded[t : t + n - 1], w) for t, w in enumerate(stream) if w != BOS]
    return np.array([c for c, _ in pairs], dtype=np.int64).reshape(len(pairs), n - 1), np.array([w for _, w in pairs])


def _windows(stream, n, fill=BOS, skip_incomplete=False, bos_targets=False):
    """Context windows, optionally with a usual mistake (another filler, skipped or extra targets)."""
    contexts, targets, start = [], [], 0
    for t, token in enumerate(stream):
        if token == BOS:
            start = t
            if not (bos_targets and t > 0):
                continue
        if skip_incomplete and t - n + 1 < start:
            continue
        contexts.append([stream[j] if j >= start else fill for j in range(t - n + 1, t)])
        targets.append(token)
    return np.array(contexts, dtype=np.int64).reshape(len(targets), n - 1), np.array(targets)


def _windows_float_when_empty(stream, n):
    contexts, targets = my_context_windows(stream, n)
    return (np.array([[] for _ in targets]) if n == 1 else contexts), targets


def _nlm_mistake(change):
    def wrong(contexts, C, H, d, U, b, W=None):
        return change(np.asarray(contexts), C, H, d, U, b, W)

    return wrong


def _direct(x, W):
    return 0.0 if W is None else x @ W.T


def _x(contexts, C):
    return C[contexts].reshape(len(contexts), -1)


def naive_loss(logits, targets, mask):
    """The masked loss with a softmax that overflows for large logits."""
    logits, mask = np.asarray(logits, dtype=float), np.asarray(mask, dtype=float)
    if mask.sum() == 0:
        raise ValueError("no token")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        probs = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
        nll = -np.log(np.take_along_axis(probs, np.asarray(targets)[..., None], axis=-1)[..., 0])
    return float((nll * mask).sum() / mask.sum())


def _log_of_probability_loss(logits, targets, mask):
    """Shifted (no overflow), but the log is taken of a probability, which underflows to 0 for large logits."""
    logits, mask = np.asarray(logits, dtype=float), np.asarray(mask, dtype=float)
    if mask.sum() == 0:
        raise ValueError("no token")
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs = np.take_along_axis(shifted / shifted.sum(axis=-1, keepdims=True), np.asarray(targets)[..., None], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float((-np.log(probs[..., 0]) * mask).sum() / mask.sum())


def token_losses(logits, targets):
    """-log softmax(y_t)[w_t] at every position, padding included."""
    logits = np.asarray(logits, dtype=float)
    flat = log_softmax_rows(logits.reshape(-1, logits.shape[-1]))
    return -flat[np.arange(flat.shape[0]), np.asarray(targets).ravel()].reshape(np.shape(targets))


def bisect(p_a, p_b, lo, hi, steps=80):
    """Bisection on the sign of the slope of the mean log-likelihood over [lo, hi]."""
    p_a, p_b = np.asarray(p_a, dtype=float), np.asarray(p_b, dtype=float)
    if p_a.shape != p_b.shape:
        raise ValueError("lengths differ")
    for _ in range(steps):
        mid = (lo + hi) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.mean((p_a - p_b) / (mid * p_a + (1 - mid) * p_b))
        lo, hi = (mid, hi) if slope > 0 else (lo, mid)
    return (lo + hi) / 2


def _grid_search(p_a, p_b):
    grid = np.linspace(0.0, 1.0, 1001)
    return float(grid[np.argmax([_mean_log_likelihood(lam, np.asarray(p_a), np.asarray(p_b)) for lam in grid])])


def _curve_mistake(sign=-1.0, step=1.0, target=1.0, test_on_train=False, decay=True):
    """overfit_curve by float64 autograd (torch), optionally with a usual mistake."""
    import torch

    def curve(train, test, n, vocab_size, epochs, lr, weight_decay, windows=None):
        windows = windows or (my_context_windows(train, n), my_context_windows(test, n))
        if test_on_train:
            windows = (windows[0], windows[0])
        eye = torch.eye(vocab_size, dtype=torch.float64)
        (x_tr, w_tr), (x_te, w_te) = ((eye[torch.as_tensor(c)].flatten(1), torch.as_tensor(w)) for c, w in windows)
        W = torch.zeros(vocab_size, x_tr.shape[1], dtype=torch.float64, requires_grad=True)
        b = torch.zeros(vocab_size, dtype=torch.float64, requires_grad=True)
        ppl = ([], [])
        for epoch in range(epochs + 1):
            with torch.no_grad():
                for out, x, w in zip(ppl, (x_tr, x_te), (w_tr, w_te)):
                    out.append(math.exp(sign * torch.log_softmax(x @ W.T + b, dim=1)[torch.arange(len(w)), w].mean()))
            if epoch == epochs:
                break
            y = x_tr @ W.T + b
            loss = torch.logsumexp(y, dim=1).mean() - target * y[torch.arange(len(w_tr)), w_tr].mean()
            loss = loss + (weight_decay / 2 if decay else 0.0) * (W**2).sum()
            gW, gb = torch.autograd.grad(loss, (W, b))
            with torch.no_grad():
                W -= step * lr * gW
                b -= step * lr * gb
        return np.array(ppl[0]), np.array(ppl[1])

    return curve


my_overfit_curve = _curve_mistake()
"""overfit_curve by float64 autograd of the cross-entropy with its L2 penalty (an independent correct answer)."""


NLM_MISTAKES = {
    "context_windows": {
        "crossing sentence boundaries": (windows_across, "your windows cross sentence boundaries"),
        "no <s> padding": (lambda s, n: _windows(s, n, skip_incomplete=True), "even the first word of a sentence"),
        "padding with <unk>": (lambda s, n: _windows(s, n, fill=0), "with the id of <s>, which is 1"),
        "newest first": (
            lambda s, n: (my_context_windows(s, n)[0][:, ::-1], my_context_windows(s, n)[1]),
            "oldest first",
        ),
        "<s> as a target": (lambda s, n: _windows(s, n, bos_targets=True), "<s> is never a target"),
        "float empty contexts": (_windows_float_when_empty, "empty integer array of shape (T, 0)"),
        "swapped": (lambda s, n: my_context_windows(s, n)[::-1], "in the order (contexts, targets)"),
        "target inside the context": (
            lambda s, n: (np.column_stack(my_context_windows(s, n)), my_context_windows(s, n)[1]),
            "not the target itself",
        ),
    },
    "nlm_logits": {
        "no tanh": (
            _nlm_mistake(lambda c, C, H, d, U, b, W: b + _direct(_x(c, C), W) + (d + _x(c, C) @ H.T) @ U.T),
            "apply tanh to the hidden pre-activation",
        ),
        "no direct connections": (
            _nlm_mistake(lambda c, C, H, d, U, b, W: my_nlm_logits(c, C, H, d, U, b)),
            "add the direct connections W x",
        ),
        "no hidden bias": (
            _nlm_mistake(lambda c, C, H, d, U, b, W: my_nlm_logits(c, C, H, 0 * d, U, b, W)),
            "add the hidden bias d inside",
        ),
        "hidden bias outside tanh": (
            _nlm_mistake(lambda c, C, H, d, U, b, W: b + _direct(_x(c, C), W) + (np.tanh(_x(c, C) @ H.T) + d) @ U.T),
            "d belongs inside the tanh",
        ),
        "newest word first": (
            _nlm_mistake(lambda c, C, H, d, U, b, W: my_nlm_logits(c[:, ::-1], C, H, d, U, b, W)),
            "oldest word first",
        ),
        "softmax": (
            _nlm_mistake(lambda c, C, H, d, U, b, W: np.exp(log_softmax_rows(my_nlm_logits(c, C, H, d, U, b, W)))),
            "before the softmax",
        ),
        "transposed": (
            _nlm_mistake(lambda c, C, H, d, U, b, W: my_nlm_logits(c, C, H, d, U, b, W).T),
            "one row per context",
        ),
    },
    "masked_cross_entropy": {
        "naive softmax": (naive_loss, "np.exp overflows"),
        "padding in the denominator": (
            lambda y, t, m: float((token_losses(y, t) * m).sum() / np.size(m)),
            "divide by the number of real tokens, mask.sum()",
        ),
        "no mask": (lambda y, t, m: float(token_losses(y, t).mean()), "average over the real tokens only"),
        "sum": (lambda y, t, m: float((token_losses(y, t) * m).sum()), "not the sum"),
        "log of a probability": (_log_of_probability_loss, "a softmax probability can underflow to 0"),
        "sign": (lambda y, t, m: -my_masked_cross_entropy(y, t, m), "mind the sign"),
    },
    "perplexity_from_loss": {
        "bits": (lambda loss: 2.0**loss, "2^L is for a loss in bits"),
        "decimal": (lambda loss: 10.0**loss, "not 10^L"),
        "sign": (lambda loss: math.exp(-loss), "mind the sign"),
        "the loss": (lambda loss: loss, "not the loss itself"),
    },
    "best_interpolation_weight": {
        "unconstrained": (lambda p_a, p_b: bisect(p_a, p_b, -1.0, 2.0), "must lie in [0, 1]"),
        "weights swapped": (
            lambda p_a, p_b: 1.0 - my_best_interpolation_weight(p_a, p_b),
            "lambda weights the first model",
        ),
        "mean probability": (
            lambda p_a, p_b: float(np.mean(p_a) > np.mean(p_b)),
            "maximise the mean LOG-probability",
        ),
        "ends excluded": (lambda p_a, p_b: bisect(p_a, p_b, 0.05, 0.95), "can lie at an end of [0, 1]"),
        "coarse grid": (_grid_search, "not accurate enough"),
        "NaN": (lambda p_a, p_b: math.nan, "NaN usually comes from 0/0"),
    },
    "overfit_curve": {
        "no minus": (_curve_mistake(sign=1.0), "exp(-mean log P)"),
        "uphill": (_curve_mistake(step=-1.0), "step against the gradient"),
        "no one-hot": (_curve_mistake(target=0.0), "softmax(y_i) - e_{w_i}"),
        "held-out = training": (_curve_mistake(test_on_train=True), "with its own windows"),
        "no weight decay": (_curve_mistake(decay=False), "adds lambda W"),
    },
}

# ============================================================================= Chapter 3: the Elman RNN and BPTT

GAMMA = {"tanh": 1.0, "sigmoid": 0.25, "linear": 1.0}  # sup |phi'|, worked out by hand (not seqlearn's table)


def _act(z, phi):
    return {"tanh": np.tanh, "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)), "linear": lambda v: v * 1.0}[phi](z)


def _act_prime(z, phi):
    if phi == "tanh":
        return 1.0 / np.cosh(z) ** 2
    if phi == "sigmoid":
        return np.exp(-z) / (1.0 + np.exp(-z)) ** 2
    return np.ones_like(z)


def _forward(x, h0, W_hh, W_xh, b_h, phi):
    """Pre-activations z (T, H) and states (h_0, ..., h_T) as a list."""
    states, zs = [np.asarray(h0, dtype=float)], []
    for x_t in x:
        zs.append(np.einsum("ij,j->i", W_hh, states[-1]) + np.einsum("id,d->i", W_xh, x_t) + b_h)
        states.append(_act(zs[-1], phi))
    return np.array(zs).reshape(len(x), len(b_h)), states


def my_elman_forward(x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh"):
    _, states = _forward(x, h0, W_hh, W_xh, b_h, phi)
    h = np.array(states[1:]).reshape(len(x), len(b_h))
    return h, np.array([W_hy @ s + b_y for s in h]).reshape(len(x), len(b_y))


def my_bptt_gradients(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh", loss="mse", h=None):
    """The double sum over Jacobian products, term by term (from its own forward pass, whatever states it is given)."""
    z, states = _forward(x, h0, W_hh, W_xh, b_h, phi)
    T, H = z.shape
    grads = {
        "h0": np.zeros(H),
        "W_hh": np.zeros((H, H)),
        "W_xh": np.zeros(W_xh.shape),
        "b_h": np.zeros(H),
        "W_hy": np.zeros(W_hy.shape),
        "b_y": np.zeros(len(b_y)),
    }
    for t in range(1, T + 1):
        e_t = W_hy @ states[t] + b_y - targets[t - 1]
        grads["W_hy"] += np.outer(e_t, states[t])
        grads["b_y"] += e_t
        row = W_hy.T @ e_t  # dL_t/dh_k, from k = t down
        for k in range(t, 0, -1):
            d_k = row * _act_prime(z[k - 1], phi)  # dL_t/dz_k
            grads["W_hh"] += np.outer(d_k, states[k - 1])
            grads["W_xh"] += np.outer(d_k, x[k - 1])
            grads["b_h"] += d_k
            row = W_hh.T @ d_k
        grads["h0"] += row
    return grads


def my_product_norms_vs_lag(J, t=None, max_lag=None):
    t = len(J) if t is None else t
    max_lag = t if max_lag is None else max_lag
    norms = []
    for lag in range(max_lag + 1):
        P = np.eye(J.shape[1])
        for j in range(t, t - lag, -1):  # J_t J_{t-1} ... J_{t-l+1}, left to right
            P = P @ J[j - 1]
        norms.append(np.linalg.svd(P, compute_uv=False)[0])
    return np.array(norms)


def my_clip_grad_norm(grads, threshold):
    flat = np.concatenate([np.ravel(g) for g in (grads.values() if isinstance(grads, dict) else grads)])
    norm = float(math.sqrt(flat @ flat))
    scale = min(1.0, threshold / norm)
    if isinstance(grads, dict):
        return {k: np.asarray(g) * scale for k, g in grads.items()}, norm
    return [np.asarray(g) * scale for g in grads], norm


def my_gradient_regime(W_hh, phi="tanh"):
    value = GAMMA[phi] * np.sqrt(np.max(np.linalg.eigvalsh(W_hh.T @ W_hh)))
    if math.isclose(value, 1.0, rel_tol=1e-12):
        return "boundary"
    return "vanishing" if value < 1.0 else "may explode"


def _states(x, h0, W_hh, W_xh, b_h, phi):
    z, states = _forward(x, h0, W_hh, W_xh, b_h, phi)
    return z, np.array(states)


def _bptt(**mistake):
    """BPTT by the backward recursion, with one usual mistake."""

    def wrong(x, targets, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh", loss="mse", h=None):
        z, states = _forward(x, h0, W_hh, W_xh, b_h, phi)
        h = np.array(states)
        e = h[1:] @ W_hy.T + b_y - targets
        dphi = np.ones_like(z) if mistake.get("no_dphi") else _act_prime(z, phi)
        back = W_hh if mistake.get("transposed") else W_hh.T
        deltas, carry = [], np.zeros(len(h0))
        for t in reversed(range(len(x))):
            deltas.insert(0, dphi[t] * (W_hy.T @ e[t] + (0.0 if mistake.get("one_step") else carry)))
            carry = back @ deltas[0]
        delta = np.array(deltas).reshape(z.shape)
        inputs = h[1:] if mistake.get("h_t") else h[:-1]
        dh0 = {"delta_1": delta[0], "zeros": np.zeros(len(h0)), "W_hh": W_hh @ delta[0]}.get(mistake.get("h0"), carry)
        return {
            "h0": dh0,
            "W_hh": delta.T @ inputs,
            "W_xh": delta.T @ x,
            "b_h": delta.sum(axis=0),
            "W_hy": e.T @ h[1:],
            "b_y": e.sum(axis=0),
        }

    return wrong


recursive_bptt_gradients = _bptt()
"""BPTT by the backward recursion, without mistake (another correct answer)."""


def _norms_by_products(J, t, max_lag, product, norm=lambda P: np.linalg.norm(P, 2)):
    return np.array([norm(product(J, t, lag)) for lag in range(max_lag + 1)])


def _norms_mistake(product, norm=lambda P: np.linalg.norm(P, 2), drop_lag0=False):
    def wrong(J, t=None, max_lag=None):
        t = len(J) if t is None else t
        max_lag = t if max_lag is None else max_lag
        norms = _norms_by_products(J, t, max_lag, product, norm)
        return norms[1:] if drop_lag0 else norms

    return wrong


def _chain(matrices, H):
    P = np.eye(H)
    for M in matrices:
        P = P @ M
    return P


def _per_array(grads, threshold):
    def clip(g):
        return np.asarray(g) * min(1.0, threshold / np.linalg.norm(g))

    norm = my_clip_grad_norm(grads, threshold)[1]
    if isinstance(grads, dict):
        return {k: clip(g) for k, g in grads.items()}, norm
    return [clip(g) for g in grads], norm


def _always(grads, threshold):
    _, norm = my_clip_grad_norm(grads, threshold)
    scale = threshold / norm
    if isinstance(grads, dict):
        return {k: np.asarray(g) * scale for k, g in grads.items()}, norm
    return [np.asarray(g) * scale for g in grads], norm


def _torch_clip(grads, threshold):
    """torch.nn.utils.clip_grad_norm_'s arithmetic: scale by min(1, threshold / (norm + 1e-6))."""
    _, norm = my_clip_grad_norm(grads, threshold)
    scale = min(1.0, threshold / (norm + 1e-6))
    if isinstance(grads, dict):
        return {k: np.asarray(g) * scale for k, g in grads.items()}, norm
    return [np.asarray(g) * scale for g in grads], norm


def _norm_after(grads, threshold):
    clipped, _ = my_clip_grad_norm(grads, threshold)
    return clipped, my_clip_grad_norm(clipped, 1e300)[1]


def my_radius_sweep(radii, Q, x, W_xh, b_h, h0, K, phi="tanh", h=None):
    """From its own forward pass (whatever states it is given): Part 3's products of its own step Jacobians."""
    rows = []
    for rho in radii:
        z, _ = _forward(x, h0, rho * Q, W_xh, b_h, phi)
        J = np.array([_act_prime(z_t, phi)[:, None] * (rho * Q) for z_t in z])
        rows.append(my_product_norms_vs_lag(J, max_lag=K))
    return np.array(rows)


def _sweep_mistake(
    product_of_norms=False, reverse=False, norm=lambda P: np.linalg.norm(P, 2), slopes=True, from_start=False
):
    """radius_sweep with one usual mistake."""

    def wrong(radii, Q, x, W_xh, b_h, h0, K, phi="tanh", h=None):
        rows = []
        for rho in radii:
            z, _ = _forward(x, h0, rho * Q, W_xh, b_h, phi)
            J = [(_act_prime(z_t, phi) if slopes else np.ones_like(z_t))[:, None] * (rho * Q) for z_t in z]
            steps = J[:K] if from_start else J[::-1][:K]  # J_T, J_{T-1}, ... (or J_1, J_2, ... from the start)
            P, row = np.eye(len(h0)), [norm(np.eye(len(h0)))]
            for J_t in steps:
                P = J_t @ P if reverse else P @ J_t
                row.append(row[-1] * norm(J_t) if product_of_norms else norm(P))
            rows.append(row)
        return np.array(rows)

    return wrong


def _regime(value):
    return "vanishing" if value < 1.0 - 1e-12 else "may explode" if value > 1.0 + 1e-12 else "boundary"


RNN_MISTAKES = {
    "elman_forward": {
        "no nonlinearity": (
            lambda x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh": my_elman_forward(
                x, h0, W_hh, W_xh, b_h, W_hy, b_y, "linear"
            ),
            "apply the nonlinearity",
        ),
        "W_hh transposed": (
            lambda x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh": my_elman_forward(
                x, h0, W_hh.T, W_xh, b_h, W_hy, b_y, phi
            ),
            "not W_hh.T @ h_{t-1}",
        ),
        "h_0 included": (
            lambda x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh": (
                _states(x, h0, W_hh, W_xh, b_h, phi)[1],
                my_elman_forward(x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi)[1],
            ),
            "without the initial state h_0",
        ),
        "output from z": (
            lambda x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh": (
                my_elman_forward(x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi)[0],
                _states(x, h0, W_hh, W_xh, b_h, phi)[0] @ W_hy.T + b_y,
            ),
            "y_t = W_hy h_t + b_y, not W_hy z_t + b_y",
        ),
        "swapped": (lambda *args, **kwargs: my_elman_forward(*args, **kwargs)[::-1], "in the order (h, y)"),
        "always tanh": (
            lambda x, h0, W_hh, W_xh, b_h, W_hy, b_y, phi="tanh": my_elman_forward(x, h0, W_hh, W_xh, b_h, W_hy, b_y),
            "the nonlinearity named by phi",
        ),
    },
    "bptt_gradients": {
        "forgot phi'": (_bptt(no_dphi=True), "multiply by phi'(z_t)"),
        "one step only": (_bptt(one_step=True), "your backward pass stops after one step"),
        "W_hh instead of its transpose": (_bptt(transposed=True), "the error flows back through the transpose"),
        "h0 is delta_1": (_bptt(h0="delta_1"), "its gradient is W_hh^T delta_1"),
        "h0 is zero": (_bptt(h0="zeros"), "its gradient is W_hh^T delta_1"),
        "h0 without the transpose": (_bptt(h0="W_hh"), "its gradient is W_hh^T delta_1"),
        "h_t instead of h_{t-1}": (_bptt(h_t=True), "z_t depends on the PREVIOUS state"),
    },
    "product_norms_vs_lag": {
        "wrong order": (
            _norms_mistake(lambda J, t, lag: _chain([J[j - 1] for j in range(t - lag + 1, t + 1)], J.shape[1])),
            "multiply in the right order",
        ),
        "lags from the start": (
            _norms_mistake(lambda J, t, lag: _chain([J[j - 1] for j in range(lag, 0, -1)], J.shape[1])),
            "the lags count back from step t",
        ),
        "product of norms": (
            lambda J, t=None, max_lag=None: np.cumprod(
                [1.0]
                + [
                    np.linalg.norm(J[j - 1], 2)
                    for j in range(t or len(J), (t or len(J)) - ((t or len(J)) if max_lag is None else max_lag), -1)
                ]
            ),
            "not the product of the norms",
        ),
        "Frobenius": (
            _norms_mistake(
                lambda J, t, lag: _chain([J[j - 1] for j in range(t, t - lag, -1)], J.shape[1]), norm=np.linalg.norm
            ),
            "not the Frobenius norm",
        ),
        "no lag 0": (
            _norms_mistake(
                lambda J, t, lag: _chain([J[j - 1] for j in range(t, t - lag, -1)], J.shape[1]), drop_lag0=True
            ),
            "include lag 0",
        ),
    },
    "clip_grad_norm": {
        "per array": (_per_array, "clip with the GLOBAL norm"),
        "clipping below the threshold": (_always, "clip only when the norm exceeds the threshold"),
        "norm after clipping": (_norm_after, "return the norm BEFORE clipping"),
        "torch's clip_grad_norm_": (_torch_clip, "threshold / (norm + 1e-6)"),
        "norm not returned": (
            lambda grads, threshold: my_clip_grad_norm(grads, threshold)[0],
            "return the pair (clipped, norm)",
        ),
        "norm alone in a tuple": (
            lambda grads, threshold: (my_clip_grad_norm(grads, threshold)[0],),
            "return the pair (clipped, norm)",
        ),
        "squared norm": (
            lambda grads, threshold: (
                my_clip_grad_norm(grads, threshold)[0],
                my_clip_grad_norm(grads, threshold)[1] ** 2,
            ),
            "square root of the sum of squares",
        ),
        "always a list": (
            lambda grads, threshold: (
                list(my_clip_grad_norm(grads, threshold)[0].values())
                if isinstance(grads, dict)
                else my_clip_grad_norm(grads, threshold)[0],
                my_clip_grad_norm(grads, threshold)[1],
            ),
            "a dict with the same keys",
        ),
    },
    "gradient_regime": {
        "spectral radius": (
            lambda W_hh, phi="tanh": _regime(GAMMA[phi] * max(abs(np.linalg.eigvals(W_hh)))),
            "not the spectral radius",
        ),
        "no gamma for the sigmoid": (
            lambda W_hh, phi="tanh": _regime(np.linalg.norm(W_hh, 2)),
            "gamma = max |sigma'(z)| = 1/4",
        ),
        "Frobenius": (lambda W_hh, phi="tanh": _regime(GAMMA[phi] * np.linalg.norm(W_hh)), "not the Frobenius norm"),
        "no boundary": (
            lambda W_hh, phi="tanh": "vanishing" if GAMMA[phi] * np.linalg.norm(W_hh, 2) < 1 else "may explode",
            "is 'boundary'",
        ),
        "a bool": (lambda W_hh, phi="tanh": "yes", "one of the three strings"),
    },
    "radius_sweep": {
        "product of norms": (_sweep_mistake(product_of_norms=True), "not the product of their norms"),
        "reverse order": (_sweep_mistake(reverse=True), "goes on the RIGHT"),
        "Frobenius": (_sweep_mistake(norm=np.linalg.norm), "Frobenius"),
        "forgot phi'": (_sweep_mistake(slopes=False), "1 - h_t^2"),
        "lags from the start": (_sweep_mistake(from_start=True), "count back from the last step"),
    },
}

# ============================================================================= Chapter 4: LSTM, GRU, ESN


def _logistic(a):
    return 1.0 / (1.0 + np.exp(-a))


def my_lstm_step(x, h, c, W_ih, W_hh, b_ih, b_hh):
    """Gate by gate, each block's rows taken by name (no split of the stacked pre-activations)."""
    H = h.shape[1]
    rows = {name: slice(j * H, (j + 1) * H) for j, name in enumerate("ifgo")}

    def pre(gate):
        r = rows[gate]
        return np.einsum("bd,hd->bh", x, W_ih[r]) + b_ih[r] + np.einsum("bk,hk->bh", h, W_hh[r]) + b_hh[r]

    i, f, g, o = _logistic(pre("i")), _logistic(pre("f")), np.tanh(pre("g")), _logistic(pre("o"))
    c_new = f * c + i * g
    return o * np.tanh(c_new), c_new


def my_gru_step(x, h, W_ih, W_hh, b_ih, b_hh):
    H = h.shape[1]
    W_ir, W_iz, W_in = W_ih[:H], W_ih[H : 2 * H], W_ih[2 * H :]
    W_hr, W_hz, W_hn = W_hh[:H], W_hh[H : 2 * H], W_hh[2 * H :]
    b_ir, b_iz, b_in = b_ih[:H], b_ih[H : 2 * H], b_ih[2 * H :]
    b_hr, b_hz, b_hn = b_hh[:H], b_hh[H : 2 * H], b_hh[2 * H :]
    r = _logistic(x @ W_ir.T + b_ir + h @ W_hr.T + b_hr)
    z = _logistic(x @ W_iz.T + b_iz + h @ W_hz.T + b_hz)
    n = np.tanh(x @ W_in.T + b_in + r * (h @ W_hn.T + b_hn))
    return (1 - z) * n + z * h


def my_reservoir_update(x, u, W, W_in, b, leak_rate):
    """Row by row, with column vectors (one state at a time)."""
    x, u = np.asarray(x, dtype=float), np.asarray(u, dtype=float)
    if x.ndim == 2:
        return np.stack([my_reservoir_update(xr, ur, W, W_in, b, leak_rate) for xr, ur in zip(x, u)])
    return (1 - leak_rate) * x + leak_rate * np.tanh(W @ x + W_in @ u + b)


def my_ridge_readout(Z, Y, ridge):
    """By the SVD of Z: W = V diag(s / (s^2 + beta)) U^T Y (no normal equations at all)."""
    U, s, Vt = np.linalg.svd(Z, full_matrices=False)
    return Vt.T @ ((s / (s**2 + ridge))[:, None] * (U.T @ Y.reshape(len(Y), -1))).reshape(len(s), *Y.shape[1:])


def my_memory_capacity(states, u, k_max):
    """One delay at a time, least squares by np.linalg.lstsq, r^2 by np.corrcoef."""
    T = len(u)
    n_train = (T - k_max) // 2
    r2 = []
    for k in range(1, k_max + 1):
        t = np.arange(k_max, T)
        Z = np.column_stack([np.ones(len(t)), states[t]])
        w = np.linalg.lstsq(Z[:n_train], u[t - k][:n_train], rcond=None)[0]
        r2.append(np.corrcoef(Z[n_train:] @ w, u[t - k][n_train:])[0, 1] ** 2)
    return float(sum(r2)), np.array(r2)


def _my_curve(
    W, w_in, u, radii, leak_rate, k_max, washout, n_train, *, first=1, in_sample=False, square=True, swap=False
):
    """One radius at a time, states as columns, one lstsq per delay, r^2 by np.corrcoef; or a usual mistake."""
    a = 1.0 - leak_rate if swap else leak_rate
    curves = []
    for rho in radii:
        x, states = np.zeros(len(w_in)), []
        for u_t in u:
            x = (1 - a) * x + a * (rho * (W @ x) + w_in * u_t)
            states.append(x)
        Z = np.column_stack([np.ones(len(u) - washout), np.array(states)[washout:]])
        score = slice(0, n_train) if in_sample else slice(n_train, None)
        row = []
        for k in range(first, first + k_max):
            y = u[washout - k : len(u) - k]
            w = np.linalg.lstsq(Z[:n_train], y[:n_train], rcond=None)[0]
            r = np.corrcoef(Z[score] @ w, y[score])[0, 1]
            row.append(r**2 if square else r)
        curves.append(row)
    r2 = np.array(curves)
    return r2.sum(axis=1), r2


def my_memory_curve(W, w_in, u, radii, leak_rate, k_max, washout, n_train):
    return _my_curve(W, w_in, u, radii, leak_rate, k_max, washout, n_train)


def _curve_mistake(**mistake):
    return lambda *args, **kwargs: _my_curve(*args, **kwargs, **mistake)


def _lstm_mistake(**mistake):
    def wrong(x, h, c, W_ih, W_hh, b_ih, b_hh):
        H = h.shape[1]
        order = mistake.get("order", "ifgo")
        a = x @ W_ih.T + h @ W_hh.T + (0.0 if mistake.get("no_b_hh") else b_hh) + b_ih
        blocks = {name: a[:, j * H : (j + 1) * H] for j, name in enumerate(order)}
        i, f, o = _logistic(blocks["i"]), _logistic(blocks["f"]), _logistic(blocks["o"])
        g = _logistic(blocks["g"]) if mistake.get("g_sigmoid") else np.tanh(blocks["g"])
        c_new = f * c + (g if mistake.get("no_i") else i * g)
        squash = (lambda v: v) if mistake.get("no_tanh") else np.tanh
        h_new = o * squash(c if mistake.get("old_c") else c_new)
        return (c_new, h_new) if mistake.get("swapped") else (h_new, c_new)

    return wrong


def _lstm_in_place(x, h, c, W_ih, W_hh, b_ih, b_hh):
    """Updates the caller's h and c."""
    h_new, c_new = my_lstm_step(x, h, c, W_ih, W_hh, b_ih, b_hh)
    h[...], c[...] = h_new, c_new
    return h, c


def _gru_mistake(**mistake):
    def wrong(x, h, W_ih, W_hh, b_ih, b_hh):
        H = h.shape[1]
        order = mistake.get("order", "rzn")
        block = {name: slice(j * H, (j + 1) * H) for j, name in enumerate(order)}
        gi = x @ W_ih.T + b_ih
        r = _logistic(gi[:, block["r"]] + h @ W_hh[block["r"]].T + b_hh[block["r"]])
        z = _logistic(gi[:, block["z"]] + h @ W_hh[block["z"]].T + b_hh[block["z"]])
        W_hn, b_hn = W_hh[block["n"]], b_hh[block["n"]]
        reset = mistake.get("reset", "after")
        if reset == "before":
            n = np.tanh(gi[:, block["n"]] + (r * h) @ W_hn.T + b_hn)
        elif reset == "bias outside":
            n = np.tanh(gi[:, block["n"]] + r * (h @ W_hn.T) + b_hn)
        else:
            n = np.tanh(gi[:, block["n"]] + r * (h @ W_hn.T + b_hn))
        return z * n + (1 - z) * h if mistake.get("z_new") else (1 - z) * n + z * h

    return wrong


def _reservoir_mistake(**mistake):
    def wrong(x, u, W, W_in, b, leak_rate):
        a = leak_rate
        M = W if mistake.get("transposed") else W.T
        drive = x @ M + u @ W_in.T + (0.0 if mistake.get("no_bias") else b)
        if mistake.get("leak_swapped"):
            return a * x + (1 - a) * np.tanh(drive)
        if mistake.get("no_leak"):
            return np.tanh(drive)
        return (1 - a) * x + a * np.tanh(drive)

    return wrong


def _reservoir_in_place(x, u, W, W_in, b, leak_rate):
    """x *= (1 - a); x += a tanh(...): the caller's state is overwritten."""
    drive = x @ W.T + u @ W_in.T + b
    x *= 1 - leak_rate
    x += leak_rate * np.tanh(drive)
    return x


def _ridge_mistake(kind):
    def wrong(Z, Y, ridge):
        A = Z.T @ Z
        if kind == "every entry":
            A = A + ridge
        elif kind == "bias free":
            A = A + ridge * np.diag([0.0] + [1.0] * (Z.shape[1] - 1))
        elif kind == "no ridge":
            pass
        W = np.linalg.solve(A, Z.T @ Y)
        if kind == "2-D always":
            return np.linalg.solve(A + ridge * np.eye(len(A)), Z.T @ Y.reshape(len(Y), -1))
        if kind == "transposed":
            return np.linalg.solve(A + ridge * np.eye(len(A)), Z.T @ Y).T
        return W

    return wrong


def _memory_mistake(**mistake):
    def wrong(states, u, k_max):
        T = len(u)
        t = np.arange(k_max, T)
        n_train = (T - k_max) // 2
        first = mistake.get("first", 1)
        targets = np.stack([u[t - k] for k in range(first, first + k_max)], axis=1)
        Z = states[t] if mistake.get("no_intercept") else np.column_stack([np.ones(len(t)), states[t]])
        W = np.linalg.lstsq(Z[:n_train], targets[:n_train], rcond=None)[0]
        rows = slice(None, n_train) if mistake.get("in_sample") else slice(n_train, None)
        pred, true = Z[rows] @ W, targets[rows]
        if mistake.get("determination"):
            r2 = 1 - ((pred - true) ** 2).sum(0) / ((true - true.mean(0)) ** 2).sum(0)
        else:
            r = np.array([np.corrcoef(pred[:, j], true[:, j])[0, 1] for j in range(k_max)])
            r2 = r if mistake.get("not_squared") else r**2
        return (r2, float(r2.sum())) if mistake.get("swapped") else (float(r2.sum()), r2)

    return wrong


GATED_MISTAKES = {
    "lstm_step": {
        "gate order i, f, o, g": (_lstm_mistake(order="ifog"), "torch's gate order is i, f, g, o"),
        "gate order f, i, g, o": (_lstm_mistake(order="figo"), "torch's gate order is i, f, g, o"),
        "sigmoid candidate": (_lstm_mistake(g_sigmoid=True), "the candidate g_t uses tanh"),
        "no tanh on c": (_lstm_mistake(no_tanh=True), "apply tanh to the new cell state"),
        "no input gate": (_lstm_mistake(no_i=True), "c_t = f_t * c_{t-1} + i_t * g_t"),
        "one bias": (_lstm_mistake(no_b_hh=True), "add both biases"),
        "old cell state": (_lstm_mistake(old_c=True), "reads the NEW cell state"),
        "swapped": (_lstm_mistake(swapped=True), "in the order (h_new, c_new)"),
        "in place": (_lstm_in_place, "changed its argument 'h' in place"),
        "float32": (
            lambda *args: tuple(a.astype(np.float32) for a in my_lstm_step(*args)),
            "lower precision makes the values differ (compute in float64)",
        ),
    },
    "gru_step": {
        "reset before the product": (_gru_mistake(reset="before"), "the reset gate multiplies the PRODUCT"),
        "b_hn outside the reset": (_gru_mistake(reset="bias outside"), "b_hn sits INSIDE the reset product"),
        "z weights the new state": (_gru_mistake(z_new=True), "z weights the OLD state"),
        "gate order z, r, n": (_gru_mistake(order="zrn"), "torch's gate order is r, z, n"),
        "float32": (
            lambda *args: my_gru_step(*args).astype(np.float32),
            "lower precision makes the values differ (compute in float64)",
        ),
    },
    "reservoir_update": {
        "leak on the old state": (_reservoir_mistake(leak_swapped=True), "the leak rate a weights the NEW term"),
        "no leak": (_reservoir_mistake(no_leak=True), "mix the old state in"),
        "W transposed": (_reservoir_mistake(transposed=True), "not W^T x"),
        "no bias": (_reservoir_mistake(no_bias=True), "add the bias b inside the tanh"),
        "in place": (_reservoir_in_place, "changed its argument 'x' in place"),
    },
    "ridge_readout": {
        "beta on every entry": (_ridge_mistake("every entry"), "add it to the diagonal only"),
        "bias column free": (_ridge_mistake("bias free"), "regularises EVERY column of Z here"),
        "no ridge": (_ridge_mistake("no ridge"), "add beta I to Z^T Z"),
        "always 2-D": (_ridge_mistake("2-D always"), "return a 1-D W of shape (p,)"),
        "transposed": (_ridge_mistake("transposed"), "W has shape (p, m)"),
    },
    "memory_capacity": {
        "in-sample": (_memory_mistake(in_sample=True), "score each readout on the second half"),
        "no intercept": (_memory_mistake(no_intercept=True), "a column of ones"),
        "delays from 0": (_memory_mistake(first=0), "the delays are k = 1, ..., k_max"),
        "r, not r^2": (_memory_mistake(not_squared=True), "square the correlation"),
        "1 - SSE/SST": (_memory_mistake(determination=True), "not the coefficient of determination"),
        "swapped": (_memory_mistake(swapped=True), "in the order (mc, r2)"),
    },
    "memory_curve": {
        "delays from 0": (_curve_mistake(first=0), "the delays are k = 1, ..., k_max"),
        "r, not r^2": (_curve_mistake(square=False), "not the correlation itself"),
        "in-sample": (_curve_mistake(in_sample=True), "score each readout on the steps after the first n_train"),
        "leak on the old state": (_curve_mistake(swap=True), "the leak rate a weights the NEW term"),
    },
}


# ============================================================================= Chapter 5: the learnability window


def my_kappa_alpha(alpha):
    if not 1 < alpha <= 2:
        raise ValueError("alpha must be in (1, 2]")
    return 1.0 / (1.0 - 1.0 / alpha)


def _my_ecf(x, *, y="loglog", weighting="sqrt", clip=True, modulus="complex", scale="iqr"):
    """By complex exponentials and a weighted least-squares solve (rows scaled by sqrt(w))."""
    x = np.asarray(x, dtype=float)
    if len(x) < 20:
        raise ValueError("at least 20 samples")
    q25, q75 = np.quantile(x, [0.25, 0.75])
    if q75 - q25 <= 0:
        raise ValueError("IQR is 0")
    s = (q75 - q25) / 1.349 if scale == "iqr" else np.std(x)
    t = np.linspace(0.05 / s, 3 / s, 50)
    phi = np.exp(1j * t[:, None] * x[None, :]).mean(axis=1)
    phi2 = np.abs(phi) ** 2 if modulus == "complex" else phi.real**2
    keep = (phi2 > 0.01) & (phi2 < 0.95)
    if keep.sum() < 5:
        raise ValueError("fewer than 5 points in the band")
    log_t, log_phi2 = np.log(t[keep]), np.log(phi2[keep])
    target = np.log(-log_phi2) if y == "loglog" else 0.5 * log_phi2
    w = np.exp(-2 * (log_phi2 + 0.7) ** 2)
    r = {"sqrt": np.sqrt(w), "none": np.ones_like(w), "w": w}[weighting]  # "w": np.polyfit's w=w
    A = np.column_stack([log_t, np.ones_like(log_t)]) * r[:, None]
    slope = np.linalg.lstsq(A, target * r, rcond=None)[0][0]
    return float(min(max(slope, 1.0), 2.0)) if clip else float(slope)


def my_ecf_alpha_estimate(x):
    return _my_ecf(x)


def my_oriented_statistic(phi):
    """Fold by fold with boolean masks: the signs of fold (k + 1) mod 3's neuron means orient fold k's rows."""
    phi = np.asarray(phi, dtype=float)
    if phi.ndim != 2 or phi.shape[0] < 6 or not np.isfinite(phi).all():
        raise ValueError("phi must be a finite (N, H) array with N >= 6")
    fold = np.arange(phi.shape[0]) % 3
    signs = np.stack([np.sign(phi[fold == k].mean(axis=0)) for k in range(3)])  # (3, H)
    return (phi * signs[(fold + 1) % 3]).sum(axis=1)


def _my_gamma(leak, rho, lags, *, order=1, one=1.0, divide=True, shift=0, fill=np.nan):
    """Window by window: the leaks' product times 1 + the sum of rho / leak over t - l + 1 + shift, ..., t + shift."""
    T, H = leak.shape
    out = np.full((len(lags), T, H), fill)
    for i, ell in enumerate(lags):
        for t in range(int(ell), T + 1):
            first, last = t - ell + 1 + shift, t + shift
            if first < 1 or last > T:
                continue
            product, total = np.ones(H), np.zeros(H)
            for j in range(first, last + 1):
                product = product * leak[j - 1]
                total = total + rho[j - 1] / (leak[j - 1] if divide else 1.0)
            out[i, t - 1] = product if order == 0 else product * (one + total)
    return out


def _const_terms(s, h_tilde, w_hh_diag, *, leak_is_s=False):
    leak = np.full(h_tilde.shape, s if leak_is_s else 1.0 - s)
    return leak, s * (1.0 - h_tilde**2) * w_hh_diag


def my_gamma_const(s, h_tilde, w_hh_diag, lags):
    return _my_gamma(*_const_terms(s, h_tilde, w_hh_diag), lags)


def _diag_terms(s, h_tilde, h_prev, w_hh_diag, u_s_diag, gate_term=1.0):
    rho = s * (1.0 - h_tilde**2) * w_hh_diag + gate_term * (h_tilde - h_prev) * s * (1.0 - s) * u_s_diag
    return 1.0 - s, rho


def my_gamma_diag(s, h_tilde, h_prev, w_hh_diag, u_s_diag, lags):
    return _my_gamma(*_diag_terms(s, h_tilde, h_prev, w_hh_diag, u_s_diag), lags)


def _my_window(lags, N_req, N, *, qualifies=lambda need, n: 0 < need <= n, rule="max"):
    """Lag by lag in Python; 'first failure' stops at the first lag (in increasing order) that fails."""
    table = sorted(zip(lags.tolist(), N_req.tolist())) if rule == "first failure" else list(zip(lags, N_req))

    def one(n):
        best = 0
        for lag, need in table:
            if qualifies(need, n):
                best = max(best, int(lag)) if rule == "max" else int(lag)
            elif rule == "first failure":
                break
        return best

    if np.ndim(N) == 0:
        return one(N)
    return np.array([one(n) for n in N], dtype=np.int64)


def my_window_from_table(lags, N_req, N):
    return _my_window(lags, N_req, N)


def _my_closed_form(N, envelope, param, alpha, *, rate=None, log=np.log):
    """H_N = exp(rate * ln N / beta) or tau * rate * ln N with rate = 1/kappa = 1 - 1/alpha."""
    if envelope not in ("exponential", "power"):
        raise ValueError("unknown envelope")
    if not 1 < alpha <= 2:
        raise ValueError("alpha must be in (1, 2]")
    rate = 1.0 - 1.0 / alpha if rate is None else rate
    N = np.asarray(N, dtype=float)
    H = param * rate * log(N) if envelope == "exponential" else np.exp(rate * np.log(N) / param)
    return float(H) if N.ndim == 0 else H


def my_window_closed_form(N, envelope, param, alpha, kappa=None):
    """With the kappa it is given (Part 1's, by the reference), as the notebook's answer does."""
    return _my_closed_form(N, envelope, param, alpha, rate=None if kappa is None else 1.0 / kappa)


def my_spread_exponent(x, sizes):
    """Size by size: the means of each run's first N samples, their quartiles, then np.polyfit's slope."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 2 or x.shape[0] < 8:
        raise ValueError("x must hold at least 8 runs")
    sizes = np.asarray(sizes)
    if sizes.min() < 1 or sizes.max() > x.shape[1] or len(set(sizes.tolist())) < 2:
        raise ValueError("sizes must lie in [1, n], two of them different")
    spread = [np.subtract(*np.quantile(x[:, :N].mean(axis=1), [0.75, 0.25])) for N in sizes]
    return float(np.polyfit(np.log(sizes), np.log(spread), 1)[0])


def _spread_by(x, sizes, spread):
    """The exponent with another spread of the means (a usual mistake)."""
    sizes = np.asarray(sizes)
    means = np.cumsum(np.asarray(x, dtype=float), axis=1)[:, sizes - 1] / sizes
    return float(np.polyfit(np.log(sizes), np.log(spread(means, x, sizes)), 1)[0])


LEARNABILITY_MISTAKES = {
    "kappa_alpha": {
        "inverted": (lambda alpha: (alpha - 1) / alpha, "not its inverse"),
        "alpha itself": (lambda alpha: float(alpha), "kappa is not alpha itself"),
        "no check": (lambda alpha: alpha / (alpha - 1) if alpha != 1 else math.inf, "raise ValueError"),
    },
    "ecf_alpha_estimate": {
        "log |phi|": (lambda x: _my_ecf(x, y="log phi"), "more than 0.2 from the alpha"),
        "real part only": (lambda x: _my_ecf(x, modulus="real"), "more than 0.2 from the alpha"),
        "kappa": (lambda x: _my_ecf(x) / (_my_ecf(x) - 1) if _my_ecf(x) > 1 else 2.0, "outside (0, 2]"),
    },
    "gamma_const": {
        "zero order": (
            lambda s, h_tilde, w, lags: _my_gamma(*_const_terms(s, h_tilde, w), lags, order=0),
            "that is the zero-order factor",
        ),
        "no 1 +": (
            lambda s, h_tilde, w, lags: _my_gamma(*_const_terms(s, h_tilde, w), lags, one=0.0),
            "keep the 1",
        ),
        "rho, not rho / leak": (
            lambda s, h_tilde, w, lags: _my_gamma(*_const_terms(s, h_tilde, w), lags, divide=False),
            "divide each rho by its step's leak",
        ),
        "leak s": (
            lambda s, h_tilde, w, lags: _my_gamma(*_const_terms(s, h_tilde, w, leak_is_s=True), lags),
            "the leak (retention) is 1 - s",
        ),
        "window shifted": (
            lambda s, h_tilde, w, lags: _my_gamma(*_const_terms(s, h_tilde, w), lags, shift=-1),
            "your window is shifted by one step",
        ),
        "zeros for NaN": (
            lambda s, h_tilde, w, lags: _my_gamma(*_const_terms(s, h_tilde, w), lags, fill=0.0),
            "fill those entries with NaN",
        ),
        "(T, n, H)": (
            lambda s, h_tilde, w, lags: my_gamma_const(s, h_tilde, w, lags).transpose(1, 0, 2),
            "the result has shape (len(lags), T, H)",
        ),
    },
    "gamma_diag": {
        "no gate term": (
            lambda s, h_tilde, h_prev, w, u, lags: _my_gamma(*_diag_terms(s, h_tilde, h_prev, w, u, 0.0), lags),
            "DiagGate's rho has a second term",
        ),
        "gate term sign": (
            lambda s, h_tilde, h_prev, w, u, lags: _my_gamma(*_diag_terms(s, h_tilde, h_prev, w, u, -1.0), lags),
            "check its sign",
        ),
        "zero order": (
            lambda s, h_tilde, h_prev, w, u, lags: _my_gamma(*_diag_terms(s, h_tilde, h_prev, w, u), lags, order=0),
            "that is the zero-order factor",
        ),
        "rho, not rho / leak": (
            lambda s, h_tilde, h_prev, w, u, lags: _my_gamma(
                *_diag_terms(s, h_tilde, h_prev, w, u), lags, divide=False
            ),
            "divide each rho by its step's leak",
        ),
    },
    "window_from_table": {
        "first failure": (
            lambda lags, N_req, N: _my_window(lags, N_req, N, rule="first failure"),
            "do not stop at the first lag that fails",
        ),
        "-1 detectable": (
            lambda lags, N_req, N: _my_window(lags, N_req, N, qualifies=lambda need, n: need <= n),
            "N_req = -1 means the lag is never detectable",
        ),
        "strict": (
            lambda lags, N_req, N: _my_window(lags, N_req, N, qualifies=lambda need, n: 0 < need < n),
            "not < N",
        ),
        "last in table order": (
            lambda lags, N_req, N: _my_window(lags, N_req, N, rule="last"),
            "the lags need not be sorted",
        ),
    },
    "window_closed_form": {
        "alpha for kappa": (
            lambda N, envelope, param, alpha, kappa=None: _my_closed_form(N, envelope, param, alpha, rate=1 / alpha),
            "not alpha",
        ),
        "kappa inverted": (
            lambda N, envelope, param, alpha, kappa=None: _my_closed_form(
                N, envelope, param, alpha, rate=alpha / (alpha - 1.0)
            ),
            "not by its inverse",
        ),
        "log10": (
            lambda N, envelope, param, alpha, kappa=None: _my_closed_form(N, envelope, param, alpha, log=np.log10),
            "not log10",
        ),
    },
    "spread_exponent": {
        "spread of the samples": (
            lambda x, sizes: _spread_by(
                x, sizes, lambda means, x, sizes: [np.subtract(*np.quantile(x[:, :N], [0.75, 0.25])) for N in sizes]
            ),
            "the MEANS",
        ),
    },
}


# ============================================================================= Chapter 6: low-rank RNNs

ORDER = ["zm", "zu", "vm", "vu", "mu", "zv", "mm", "uu", "vv", "zz"]  # written out by hand, not seqlearn's table


def _my_overlaps(m, u, v, z, *, divide=lambda N: N, order=ORDER):
    """All sixteen dot products at once (a 4 x 4 matrix), then the ten asked for."""
    if not len(m) == len(u) == len(v) == len(z):
        raise ValueError("m, u, v, z must have one length")
    X = np.array([z, v, m, u], dtype=float)  # (4, N)
    gram = X @ X.T / divide(X.shape[1])
    row = {"z": 0, "v": 1, "m": 2, "u": 3}
    return np.array([gram[row[a], row[b]] for a, b in order])


def my_overlaps_from_vectors(m, u, v, z):
    return _my_overlaps(m, u, v, z)


def _my_latent(sigma_visible, x, dt, *, read="after", keep=None, sequential=False):
    """The 2-D recursion as a matrix: kappa(t+1) = A kappa(t) + b x_t."""
    if not 0 < dt <= 1:
        raise ValueError("dt must be in (0, 1]")
    zm, zu, vm, vu = sigma_visible
    keep = 1.0 - dt if keep is None else keep
    A = np.array([[keep, 0.0], [dt * vm, keep + dt * vu]])
    b, c = np.array([dt, 0.0]), np.array([zm, zu])
    kappa, f = np.zeros(2), np.zeros(len(x))
    for t, x_t in enumerate(x):
        old = kappa
        kappa = A @ kappa + b * x_t
        if sequential:
            kappa[1] = keep * old[1] + dt * (vm * kappa[0] + vu * old[1])
        f[t] = c @ (old if read == "before" else kappa)
    return f


def my_effective_output(sigma_visible, x, dt):
    return _my_latent(sigma_visible, x, dt)


def _my_metric(sigma, *, missing_two=False, two_terms=False):
    """G-bar = N D D^T with D = d sigma / d theta, from vectors of length 4 that have these overlaps."""
    sigma = np.asarray(sigma, dtype=float)
    row = {"z": 0, "v": 1, "m": 2, "u": 3}
    gram = np.zeros((4, 4))
    for (a, b), value in zip(ORDER, sigma):
        gram[row[a], row[b]] = gram[row[b], row[a]] = value
    if two_terms:  # delta_ac s_bd + delta_bd s_ac only: not a Jacobian product, entry by entry
        G = np.zeros((10, 10))
        for i, (a, b) in enumerate(ORDER):
            for j, (c, d) in enumerate(ORDER):
                G[i, j] = (a == c) * gram[row[b], row[d]] + (b == d) * gram[row[a], row[c]]
        return G
    lam, U = np.linalg.eigh(gram)
    N = 4
    X = math.sqrt(N) * U * np.sqrt(np.clip(lam, 0.0, None))  # rows z, v, m, u: X X^T / N = gram
    D = np.zeros((10, 4, N))  # d sigma_ab / d (vector, entry)
    for i, (a, b) in enumerate(ORDER):
        D[i, row[a]] += X[row[b]] / N
        D[i, row[b]] += X[row[a]] / N  # a == b: 2 a / N
        if missing_two and a == b:
            D[i] /= 2
    D = D.reshape(10, 4 * N)
    return N * D @ D.T


def my_metric_bar(sigma):
    return _my_metric(sigma)


def _my_step(sigma, grad, eta, G_bar=None, *, sign=-1.0, metric=True, **metric_mistake):
    """The Euler step with the metric it is given; without one (or with a metric mistake) with its own."""
    if eta < 0:
        raise ValueError("eta must be >= 0")
    sigma, grad = np.asarray(sigma, dtype=float), np.asarray(grad, dtype=float)
    if G_bar is None or metric_mistake:
        G_bar = _my_metric(sigma, **metric_mistake)
    G = G_bar if metric else np.eye(10)
    return sigma + sign * eta * np.einsum("ij,j->i", G, grad)


def my_overlap_ode_step(sigma, grad, eta, G_bar=None):
    if G_bar is None:
        G_bar = my_metric_bar(sigma)
    return _my_step(sigma, grad, eta, G_bar)


def _my_I1(sigma, signs=(1.0, 1.0, -1.0, -1.0)):
    """tr(S Gamma) with S = diag(signs) on (z, v, m, u)."""
    sigma = np.asarray(sigma, dtype=float)
    norms = np.stack([sigma[..., ORDER.index(n)] for n in ("zz", "vv", "mm", "uu")], -1)
    I1 = norms @ np.array(signs)
    return float(I1) if sigma.ndim == 1 else I1


def my_invariant_I1(sigma):
    return _my_I1(sigma)


def _my_drift(z, m, y, eta, steps, *, sequential=False, rate=lambda N: 1.0, after=False, sign=-1.0):
    """Step by step with the overlaps of the moment; the usual mistakes as options."""
    z, m = np.array(z, dtype=float), np.array(m, dtype=float)
    if z.shape != m.shape or not eta > 0 or steps < 1:
        raise ValueError("z and m of one length, eta > 0, steps >= 1")
    N, loss, I1 = len(z), [], []
    for _ in range(steps + 1):
        g = np.dot(z, m) / N - y
        if not after:
            loss.append(g**2 / 2)
            I1.append((np.dot(z, z) - np.dot(m, m)) / N)
        z_new = z + sign * eta * rate(N) * g * m
        m = m + sign * eta * rate(N) * g * (z_new if sequential else z)
        z = z_new
        if after:
            loss.append((np.dot(z, m) / N - y) ** 2 / 2)
            I1.append((np.dot(z, z) - np.dot(m, m)) / N)
    return {"loss": np.array(loss), "I1": np.array(I1)}


def my_invariant_drift(z, m, y, eta, steps):
    return _my_drift(z, m, y, eta, steps)


_REVERSED_NORMS = ORDER[:6] + ["zz", "vv", "uu", "mm"]

LOWRANK_MISTAKES = {
    "overlaps_from_vectors": {
        "no 1/N": (lambda m, u, v, z: _my_overlaps(m, u, v, z, divide=lambda N: 1), "divide each dot product by N"),
        "N - 1": (lambda m, u, v, z: _my_overlaps(m, u, v, z, divide=lambda N: N - 1), "not N - 1"),
        "norms last reversed": (
            lambda m, u, v, z: _my_overlaps(m, u, v, z, order=_REVERSED_NORMS),
            "the values are right but in the wrong order",
        ),
        "alphabetical": (
            lambda m, u, v, z: _my_overlaps(m, u, v, z, order=sorted(ORDER)),
            "the values are right but in the wrong order",
        ),
        "norms": (
            lambda m, u, v, z: np.r_[_my_overlaps(m, u, v, z)[:6], np.linalg.norm([m, u, v, z], axis=1)],
            "not a norm",
        ),
    },
    "effective_output": {
        "read before": (lambda s, x, dt: _my_latent(s, x, dt, read="before"), "read the output AFTER the update"),
        "no dt in the leak": (lambda s, x, dt: _my_latent(s, x, dt, keep=0.0), "the leak has dt too"),
        "no leak": (lambda s, x, dt: _my_latent(s, x, dt, keep=1.0), "the state leaks"),
        "sequential": (lambda s, x, dt: _my_latent(s, x, dt, sequential=True), "from the OLD values"),
        "vm and vu swapped": (
            lambda s, x, dt: _my_latent(np.asarray(s)[[0, 1, 3, 2]], x, dt),
            "sigma_vm multiplies kappa_m",
        ),
    },
    "metric_bar": {
        "no factor 2": (lambda sigma: _my_metric(sigma, missing_two=True), "G_(mm),(mm) = 4 sigma_mm"),
        "two terms": (lambda sigma: _my_metric(sigma, two_terms=True), "the crossed ones"),
        "visible columns only": (
            lambda sigma: np.c_[_my_metric(sigma)[:, :4], np.zeros((10, 6))],
            "the columns of the invisible overlaps included",
        ),
        "norms reversed": (
            lambda sigma: _my_metric(sigma)[np.ix_([0, 1, 2, 3, 4, 5, 9, 8, 7, 6], [0, 1, 2, 3, 4, 5, 9, 8, 7, 6])],
            "rows and columns go in the order of the overlaps",
        ),
    },
    "overlap_ode_step": {
        "sign": (lambda sigma, grad, eta, G_bar=None: _my_step(sigma, grad, eta, G_bar, sign=1.0), "AGAINST"),
        "no metric": (
            lambda sigma, grad, eta, G_bar=None: _my_step(sigma, grad, eta, G_bar, metric=False),
            "with the metric G-bar",
        ),
        "own metric without the 2": (
            lambda sigma, grad, eta, G_bar=None: _my_step(sigma, grad, eta, missing_two=True),
            "use the G_bar it is given",
        ),
        "diagonal only": (
            lambda sigma, grad, eta, G_bar=None: np.asarray(sigma) - eta * np.diag(G_bar) * grad,
            "matrix-vector product",
        ),
        "no check": (
            lambda sigma, grad, eta, G_bar=None: np.asarray(sigma) - eta * G_bar @ grad,
            "ValueError if eta < 0",
        ),
    },
    "invariant_drift": {
        "sequential": (lambda z, m, y, eta, steps: _my_drift(z, m, y, eta, steps, sequential=True), "OLD z and m"),
        "rate eta / N": (
            lambda z, m, y, eta, steps: _my_drift(z, m, y, eta, steps, rate=lambda N: 1.0 / N),
            "the rate N eta",
        ),
        "ascent": (lambda z, m, y, eta, steps: _my_drift(z, m, y, eta, steps, sign=1.0), "z - eta g m"),
        "recorded after each step": (
            lambda z, m, y, eta, steps: _my_drift(z, m, y, eta, steps, after=True),
            "entry 0 is before any step",
        ),
    },
    "invariant_I1": {
        "negated": (lambda sigma: _my_I1(sigma, (-1.0, -1.0, 1.0, 1.0)), "S = diag(1, 1, -1, -1)"),
        "pairs mixed": (lambda sigma: _my_I1(sigma, (1.0, -1.0, 1.0, -1.0)), "the norms of the readout side"),
        "trace": (lambda sigma: _my_I1(sigma, (1.0, 1.0, 1.0, 1.0)), "not tr(Gamma)"),
    },
}


# ============================================================================= all chapters

CORRECT = {
    "count_ngrams": my_count_ngrams,
    "add_k_prob": my_add_k_prob,
    "perplexity": my_perplexity,
    "continuation_counts": my_continuation_counts,
    "kn_bigram_prob": my_kn_bigram_prob,
    "mkn_discounts": my_mkn_discounts,
    "order_sweep": my_order_sweep,
    "context_windows": my_context_windows,
    "nlm_logits": my_nlm_logits,
    "masked_cross_entropy": my_masked_cross_entropy,
    "perplexity_from_loss": my_perplexity_from_loss,
    "best_interpolation_weight": my_best_interpolation_weight,
    "overfit_curve": my_overfit_curve,
    "elman_forward": my_elman_forward,
    "bptt_gradients": my_bptt_gradients,
    "product_norms_vs_lag": my_product_norms_vs_lag,
    "clip_grad_norm": my_clip_grad_norm,
    "gradient_regime": my_gradient_regime,
    "radius_sweep": my_radius_sweep,
    "lstm_step": my_lstm_step,
    "gru_step": my_gru_step,
    "reservoir_update": my_reservoir_update,
    "ridge_readout": my_ridge_readout,
    "memory_capacity": my_memory_capacity,
    "memory_curve": my_memory_curve,
    "kappa_alpha": my_kappa_alpha,
    "ecf_alpha_estimate": my_ecf_alpha_estimate,
    "oriented_statistic": my_oriented_statistic,
    "gamma_const": my_gamma_const,
    "gamma_diag": my_gamma_diag,
    "window_from_table": my_window_from_table,
    "window_closed_form": my_window_closed_form,
    "spread_exponent": my_spread_exponent,
    "overlaps_from_vectors": my_overlaps_from_vectors,
    "effective_output": my_effective_output,
    "metric_bar": my_metric_bar,
    "overlap_ode_step": my_overlap_ode_step,
    "invariant_I1": my_invariant_I1,
    "invariant_drift": my_invariant_drift,
}
"""The exercise name -> an independent correct implementation."""

MISTAKES = {
    **NGRAM_MISTAKES,
    **NLM_MISTAKES,
    **RNN_MISTAKES,
    **GATED_MISTAKES,
    **LEARNABILITY_MISTAKES,
    **LOWRANK_MISTAKES,
}
"""The exercise name -> {mistake: (wrong answer, words its targeted hint must contain)}."""

VISIBLE_HINT_ONLY = {
    ("perplexity", "sign"),
    ("kappa_alpha", "no check"),
    ("overlap_ode_step", "no check"),
    ("order_sweep", "one stream"),  # the test is split in halves on the worked example only
    ("memory_curve", "leak on the old state"),  # a = 1 swaps to a = 0 (no state); a slow swap misses the curve
}
"""Mistakes whose hint a hidden draw may miss: its first failing case can hold a token of
probability zero, where the perplexity is infinite and the sign mistake gives 0. Hidden draws of
kappa_alpha hold no invalid alpha and those of overlap_ode_step no negative eta, so a missing
check fails visible cases only."""
