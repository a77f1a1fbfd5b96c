"""The zip safety corpus: bombs, escapes, links, lies and plain mistakes are refused."""

from __future__ import annotations

import io
import re
import stat
import struct
import zipfile
from pathlib import Path

import pytest

from memory.transfer.uploads.filetypes import UploadRefused, sniff_upload
from memory.transfer.uploads.zipsafe import (
    SQLITE_HEADER,
    ZipLimits,
    ZipRefused,
    extract_zip,
    inspect_zip,
    safe_member_path,
)

DB = SQLITE_HEADER + b"\x00" * 100
LIMITS = ZipLimits()


def make_zip(path: Path, members, *, compression=zipfile.ZIP_DEFLATED) -> Path:
    """Write ``members`` (name or ZipInfo, bytes) into a zip at ``path``."""
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


def special(name: str, kind: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (kind | 0o777) << 16
    return info


def refused(tmp_path: Path, members, limits: ZipLimits = LIMITS, **kw) -> str:
    """Both the up-front check and the extraction refuse; return the extraction's message."""
    source = make_zip(tmp_path / "upload.zip", members, **kw)
    target = tmp_path / "out"
    target.mkdir()
    with pytest.raises(ZipRefused) as extracted:
        extract_zip(source, target, limits)
    with pytest.raises(ZipRefused):
        inspect_zip(source, limits)
    return str(extracted.value)


# --- escapes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../evil.db", "climbs out of its folder"),
        ("dbdata/../../evil.db", "climbs out of its folder"),
        ("dbdata\\..\\..\\evil.db", "climbs out of its folder"),
        ("/etc/cron.d/evil", "absolute path"),
        ("\\\\server\\share\\evil.db", "absolute path"),
        ("C:\\Windows\\evil.db", "absolute path"),
        ("c:evil.db", "absolute path"),
    ],
)
def test_members_that_escape_are_refused(tmp_path, name, message):
    assert message in refused(tmp_path, [("pyrit.db", DB), (name, b"x")])
    assert not (tmp_path / "evil.db").exists()
    assert not any(p.name == "evil.db" for p in tmp_path.rglob("*"))


def test_nul_in_a_name_is_refused():
    with pytest.raises(ZipRefused, match="NUL"):
        safe_member_path("pyrit.db\x00.png")


@pytest.mark.parametrize(
    ("kind", "message"),
    [(stat.S_IFLNK, "symbolic link"), (stat.S_IFIFO, "special file"), (stat.S_IFCHR, "special")],
)
def test_links_and_special_files_are_refused(tmp_path, kind, message):
    link = special("dbdata/prompt-memory-entries/images/1.png", kind)
    assert message in refused(tmp_path, [("dbdata/pyrit.db", DB), (link, b"/etc/shadow")])


# --- bombs and sizes --------------------------------------------------------------------------


def test_high_compression_ratio_is_refused_as_a_bomb(tmp_path):
    zeros = b"\x00" * (4 * 1024 * 1024)
    message = refused(tmp_path, [("pyrit.db", DB), ("dbdata/a.bin", zeros)])
    assert "possible zip bomb" in message


def test_small_files_are_not_ratio_checked(tmp_path):
    source = make_zip(tmp_path / "ok.zip", [("pyrit.db", DB + b"\x00" * 500_000)])
    assert str(inspect_zip(source, LIMITS)) == "pyrit.db"


def test_member_count_limit(tmp_path):
    members = [("pyrit.db", DB)] + [(f"media/{i}.png", b"x") for i in range(5)]
    message = refused(tmp_path, members, ZipLimits(max_members=5))
    assert "holds 6 members; at most 5" in message


def test_member_size_limit(tmp_path):
    message = refused(
        tmp_path, [("pyrit.db", DB), ("big.wav", b"a" * 2000)], ZipLimits(max_member_bytes=1000)
    )
    assert "'big.wav' unpacks to 2.0 KiB; one file may be at most 1,000 bytes" in message


