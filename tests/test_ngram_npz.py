"""seqlearn's binary model format (.npz): exact round trips, the command line, damaged files."""

import io

import numpy as np
import pytest

from seqlearn.ngram import KneserNey, ModifiedKneserNey, read_arpa, read_npz
from seqlearn.ngram.cli import main
from seqlearn.ngram.npz import FORMAT, is_npz

SENTENCES = [s.split() for s in ("a b c", "a b", "b c a", "c", "a a b c", "d a b", "b d d a c")]
TEST = [["a", "b", "zz"], ["d", "c", "a", "b"], ["zz"]]


def model(order=3):
    return ModifiedKneserNey(order, discounts=(0.5, 1.0, 1.5)).fit(SENTENCES)


def arrays(tables):
    return [*tables.index.keys, *tables.log10_p, *tables.log10_bo]


@pytest.mark.parametrize("order", [1, 2, 4])
def test_round_trip_is_exact(tmp_path, order):
    fitted = model(order)
    fitted.to_npz(tmp_path / "m.npz")
    loaded = read_npz(tmp_path / "m.npz")
    assert loaded.vocab_ == fitted.vocab_ and loaded.order == order
    for got, expected in zip(arrays(loaded.tables_), arrays(fitted.tables_), strict=True):
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(loaded.token_logprobs(TEST), fitted.token_logprobs(TEST))


def test_a_model_read_from_arpa_round_trips_through_a_file_object():
    text = io.StringIO()
    KneserNey(3, discounts=0.7).fit(SENTENCES).to_arpa(text)
    from_arpa = read_arpa(io.StringIO(text.getvalue()))
    buffer = io.BytesIO()
    from_arpa.to_npz(buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(read_npz(buffer).token_logprobs(TEST), from_arpa.token_logprobs(TEST))


def test_cli_writes_and_reads_the_binary_format(tmp_path, monkeypatch, capsys):
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    train.write_text("\n".join(" ".join(s) for s in SENTENCES) + "\n")
    test.write_text("\n".join(" ".join(s) for s in TEST) + "\n")
    common = ["estimate", "--order", "3", "--discount", "0.5", "1", "1.5", "--text", str(train)]
    assert main([*common, "--npz", str(tmp_path / "m.npz")]) == 0
    assert capsys.readouterr().out == ""  # no ARPA on standard output when --npz is given alone
    assert main([*common, "--npz", str(tmp_path / "b.npz"), "--arpa", str(tmp_path / "m.arpa")]) == 0
    assert is_npz(tmp_path / "m.npz") and not is_npz(tmp_path / "m.arpa")
    reports = []
    for name in ("m.npz", "m.arpa"):
        assert main(["perplexity", str(tmp_path / name), "--text", str(test)]) == 0
        reports.append(capsys.readouterr().out)
    assert reports[0] == reports[1] and "Tokens:\t11" in reports[0]


def test_a_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "m.npz"
    path.write_bytes(b"old")
    monkeypatch.setattr(np, "savez", lambda *a, **k: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        model().to_npz(path)
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["m.npz"]


def damaged(tmp_path, **changes):
    """A valid file for ``model()`` with some entries replaced (None: removed)."""
    tables = model().tables_
    entries = {"format": np.array(FORMAT), "words": np.array(tables.vocab.itos)}
    for k in (1, 2, 3):
        entries[f"keys{k}"], entries[f"log10_p{k}"] = tables.index.keys[k - 1], tables.log10_p[k - 1]
    entries.update(log10_bo1=tables.log10_bo[0], log10_bo2=tables.log10_bo[1])
    entries.update(changes)
    path = tmp_path / "bad.npz"
    np.savez(path, **{name: x for name, x in entries.items() if x is not None})
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"format": np.array("something else")}, "'format' entry"),
        ({"keys2": None}, "'keys2' is missing"),
        ({"log10_p2": np.zeros(3, dtype=np.float32)}, "'log10_p2' must be a 1-D float64"),
        ({"keys2": np.array([5, 3, 9]), "log10_p2": np.zeros(3)}, "keys of order 2 are not strictly increasing"),
        ({"log10_p1": np.full(7, np.nan)}, "order 1 has a log10 probability that is NaN"),
        ({"words": np.array(["a", "<unk>", "<s>", "</s>"])}, "'words' must list the vocabulary"),
        ({"log10_bo1": np.zeros(2)}, "backoffs of order 1 do not match"),
    ],
)
def test_damaged_files_raise_clear_errors(tmp_path, changes, message):
    with pytest.raises(ValueError, match=message):
        read_npz(damaged(tmp_path, **changes))


def test_a_file_that_is_not_npz(tmp_path):
    path = tmp_path / "m.npz"
    path.write_text("\\data\\\n")
    with pytest.raises(ValueError, match="not a valid seqlearn n-gram model file"):
        read_npz(path)
