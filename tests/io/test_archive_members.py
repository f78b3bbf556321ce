"""The size check every archive reader makes of a zip member's declared sizes (skframe.limits)."""

import zipfile

import pytest

from skframe.exceptions import DataFormatError, PersistenceError
from skframe.limits import archive_member_impossible


def _member(compress_type, file_size, compress_size, header_offset=0):
    info = zipfile.ZipInfo("X.npy")
    info.compress_type, info.file_size, info.compress_size = compress_type, file_size, compress_size
    info.header_offset = header_offset
    return info


@pytest.mark.parametrize("info, file_size, impossible", [
    (_member(zipfile.ZIP_STORED, 100, 100), 1000, False),
    (_member(zipfile.ZIP_STORED, 101, 100), 1000, True),  # a stored member holds what it declares
    (_member(zipfile.ZIP_STORED, 100, 100, header_offset=950), 1000, True),  # ends past the file
    (_member(zipfile.ZIP_DEFLATED, 5000, 100), 1000, False),  # a small member may inflate
    (_member(zipfile.ZIP_DEFLATED, 50, 100, header_offset=901), 1000, True),
])
def test_impossible_sizes_are_told(info, file_size, impossible):
    assert archive_member_impossible(info, file_size, "f: member 'X.npy'", "so its data", DataFormatError) \
        is impossible


@pytest.mark.parametrize("error", [DataFormatError, PersistenceError])
def test_expansion_over_the_limit_raises_the_reader_s_error(error, monkeypatch):
    monkeypatch.setenv("SKFRAME_MAX_EXPANSION", "10")
    info = _member(zipfile.ZIP_DEFLATED, (1 << 20) + 10 * 100 + 1, 100)
    with pytest.raises(error) as exc:
        archive_member_impossible(info, 1000, "m.skf: entry 'X.npy'", "so its data", error)
    message = str(exc.value)
    assert message.startswith(f"m.skf: entry 'X.npy' declares {info.file_size} bytes from 100 compressed, so its "
                              "data")
    assert "SKFRAME_MAX_EXPANSION" in message
