"""A file written by Windows PowerShell's `>` is UTF-16 with a byte-order mark: kubectl reads it (cli-runtime's
FileVisitor decodes a file through `unicode.BOMOverride`), so draguard does too — the same findings at the
same lines as its UTF-8 twin; bytes that are not UTF-16 after the mark are an error on the file."""

from __future__ import annotations

from pathlib import Path

from tests import builders as b
from tests.builders import dump_yaml
from tests.cliproc import draguard

# a claim whose name the API server rejects: one finding, at the line of `name`
CLAIM = dump_yaml([b.claim("Bad_Name", [b.request("gpu", "gpu.example.com")], ns="ml")])


def test_a_utf16_file_with_its_byte_order_mark_reads_as_its_utf8_twin(tmp_path: Path) -> None:
    (tmp_path / "utf8.yaml").write_text(CLAIM, encoding="utf-8")
    (tmp_path / "le.yaml").write_bytes(b"\xff\xfe" + CLAIM.replace("\n", "\r\n").encode("utf-16-le"))
    (tmp_path / "be.yaml").write_bytes(b"\xfe\xff" + CLAIM.encode("utf-16-be"))
    lines = {}
    for name in ("utf8.yaml", "le.yaml", "be.yaml"):
        p = draguard("validate", "--no-feasibility", str(tmp_path / name))
        assert p.returncode == 1, p.stdout + p.stderr
        lines[name] = [ln.removeprefix(str(tmp_path / name)) for ln in p.stdout.splitlines()]
    at = b.line_of(CLAIM, "name: Bad_Name")
    assert lines["utf8.yaml"][0].startswith(
        f':{at}: error meta.name: metadata.name: Invalid value: "Bad_Name"'
    )
    assert lines["le.yaml"] == lines["be.yaml"] == lines["utf8.yaml"]


def test_bytes_that_are_not_utf16_after_the_mark_are_an_error_on_the_file(tmp_path: Path) -> None:
    (tmp_path / "odd.yaml").write_bytes(b"\xff\xfe" + CLAIM.encode("utf-16-le") + b"\x00")
    p = draguard("validate", str(tmp_path / "odd.yaml"))
    assert p.returncode == 1
    assert "error input.parse: not UTF-16 text after its byte-order mark" in p.stdout, p.stdout + p.stderr
