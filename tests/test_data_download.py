"""Downloaders, on local files only: ``file://`` URLs and a monkeypatched fetch."""

import hashlib
import urllib.error
import zipfile
from pathlib import Path

import pytest

from seqlearn.data import download as dl
from seqlearn.data.download import ChecksumError, DownloadError, RemoteFile

PTB_SAMPLE = (
    " aer banknote berlitz calloway centrust cluett fromstein gitano guterman \n"
    " pierre <unk> N years old will join the board as a nonexecutive director nov. N \n"
    " mr. <unk> is chairman of <unk> n.v. the dutch publishing group \n"
)
WIKITEXT_SAMPLE = (
    " \n"
    " = Valkyria Chronicles III = \n"
    " \n"
    " Senjō no Valkyria 3 : <unk> Chronicles ( Japanese : 戦場のヴァルキュリア3 ) is a game . \n"
    " \n"
    " = = Gameplay = = \n"
    " \n"
    " As with previous <unk> Chronicles games , it is a tactical role @-@ playing game . \n"
)
SHAKESPEARE_SAMPLE = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n"


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def local_entry(tmp_path, data: bytes, name="sample", filename="sample/sample.txt", checksum=None):
    source = tmp_path / "remote" / name
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(data)
    return RemoteFile(name, filename, (source.as_uri(),), checksum or sha256(data))


def leftovers(directory: Path):
    return sorted(p.name for p in directory.rglob("*") if p.is_file()) if directory.exists() else []


def test_data_dir_default_and_override(monkeypatch, tmp_path):
    monkeypatch.delenv("SEQLEARN_DATA", raising=False)
    assert dl.data_dir() == Path.home() / ".cache" / "seqlearn"
    monkeypatch.setenv("SEQLEARN_DATA", str(tmp_path / "corpora"))
    assert dl.data_dir() == tmp_path / "corpora"
    assert not (tmp_path / "corpora").exists()  # created lazily, by download only


def test_download_verifies_and_then_uses_the_cache(monkeypatch, tmp_path):
    data = b"hello corpus\n" * 1000
    entry = local_entry(tmp_path, data)
    path = dl.download(entry, root=tmp_path / "cache")
    assert path == tmp_path / "cache" / "sample" / "sample.txt"
    assert path.read_bytes() == data
    assert leftovers(path.parent) == ["sample.txt"]

    def no_fetch(*args, **kwargs):
        raise AssertionError("a cached, verified file must not be fetched again")

    monkeypatch.setattr(dl, "fetch_url", no_fetch)
    assert dl.download(entry, root=tmp_path / "cache") == path


def test_seqlearn_data_sets_the_cache_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLEARN_DATA", str(tmp_path / "env-cache"))
    entry = local_entry(tmp_path, b"abc")
    assert dl.download(entry) == tmp_path / "env-cache" / "sample" / "sample.txt"


def test_checksum_mismatch_raises_and_leaves_nothing(tmp_path):
    entry = local_entry(tmp_path, b"the real bytes", checksum=sha256(b"other bytes"))
    with pytest.raises(ChecksumError) as info:
        dl.download(entry, root=tmp_path / "cache")
    message = str(info.value)
    assert sha256(b"other bytes") in message and sha256(b"the real bytes") in message
    assert "expected" in message and "got" in message
    assert leftovers(tmp_path / "cache") == []


@pytest.mark.parametrize("algorithm", ["md5", "sha1"])
def test_md5_and_sha1_checksums_are_supported(tmp_path, algorithm):
    data = b"legacy checksum"
    digest = hashlib.new(algorithm, data).hexdigest()
    entry = local_entry(tmp_path, data, checksum=f"{algorithm}:{digest}")
    assert dl.download(entry, root=tmp_path / "cache").read_bytes() == data
    bad = local_entry(tmp_path, data, name="bad", checksum=f"{algorithm}:{'0' * len(digest)}")
    with pytest.raises(ChecksumError, match=algorithm):
        dl.download(bad, root=tmp_path / "cache2")


@pytest.mark.parametrize("interruption", [OSError("connection reset"), KeyboardInterrupt()])
def test_interrupted_download_leaves_no_partial_file(monkeypatch, tmp_path, interruption):
    entry = local_entry(tmp_path, b"x" * 100)

    def broken_fetch(url, out, **kwargs):
        out.write(b"x" * 50)
        raise interruption

    monkeypatch.setattr(dl, "fetch_url", broken_fetch)
    with pytest.raises((DownloadError, KeyboardInterrupt)):
        dl.download(entry, root=tmp_path / "cache")
    assert leftovers(tmp_path / "cache") == []


def test_offline_error_says_what_to_do(monkeypatch, tmp_path):
    entry = local_entry(tmp_path, b"data")

    def offline(url, out, **kwargs):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(dl, "fetch_url", offline)
    with pytest.raises(DownloadError) as info:
        dl.download(entry, root=tmp_path / "cache")
    assert isinstance(info.value, ConnectionError)
    message = str(info.value)
    target = tmp_path / "cache" / "sample" / "sample.txt"
    for part in ("could not download sample", entry.urls[0], "offline?", str(target), "SEQLEARN_DATA"):
        assert part in message
    assert leftovers(tmp_path / "cache") == []


