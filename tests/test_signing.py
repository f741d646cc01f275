"""grader.evidence.signing: the panel's key (made on first use, 0600, outside the evidence) and its HMACs."""

from __future__ import annotations

import os
import stat

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.errors import UsageError
from grader.evidence.signing import ENV_VAR, FILENAME, Seal, key_path, load_key, seal_of, signing_key_for


@pytest.fixture
def data(tmp_path, monkeypatch):
    """No $GRADER_KEY_FILE: the key lives in the (private, per-test) data folder, as on a panel's machine."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("GRADER_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def test_the_key_is_made_on_first_use_in_the_data_folder_with_mode_0600(data):
    assert key_path() == data / FILENAME and load_key(create=False) is None  # checking never makes one
    assert not (data / FILENAME).exists()
    key = load_key(create=True)
    assert key.path == data / FILENAME and len(key.secret) == 32
    if os.name == "posix":
        assert stat.S_IMODE((data / FILENAME).stat().st_mode) == 0o600
    assert load_key(create=True) == key == load_key(create=False)  # made once, then read
    assert [p.name for p in data.iterdir()] == [FILENAME]  # no temporary file left beside it


def test_two_keys_differ_and_their_ids_never_show_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "a.key"))
    a = load_key(create=True)
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "b.key"))
    b = load_key(create=True)
    assert a.secret != b.secret and a.id != b.id and len(a.id) == 16
    assert a.id not in a.secret.hex()


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_key_others_can_read_is_refused_naming_the_fix(data):
    key = load_key(create=True)
    key.path.chmod(0o644)
    with pytest.raises(UsageError, match="can be read or written by others") as e:
        load_key(create=False)
    assert f"chmod 600 {key.path}" in e.value.hint


def test_a_file_that_is_no_key_is_refused(data):
    data.mkdir()
    (data / FILENAME).write_text("not a key\n")
    (data / FILENAME).chmod(0o600)
    with pytest.raises(UsageError, match="is not a grader signing key"):
        load_key(create=False)


def test_macs_bind_their_domain_and_each_part(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "k"))
    key = load_key(create=True)
    mac = key.mac("row", "ab", "c")
    assert key.verifies(mac, "row", "ab", "c")
    assert not key.verifies(mac, "row", "a", "bc")  # parts are length-prefixed: no two lists encode alike
    assert not key.verifies(mac, "file", "ab", "c") and not key.verifies(mac, "row", "ab", "c", None)
    assert not key.verifies("0" * 64, "row", "ab", "c")


def test_a_seal_says_unsigned_other_key_no_key_edited_or_signed(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "k"))
    key = load_key(create=True)
    assert seal_of(key, None, lambda k: True) is Seal.UNSIGNED
    assert seal_of(None, key.id, lambda k: True) is Seal.NO_KEY
    assert seal_of(key, "0123456789abcdef", lambda k: True) is Seal.OTHER_KEY
    assert seal_of(key, key.id, lambda k: False) is Seal.EDITED
    assert seal_of(key, key.id, lambda k: True) is Seal.SIGNED


def test_a_key_inside_the_folder_it_would_sign_is_refused_before_it_is_made(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "bundle" / "signing.key"))
    with pytest.raises(UsageError, match="inside the bundle"):
        signing_key_for(tmp_path / "bundle", "bundle")
    assert not (tmp_path / "bundle").exists()
    assert signing_key_for(tmp_path / "elsewhere", "bundle").path == tmp_path / "bundle" / "signing.key"


def test_grader_key_shows_where_and_the_id_never_the_key(data):
    r = CliRunner().invoke(main, ["key"])
    assert r.exit_code == 0 and "no signing key yet at" in r.output and not (data / FILENAME).exists()
    key = load_key(create=True)
    r = CliRunner().invoke(main, ["key"])
    assert r.exit_code == 0 and f"key id: {key.id}" in r.output and str(key.path) in r.output
    assert key.secret.hex() not in r.output
