"""Files written whole or not at all: a temporary file beside the target, renamed over it at the end."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

__all__ = ["replacing"]


@contextlib.contextmanager
def replacing(path) -> Iterator[Path]:
    """Yield a fresh temporary path beside ``path``; it replaces ``path`` when the block completes.

    If the block raises (a failed download, a checksum mismatch, a full disk), the temporary
    file is removed and ``path`` is left as it was: a reader never sees a half-written file.
    The directory is created if needed; the file gets the umask's permissions.
    """
    target = Path(path).absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