def test_missing_local_source_is_a_download_error(tmp_path):
    entry = RemoteFile("gone", "gone.txt", ((tmp_path / "nowhere.txt").as_uri(),), sha256(b""))
    with pytest.raises(DownloadError, match="could not download gone"):
        dl.download(entry, root=tmp_path / "cache")


def test_mirror_is_tried_after_a_failing_url(tmp_path):
    good = local_entry(tmp_path, b"mirror bytes")
    entry = RemoteFile("m", "m.txt", ((tmp_path / "missing").as_uri(), good.urls[0]), good.checksum)
    assert dl.download(entry, root=tmp_path / "cache").read_bytes() == b"mirror bytes"


def test_corrupt_cached_file_is_replaced(tmp_path):
    entry = local_entry(tmp_path, b"good bytes")
    target = tmp_path / "cache" / entry.filename
    target.parent.mkdir(parents=True)
    target.write_bytes(b"truncated")
    with pytest.warns(UserWarning, match="checksum"):
        path = dl.download(entry, root=tmp_path / "cache")
    assert path.read_bytes() == b"good bytes"


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown dataset file"):
        dl.download("ptb-trian")
    with pytest.raises(TypeError, match="name"):
        dl.download(3)
    with pytest.raises(ValueError, match="algorithm"):
        RemoteFile("x", "x.txt", ("file:///x",), "crc32:1234")
    with pytest.raises(ValueError, match="64 hex digits"):
        RemoteFile("x", "x.txt", ("file:///x",), "sha256:abc")
    with pytest.raises(ValueError, match="sha256:<hex>"):
        RemoteFile("x", "x.txt", ("file:///x",), "0" * 64)
    with pytest.raises(ValueError, match="relative path"):
        RemoteFile("x", "../x.txt", ("file:///x",), "md5:" + "0" * 32)
    with pytest.raises(ValueError, match="urls"):
        RemoteFile("x", "x.txt", "file:///x", "md5:" + "0" * 32)
    with pytest.raises(ValueError, match="split"):
        dl.load_ptb(split="dev")


def test_registry_entries_are_well_formed():
    assert set(dl.REGISTRY) == {"ptb-train", "ptb-valid", "ptb-test", "wikitext-2", "tiny-shakespeare"}
    for name, entry in dl.REGISTRY.items():
        assert entry.name == name
        assert entry.checksum.startswith("sha256:")
        assert all(url.startswith("https://") for url in entry.urls)


@pytest.fixture
def fake_registry(monkeypatch, tmp_path):
    """The real registry's names, pointing at local files in the real formats."""
    wikitext_zip = tmp_path / "remote" / "wikitext-2-v1.zip"
    wikitext_zip.parent.mkdir(parents=True)
    with zipfile.ZipFile(wikitext_zip, "w") as archive:
        for split in ("train", "valid", "test"):
            archive.writestr(f"wikitext-2/wiki.{split}.tokens", WIKITEXT_SAMPLE.replace("game", f"{split}-game"))
    entries = {
        "wikitext-2": RemoteFile(
            "wikitext-2", "wikitext-2/wikitext-2-v1.zip", (wikitext_zip.as_uri(),), sha256(wikitext_zip.read_bytes())
        ),
        "tiny-shakespeare": local_entry(
            tmp_path, SHAKESPEARE_SAMPLE.encode(), "tiny-shakespeare", "tiny-shakespeare/input.txt"
        ),
    }
    for split in ("train", "valid", "test"):
        data = PTB_SAMPLE.replace("board", f"{split}-board").encode()
        entries[f"ptb-{split}"] = local_entry(tmp_path, data, f"ptb-{split}", f"ptb/ptb.{split}.txt")
    monkeypatch.setattr(dl, "REGISTRY", entries)
    monkeypatch.setenv("SEQLEARN_DATA", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_load_ptb(fake_registry):
    train = dl.load_ptb("train")
    assert len(train) == 3
    assert train[1] == [
        "pierre",
        "<unk>",
        "N",
        "years",
        "old",
        "will",
        "join",
        "the",
        "train-board",
        "as",
        "a",
        "nonexecutive",
        "director",
        "nov.",
        "N",
    ]
    splits = dl.load_ptb()
    assert set(splits) == {"train", "valid", "test"}
    assert "valid-board" in splits["valid"][1]
    assert (fake_registry / "ptb" / "ptb.test.txt").exists()


def test_load_wikitext2(fake_registry):
    train = dl.load_wikitext2("train")
    assert train[0] == ["=", "Valkyria", "Chronicles", "III", "="]
    assert train[1][:3] == ["Senjō", "no", "Valkyria"]
    assert len(train) == 4  # blank lines skipped
    no_headings = dl.load_wikitext2("test", headings=False)
    assert len(no_headings) == 2 and all(line[0] != "=" for line in no_headings)
    assert "valid-game" in dl.load_wikitext2()["valid"][1]


def test_load_tiny_shakespeare(fake_registry):
    assert dl.load_tiny_shakespeare() == SHAKESPEARE_SAMPLE
    assert dl.load_tiny_shakespeare(lines=True)[:2] == [
        "First Citizen:",
        "Before we proceed any further, hear me speak.",
    ]


def test_the_package_attribute_is_the_module():
    import seqlearn.data

    assert seqlearn.data.download is dl
    assert callable(dl.download)