def test_total_size_limit(tmp_path):
    members = [("pyrit.db", DB), ("a.wav", b"a" * 900), ("b.wav", b"b" * 900)]
    assert "unpacks to more than" in refused(tmp_path, members, ZipLimits(max_total_bytes=1500))


def _patch_sizes(path: Path, name: bytes, size: int) -> None:
    """Make the local and central headers of member ``name`` declare ``size`` bytes."""
    data = bytearray(path.read_bytes())
    local = 0
    while True:
        local = data.index(b"PK\x03\x04", local)
        name_len = struct.unpack_from("<H", data, local + 26)[0]
        if bytes(data[local + 30 : local + 30 + name_len]) == name:
            struct.pack_into("<I", data, local + 22, size)
            break
        local += 4
    central = data.index(b"PK\x01\x02")
    while True:
        name_len = struct.unpack_from("<H", data, central + 28)[0]
        if bytes(data[central + 46 : central + 46 + name_len]) == name:
            struct.pack_into("<I", data, central + 24, size)
            break
        central = data.index(b"PK\x01\x02", central + 4)
    path.write_bytes(bytes(data))


def test_a_member_that_inflates_beyond_its_header_is_refused(tmp_path):
    source = make_zip(tmp_path / "liar.zip", [("pyrit.db", DB), ("dbdata/a.bin", b"z" * 5000)])
    _patch_sizes(source, b"dbdata/a.bin", 10)  # claims 10 bytes, holds 5000
    target = tmp_path / "out"
    target.mkdir()

    assert inspect_zip(source, LIMITS)  # the directory alone looks harmless
    with pytest.raises(ZipRefused, match=r"damaged|inflates beyond"):
        extract_zip(source, target, LIMITS)
    written = target / "dbdata" / "a.bin"
    assert not written.exists() or written.stat().st_size <= 10


# --- mistakes ---------------------------------------------------------------------------------


def test_encrypted_members_are_refused(tmp_path):
    source = make_zip(tmp_path / "secret.zip", [("pyrit.db", DB)])
    # zipfile cannot write encrypted members; set the "encrypted" bit as a real one has it.
    data = bytearray(source.read_bytes())
    data[6] |= 0x1  # local header, general purpose flags
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 0x1
    source.write_bytes(bytes(data))
    target = tmp_path / "out"
    target.mkdir()

    with pytest.raises(ZipRefused, match="encrypted"):
        extract_zip(source, target, LIMITS)
    with pytest.raises(ZipRefused, match="upload it unencrypted"):
        inspect_zip(source, LIMITS)


def test_duplicate_members_are_refused(tmp_path):
    with pytest.warns(UserWarning, match="Duplicate name"):
        message = refused(tmp_path, [("pyrit.db", DB), ("pyrit.db", DB)])
    assert "twice" in message


def test_names_equal_after_normalising_are_duplicates(tmp_path):
    assert "twice" in refused(tmp_path, [("dbdata/pyrit.db", DB), ("dbdata/./pyrit.db", DB)])


def test_a_file_and_a_folder_of_the_same_name_are_refused(tmp_path):
    source = make_zip(tmp_path / "clash.zip", [("pyrit.db", DB), ("a", b"x"), ("a/b.png", b"y")])
    target = tmp_path / "out"
    target.mkdir()
    with pytest.raises(ZipRefused, match="both a file and a folder"):
        extract_zip(source, target, LIMITS)


def test_no_database_is_a_clear_error(tmp_path):
    message = refused(tmp_path, [("dbdata/prompt-memory-entries/images/1.png", b"png")])
    assert message.startswith("The zip holds no PyRIT database")


def test_several_databases_are_refused_unless_one_is_pyrit_db(tmp_path):
    assert "several databases (a.db, b.sqlite)" in refused(
        tmp_path, [("a.db", DB), ("b.sqlite", DB)]
    )
    source = make_zip(tmp_path / "two.zip", [("dbdata/pyrit.db", DB), ("old/backup.sqlite", DB)])
    assert str(inspect_zip(source, LIMITS)) == "dbdata/pyrit.db"


