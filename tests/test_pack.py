"""``grader pack``: exactly the public files and the marker, no secret text, the same bytes every time."""

import hashlib
import re
import tomllib
import zipfile

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.errors import UsageError
from grader.exercise import load_exercise
from grader.practice.pack import pack_exercise
from grader.practice.workspace import public_contents

ENTRIES = ["attention/", "attention/README.md", "attention/attention.py", "attention/grader.toml",
           "attention/test_attention_example.py"]


@pytest.fixture
def attention():
    return load_exercise("attention")


def test_exact_entries_and_contents(attention, tmp_path):
    out = tmp_path / "attention.zip"
    assert pack_exercise(attention, out) == ENTRIES
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == ENTRIES
        for name, data in public_contents(attention).items():  # what `grader init` writes, too
            assert zf.read(f"attention/{name}") == data
        assert zf.read("attention/attention.py") == attention.stub.read_bytes()
        marker = tomllib.loads(zf.read("attention/grader.toml").decode())
    assert marker["workspace"] == {"exercise": "attention", "submission": "attention.py",  # no local path
                                   "fingerprint": attention.fingerprint}


def test_no_secret_file_and_no_secret_text(attention, tmp_path):
    out = tmp_path / "attention.zip"
    pack_exercise(attention, out)
    names = zipfile.ZipFile(out).namelist()
    assert not [n for n in names if re.search(r"probes|checks|solution|mutant|exercise\.toml", n)]
    with zipfile.ZipFile(out) as zf:
        text = b"".join(zf.read(n) for n in names)
    secrets = [attention.probes, *attention.checks_dir.glob("*.py")]
    for source in secrets:  # every check's and probe's function name and docstring first line
        code = source.read_text()
        for fragment in re.findall(r"^def (\w+)", code, re.M) + re.findall(r'^    """(.{12,})', code, re.M):
            if fragment.startswith("test_") or len(fragment) > 11:
                assert fragment.encode() not in text, f"{fragment!r} from {source.name} is in the pack"
    assert b"test_sdpa" not in out.read_bytes() and b"test_mha" not in out.read_bytes()


def test_the_mistake_record_is_never_packed(attention, tmp_path):
    """mistakes.json names hidden checks and the mistakes each one catches: judge side, like checks/."""
    assert (attention.root / "mistakes.json").is_file()
    pack_exercise(attention, tmp_path / "attention.zip")
    names = zipfile.ZipFile(tmp_path / "attention.zip").namelist()
    assert names and not [n for n in names if "mistakes" in n]
    assert "mistakes.json" not in public_contents(attention)


def test_the_same_exercise_packs_to_the_same_sha256(attention, tmp_path):
    a, b = tmp_path / "a.zip", tmp_path / "sub" / "b.zip"
    pack_exercise(attention, a)
    pack_exercise(attention, b)
    assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()
    info = zipfile.ZipFile(a).infolist()
    assert {i.date_time for i in info} == {(1980, 1, 1, 0, 0, 0)}
    assert {i.external_attr >> 16 for i in info[1:]} == {0o100644}


def test_refuses_an_existing_file_without_force(attention, tmp_path):
    out = tmp_path / "keep.zip"
    out.write_bytes(b"the panel's other zip")
    r = CliRunner().invoke(main, ["pack", "attention", "-o", str(out)])
    assert r.exit_code == 2 and "already exists" in r.output and "--force" in r.output
    assert out.read_bytes() == b"the panel's other zip"
    r = CliRunner().invoke(main, ["pack", "attention", "-o", str(out), "--force"])
    assert r.exit_code == 0, r.output
    assert zipfile.ZipFile(out).namelist() == ENTRIES
    assert hashlib.sha256(out.read_bytes()).hexdigest() in r.output
    assert all(e in r.output for e in ENTRIES)


def test_refuses_to_write_inside_the_exercise_folder(attention):
    target = attention.checks_dir / "leak.zip"
    with pytest.raises(UsageError, match="inside the exercise folder"):
        pack_exercise(attention, target)
    assert not target.exists()


def test_pack_defaults_to_name_zip_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["pack", "attention"])
    assert r.exit_code == 0, r.output
    assert zipfile.ZipFile(tmp_path / "attention.zip").namelist() == ENTRIES
    assert "wrote attention.zip" in r.output
