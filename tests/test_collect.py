"""``grader collect``: hand-in zips into a submissions folder, each into its own candidate's folder only (issue 36).

The README's collect step used to unzip every hand-in into one folder: a zip holding ``ann/attention/attention.py``
and ``bob/attention/attention.py`` replaced ann's own answer and gave bob one he never sent. Fast, no sandbox:
zips are built here as ``grader hand-in`` writes them, and as an attacker would.
"""

from __future__ import annotations

import hashlib
import stat
import unicodedata
import zipfile
from pathlib import Path

from click.testing import CliRunner

from grader.batch.collect import HANDINS, collect
from grader.batch.layout import discover
from grader.cli import main

ANSWER = b"def scaled_dot_product_attention(q, k, v, mask=None):\n    return q, k\n"
KNOWN = {"attention": "attention.py"}


def handin_toml(candidate: str, sha256: str, exercise: str = "attention", file: str = "attention.py") -> bytes:
    return (f'[hand_in]\ncandidate = "{candidate}"\nexercise = "{exercise}"\nfile = "{file}"\n'
            f'sha256 = "{sha256}"\n').encode()


def make_zip(path: Path, entries: dict[str, bytes], links: tuple[str, ...] = ()) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, "/etc/passwd")
    return path


def honest(tmp: Path, candidate: str, answer: bytes = ANSWER, name: str | None = None) -> Path:
    sha = hashlib.sha256(answer).hexdigest()
    return make_zip(tmp / (name or f"{candidate}-attention.zip"),
                    {f"{candidate}/attention/attention.py": answer,
                     f"{candidate}/attention/HANDIN.toml": handin_toml(candidate, sha)})


def test_a_zip_that_claims_other_candidates_folders_writes_none_of_them(tmp_path):
    into = tmp_path / "submissions"
    [ann] = collect([honest(tmp_path, "ann")], into)
    assert ann.refused is None and ann.sha256_checked
    mallory = make_zip(tmp_path / "mallory-attention.zip", {
        "mallory/attention/attention.py": ANSWER,
        "mallory/attention/HANDIN.toml": handin_toml("mallory", hashlib.sha256(ANSWER).hexdigest()),
        "ann/attention/attention.py": b"WRONG = 1\n", "bob/attention/attention.py": ANSWER,
        "../escape.py": b"x", "/abs.py": b"x"}, links=("mallory/attention/link.py",))
    [r] = collect([mallory], into)
    assert r.refused is None and r.candidate == "mallory"
    assert len(r.refused_entries) == 5 and all("ann/" not in e or "outside" in e for e in r.refused_entries)
    assert (into / "ann" / "attention" / "attention.py").read_bytes() == ANSWER  # ann's own answer stands
    assert not (into / "bob").exists() and not (tmp_path / "escape.py").exists()
    assert sorted(p.name for p in into.iterdir()) == ["ann", "mallory"]


def test_a_zip_whose_name_and_record_disagree_is_refused_whole(tmp_path):
    into = tmp_path / "submissions"
    forged = honest(tmp_path, "ann", b"WRONG = 1\n", name="mallory-attention.zip")
    [r] = collect([forged], into)
    assert r.refused is not None and "called 'mallory-attention.zip', not ann-attention.zip" in r.refused
    assert list(into.iterdir()) == []


def test_a_second_hand_in_is_kept_beside_the_first_and_the_newest_is_graded(tmp_path):
    into = tmp_path / "submissions"
    first = honest(tmp_path, "ann", b"FIRST = 1\n")
    (tmp_path / "later").mkdir()
    second = honest(tmp_path / "later", "ann", b"SECOND = 2\n")
    assert [r.earlier for r in collect([first, second], into)] == [0, 1]
    folder = into / "ann" / "attention"
    assert (folder / "attention.py").read_bytes() == b"SECOND = 2\n"
    kept = sorted((folder / HANDINS).iterdir())
    assert [(k / "attention.py").read_bytes() for k in kept] == [b"FIRST = 1\n", b"SECOND = 2\n"]
    assert "sha256_checked = true" in (kept[0] / "collected.toml").read_text()
    [again] = collect([second], into)
    assert again.already and len(list((folder / HANDINS).iterdir())) == 2  # the same zip is collected once
    [found] = discover(into, known=KNOWN).found
    assert found.source == b"SECOND = 2\n" and found.provenance.checked and found.provenance.handins == 2


def test_the_sha256_is_checked_and_a_file_changed_after_collection_is_reported_by_the_batch(tmp_path):
    into = tmp_path / "submissions"
    lying = make_zip(tmp_path / "ann-attention.zip", {"ann/attention/attention.py": ANSWER,
                                                       "ann/attention/HANDIN.toml": handin_toml("ann", "0" * 64)})
    [r] = collect([lying], into)
    assert r.refused is None and r.sha256_checked is False
    layout = discover(into, known=KNOWN)
    [found] = layout.found
    assert found.provenance.state == "differs" and not found.provenance.checked
    assert any("ann/attention/attention.py: graded, but its HANDIN.toml says sha256 '000" in p for p in layout.problems)


def test_names_must_be_nfc_and_names_that_read_alike_are_refused_naming_both(tmp_path):
    into = tmp_path / "submissions"
    collect([honest(tmp_path, "josé")], into)
    nfd = unicodedata.normalize("NFD", "josé")
    (tmp_path / "nfd").mkdir()
    [r] = collect([honest(tmp_path / "nfd", nfd)], into)
    assert r.refused is not None and "composed form (NFC)" in r.refused
    (tmp_path / "cyr").mkdir()
    collect([honest(tmp_path, "ann")], into)
    [r] = collect([honest(tmp_path / "cyr", "\u0430nn")], into)  # a Cyrillic а
    assert r.refused is not None and "'ann'" in r.refused and "read alike" in r.refused
    (into / nfd).mkdir()  # a folder made by hand, as unzip would
    problems = discover(into, known=KNOWN).problems
    assert any("'josé' and 'josé' (jose\\u0301)" in p or "(jose\\u0301) and" in p for p in problems), problems
    assert any("composed form (NFC)" in p for p in problems)


def test_the_cli_says_what_it_did_and_exits_2_when_anything_was_refused(tmp_path):
    into = tmp_path / "submissions"
    ok = CliRunner().invoke(main, ["collect", str(honest(tmp_path, "ann")), "--into", str(into)])
    assert ok.exit_code == 0 and "-> ann/attention/ (sha256 matches its HANDIN.toml)" in ok.output
    bad = make_zip(tmp_path / "bob-attention.zip", {"bob/attention/attention.py": ANSWER})
    r = CliRunner().invoke(main, ["collect", str(bad), "--into", str(into)])
    assert r.exit_code == 2 and "refused" in r.output and "HANDIN.toml" in r.output
