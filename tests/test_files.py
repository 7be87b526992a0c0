"""seqlearn._files.replacing: a file is written whole or not at all."""

import pytest

from seqlearn._files import replacing


def test_the_file_appears_only_when_the_block_completes(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    with replacing(target) as tmp:
        tmp.write_text("new")
        assert not target.exists() and tmp.parent == target.parent
    assert target.read_text() == "new" and [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_a_failure_leaves_the_old_file_and_nothing_else(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")

    def write_half():
        with replacing(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_half()
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