def test_macos_resource_forks_are_not_databases(tmp_path):
    members = [("dbdata/pyrit.db", DB), ("__MACOSX/dbdata/._pyrit.db", b"\x00\x05\x16\x07")]
    source = make_zip(tmp_path / "mac.zip", members)
    assert str(inspect_zip(source, LIMITS)) == "dbdata/pyrit.db"


def test_a_database_member_that_is_not_sqlite_is_refused(tmp_path):
    assert "pyrit.db in the zip is not a SQLite database" in refused_on_extract(
        tmp_path, [("pyrit.db", b"not sqlite at all")]
    )


def refused_on_extract(tmp_path, members) -> str:
    source = make_zip(tmp_path / "u.zip", members)
    target = tmp_path / "out"
    target.mkdir()
    with pytest.raises(ZipRefused) as caught:
        extract_zip(source, target, LIMITS)
    return str(caught.value)


def test_a_damaged_zip_is_refused(tmp_path):
    source = tmp_path / "broken.zip"
    source.write_bytes(b"PK\x03\x04" + b"\x13" * 200)
    with pytest.raises(ZipRefused, match="damaged"):
        inspect_zip(source, LIMITS)


# --- the good case ----------------------------------------------------------------------------


def test_a_dbdata_zip_extracts_privately(tmp_path):
    members = [
        ("dbdata/pyrit.db", DB),
        ("dbdata/prompt-memory-entries/images/1795264620232622.png", b"\x89PNG..."),
        ("dbdata/seed-prompt-entries/audio/1.wav", b"RIFF...."),
    ]
    source = make_zip(tmp_path / "dbdata.zip", members)
    target = tmp_path / "out"
    target.mkdir(mode=0o700)
    seen = []

    database, root = extract_zip(source, target, LIMITS, lambda d, t: seen.append((d, t)))

    assert database == target / "dbdata" / "pyrit.db"
    assert root == target
    assert database.read_bytes() == DB
    assert seen == [(1, 3), (2, 3), (3, 3)]
    image = target / "dbdata/prompt-memory-entries/images/1795264620232622.png"
    assert image.read_bytes() == b"\x89PNG..."
    assert stat.S_IMODE(image.stat().st_mode) == 0o600
    assert stat.S_IMODE(image.parent.stat().st_mode) == 0o700


# --- file types -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "kind"),
    [(SQLITE_HEADER + b"\x10\x00", "sqlite"), (b"PK\x03\x04rest", "zip"), (b"PK\x05\x06", "zip")],
)
def test_sniffs_databases_and_zips(head, kind):
    assert sniff_upload(head) == kind


@pytest.mark.parametrize(
    ("head", "message"),
    [
        (b"", "The file is empty"),
        (b"\x1f\x8b\x08\x00", "gzip archive"),
        (b"\x89PNG\r\n\x1a\n", "a PNG image, not a PyRIT database"),
        (b'\xef\xbb\xbf  {"conversations": []}', "This looks like JSON"),
        (b'[{"id": 1}]', "POST /api/v1/ingest/"),
        (b"SQLite format 2\x00", "header is damaged"),
        (b"id,role,original_value\n", "neither a SQLite database nor a zip file"),
        (b"Rar!\x1a\x07\x00", "RAR archive"),
    ],
)
def test_other_files_get_a_message_naming_what_they_are(head, message):
    with pytest.raises(UploadRefused, match=re.escape(message)):
        sniff_upload(head)
    # and the message always says what to upload instead
    with pytest.raises(UploadRefused, match=r"pyrit\.db"):
        sniff_upload(head)


def test_zip_checks_accept_a_file_object():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("dbdata/pyrit.db", DB)
    buffer.seek(0)
    assert str(inspect_zip(buffer, LIMITS)) == "dbdata/pyrit.db"
