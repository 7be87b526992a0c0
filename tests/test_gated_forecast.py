"""seqlearn.gated.forecast: the windows, and predictions after e epochs equal to a fresh model's trained e epochs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from seqlearn.gated import SequenceGated
from seqlearn.gated.forecast import series_windows, train_forecaster
from seqlearn.rnn import fit_task

SERIES = np.sin(0.3 * np.arange(160)) * 0.5


def test_the_windows_overlap_by_half_and_target_the_next_step():
    x, y = series_windows(SERIES, 60, 20)
    starts = [0, 10, 20, 30]  # every start s < 60 - 20
    assert x.shape == (4, 20, 1) and y.shape == (4, 20) and x.dtype == y.dtype == np.float32
    for j, s in enumerate(starts):
        np.testing.assert_array_equal(x[j, :, 0], SERIES[s : s + 20].astype(np.float32))
        np.testing.assert_array_equal(y[j], SERIES[s + 1 : s + 21].astype(np.float32))


def _fresh_predictions(epochs: int) -> np.ndarray:
    """An independent run: a new LSTM trained `epochs` epochs by fit_task, then read over the test part."""
    x, y = series_windows(SERIES, 60, 20)
    model = SequenceGated(1, 4, 1, cell="lstm", many_to_one=False, seed=3)
    fit_task(model, x, y, loss="mse", lr=1e-2, epochs=epochs, batch_size=2, clip_grad_norm=1.0, device="cpu", seed=3)
    context = torch.tensor(SERIES[40:90], dtype=torch.float32)[None, :, None]
    with torch.no_grad():
        return model(context)[0, 20:, 0].numpy()


def test_predictions_after_e_epochs_are_a_fresh_run_of_e_epochs():
    run = train_forecaster(SERIES, 60, 30, [1, 3], hidden_size=4, window=20, batch_size=2, seed=3)
    assert sorted(run.predictions) == [1, 3] and run.predictions[3].shape == (30,)
    assert run.seconds[1] <= run.seconds[3]
    assert (
        run.updates_per_epoch == 2 and run.n_params == 4 * 4 * (1 + 4) + 2 * 4 * 4 + 4 + 1
    )  # 4H(D + H) + 8H, readout H + 1
    for e in (1, 3):
        np.testing.assert_allclose(run.predictions[e], _fresh_predictions(e), rtol=0, atol=1e-6)
    assert not np.allclose(run.predictions[1], run.predictions[3]), "training changes the predictions"


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="increasing"):
        train_forecaster(SERIES, 60, 30, [3, 1], window=20)
    with pytest.raises(ValueError, match="series must hold"):
        train_forecaster(SERIES, 100, 100, [1], window=20)
    with pytest.raises(ValueError, match="window"):
        series_windows(SERIES, 60, 60)
    with pytest.raises(TypeError, match="each epoch count"):
        train_forecaster(SERIES, 60, 30, [1.5], window=20)
