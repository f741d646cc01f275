"""One folder per grading that a panel can archive and hand to a reviewer.

It holds the submission's exact bytes, the panel's JSON report, every check's captured output and the
environment record, with a ``SHA256SUMS`` (``sha256sum -c`` needs nothing from us). Sums alone prove
nothing against an edit that regenerates them, so ``verify_bundle`` also checks that the parts agree
with each other and with the report's own checks (``grader.reports.derived``), and above all the
``SIGNATURE``, an HMAC made with the panel's key (``grader.evidence.signing``). A bundle is built
beside ``dest`` and renamed into place, never overwriting one. A bundle to verify is someone else's:
only its regular files are read; a symlink, FIFO or device is a named problem, never followed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.errors import UsageError
from grader.evidence.signing import ALGORITHM, Key, Seal, load_key, seal_of, signing_key_for
from grader.reports.derived import edits
from grader.reports.model import Report

SUMS = "SHA256SUMS"
SIGNATURE = "SIGNATURE"
_SIGNATURE_HEAD = "grader-bundle-signature v1"


def write_bundle(report: Report, submission: Path, dest: Path) -> Path:
    """Write the bundle for ``report`` (graded from ``submission``) at ``dest``; return ``dest``."""
    dest = check_bundle_dest(dest)
    if report.audience != "panel":
        raise UsageError("A bundle holds the full report; this one is a candidate's redacted copy.")
    name = report.environment.submission_name or Path(submission).name
    if Path(name).name != name or name in ("", ".", "..") or "\n" in name or "\\" in name:
        raise UsageError(f"Cannot bundle a submission named {name!r}.")
    from grader.host.grading import read_submission  # imported already by whoever graded the report

    data = read_submission(Path(submission))
    recorded, actual = report.environment.submission_sha256, hashlib.sha256(data).hexdigest()
    if recorded and actual != recorded:
        raise UsageError(f"Submission {str(submission)!r} changed since it was graded: its sha256 is "
                         f"{actual}, the report recorded {recorded}.")
    key = signing_key_for(dest, "bundle")
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        (work / "submission").mkdir()
        (work / "submission" / name).write_bytes(data)
        (work / "report.json").write_text(report.to_json() + "\n", encoding="utf-8")
        (work / "output.txt").write_text(captured_output(report), encoding="utf-8")
        (work / "environment.json").write_text(report.environment.model_dump_json(indent=2) + "\n", encoding="utf-8")
        (work / SUMS).write_text("".join(f"{digest}  {rel}\n" for rel, digest in _digests(work).items()),
                                 encoding="utf-8")
        (work / SIGNATURE).write_text(signature_text(key, _scan(work)[0]), encoding="utf-8")
        os.rename(work, dest)  # replaces an empty folder; refuses a non-empty one made meanwhile
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return dest


def check_bundle_dest(dest: Path) -> Path:
    """``dest`` if a bundle may be written there (absent, or an empty folder); a ``UsageError`` otherwise.

    `grader submit --bundle` calls this before grading, as it checks report paths; the signing key is
    made (on first use) or checked here too.
    """
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"Bundle folder {str(dest)!r} already exists and is not empty; a bundle is never "
                         "overwritten.", hint="Choose a new folder.")
    signing_key_for(dest, "bundle")  # a key that cannot sign (inside the bundle, readable by others) fails now
    return dest


def captured_output(report: Report) -> str:
    """Every check's captured candidate output, each under a header naming the check."""
    parts = []
    for c in report.checks:
        body = c.output if c.output else "(no output)\n"
        parts.append(f"===== {c.id} ({c.name}) [{c.status.value}] =====\n{body}"
                     + ("" if body.endswith("\n") else "\n"))
    return "\n".join(parts) if parts else "(no checks ran)\n"


@dataclass(frozen=True)
class BundleVerdict:
    """What ``grader bundle verify`` says: the edits found (each naming a file), and the signature's seal."""

    problems: list[str]
    seal: Seal
    signed_by: str | None  # the key id the SIGNATURE names
    key: Key | None  # this machine's key, if it has one

    @property
    def intact(self) -> bool:
        """Signed with this machine's key and nothing changed: the only state a panel can stand behind."""
        return not self.problems and self.seal is Seal.SIGNED


def inspect_bundle(dest: Path) -> BundleVerdict:
    """Check the bundle at ``dest``: its sums, its parts' agreement with ``report.json`` (and the report's with
    its own checks), and its signature under this machine's key (never made here: checking needs none)."""
    dest = Path(dest)
    if not dest.is_dir():
        raise UsageError(f"No bundle at {str(dest)!r}: not a folder.")
    key = load_key(create=False)
    signed_by, seal, signature_problems = _signature_problems(dest, key)
    problems = _sums_problems(dest) + _agreement_problems(dest) + signature_problems
    return BundleVerdict(list(dict.fromkeys(problems)), seal, signed_by, key)  # one line per problem


def verify_bundle(dest: Path) -> list[str]:
    """Problems found in the bundle at ``dest``, one line each naming the file: files changed, missing or
    not listed in the sums or the signature, and parts that disagree with ``report.json``. Empty means
    nothing was found edited; whether it is signed is :func:`inspect_bundle`'s ``seal``."""
    return inspect_bundle(dest).problems


def signature_text(key: Key, files: dict[str, str]) -> str:
    """``SIGNATURE``: a header naming the key and binding the list of files, then one HMAC per file.

    ``files`` maps each relative path (every regular file but the signature) to its sha256.
    """
    head = f"{_SIGNATURE_HEAD} {ALGORITHM} key={key.id} files={key.mac('grader bundle files v1', *sorted(files))}\n"
    return head + "".join(f"{key.mac('grader bundle file v1', rel, digest)}  {rel}\n"
                          for rel, digest in sorted(files.items()))


def _signature_problems(dest: Path, key: Key | None) -> tuple[str | None, Seal, list[str]]:
    """(the key id the signature names, its seal, what it finds edited: each line names the file)."""
    try:
        lines = _read_regular(dest / SIGNATURE).decode("utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return None, Seal.UNSIGNED, []
    except OSError as e:
        return None, Seal.EDITED, [f"{SIGNATURE}: cannot be read ({e.strerror or type(e).__name__})"]
    head = dict(part.partition("=")[::2] for part in (lines[0].split(" ")[3:] if lines else []))
    if not lines or not lines[0].startswith(f"{_SIGNATURE_HEAD} {ALGORITHM} ") or not head.get("key"):
        return None, Seal.EDITED, [f"{SIGNATURE}: malformed (not a grader bundle signature)"]
    listed, problems = {}, []
    for n, line in enumerate(lines[1:], 2):
        mac, sep, rel = line.partition("  ")
        if not sep or len(mac) != 64 or not rel:
            problems.append(f"{SIGNATURE} line {n}: malformed")
        else:
            listed[rel] = mac
    present = {rel: d for rel, d in _scan(dest)[0].items() if rel != SIGNATURE}

    def check(k: Key) -> bool:
        if not k.verifies(head.get("files", ""), "grader bundle files v1", *sorted(listed)):
            problems.append(f"{SIGNATURE}: its list of files was edited (it does not match the signature)")
        for rel, mac in listed.items():
            if rel not in present:
                problems.append(f"{rel}: missing (the signature lists it)")
            elif not k.verifies(mac, "grader bundle file v1", rel, present[rel]):
                problems.append(f"{rel}: edited after the bundle was signed (it does not match the signature)")
        problems.extend(f"{rel}: added after the bundle was signed (not in the signature)"
                        for rel in present if rel not in listed)
        return not problems

    seal = seal_of(key, head["key"], check)
    return head["key"], seal, problems if seal in (Seal.SIGNED, Seal.EDITED) else []


def _sums_problems(dest: Path) -> list[str]:
    try:
        text = _read_regular(dest / SUMS).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return [f"{SUMS}: missing"]
    except OSError as e:
        return [f"{SUMS}: cannot be read ({e.strerror or type(e).__name__})"]
    listed, problems = {}, []
    for n, line in enumerate(text.splitlines(), 1):
        digest, sep, rel = line.partition("  ")
        if not sep or len(digest) != 64 or not rel:
            problems.append(f"{SUMS} line {n}: malformed")
        else:
            listed[rel] = digest
    present, others = _scan(dest)
    present = {rel: d for rel, d in present.items() if rel not in (SUMS, SIGNATURE)}
    problems += [f"{rel}: {kind}, not read" for rel, kind in others.items()]
    for rel, digest in listed.items():
        if rel in others:
            continue
        if rel not in present:
            problems.append(f"{rel}: missing")
        elif present[rel] != digest:
            problems.append(f"{rel}: changed (sha256 differs from {SUMS})")
    problems += [f"{rel}: extra (not listed in {SUMS})" for rel in present if rel not in listed]
    return problems


def _agreement_problems(dest: Path) -> list[str]:
    """Whether the parts agree with ``report.json``: what an edit followed by new sums cannot hide."""
    subs = sorted(rel for rel in _scan(dest)[0] if rel.startswith("submission/"))
    problems = [] if len(subs) == 1 else [f"submission/: holds {len(subs)} files, a bundle holds exactly one"]
    try:  # parsed as data first, so its agreement with its own checks is one problem among the others
        report = Report.model_validate_json(_read_regular(dest / "report.json").decode("utf-8"))
    except FileNotFoundError:
        return problems + ["report.json: missing"]
    except (OSError, ValueError) as e:  # pydantic's ValidationError and UnicodeDecodeError are ValueErrors
        return problems + [f"report.json: not a grading report ({type(e).__name__})"]
    problems += [f"report.json: edited: {edit}" for edit in edits(report)]
    env = report.environment
    for rel in subs if len(subs) == 1 else []:
        sub = dest / rel
        try:
            digest = hashlib.sha256(_read_regular(sub)).hexdigest()
        except OSError as e:
            problems.append(f"{rel}: cannot be read ({e.strerror or type(e).__name__})")
            continue
        if digest != env.submission_sha256:
            problems.append(f"{rel}: sha256 {digest} is not the one report.json records "
                            f"({env.submission_sha256 or 'none'})")
        if env.submission_name and sub.name != env.submission_name:
            problems.append(f"{rel}: report.json names the submission {env.submission_name!r}")
    problems += _differs(dest / "environment.json", json.loads,
                         env.model_dump(mode="json"), "report.json's environment")
    problems += _differs(dest / "output.txt", str, captured_output(report),
                         "the checks' output in report.json")
    return problems


def _differs(path: Path, parse, expected, what: str) -> list[str]:
    """One line when ``path`` is missing, unreadable, or parses to something other than ``expected``.

    Bytes are decoded as they are (no newline translation): a candidate's ``\\r`` is output too.
    """
    try:
        found = parse(_read_regular(path).decode("utf-8"))
    except FileNotFoundError:
        return [f"{path.name}: missing"]
    except (OSError, ValueError) as e:
        return [f"{path.name}: cannot be read ({type(e).__name__})"]
    if found == expected:
        return []
    if isinstance(found, dict):  # name the fields that differ
        keys = sorted(k for k in found.keys() | expected.keys() if found.get(k) != expected.get(k))
        what += f" ({', '.join(map(str, keys))})"
    return [f"{path.name}: differs from {what}"]


def _digests(root: Path) -> dict[str, str]:
    """sha256 of every regular file under ``root`` but the sums and signature files, by relative path, sorted."""
    return {rel: d for rel, d in _scan(root)[0].items() if rel not in (SUMS, SIGNATURE)}


def _scan(root: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Walk ``root`` without following links: (sha256 of each regular file, what each other entry is).

    Both by relative path, sorted.
    """
    files, others = {}, {}
    for folder, dirs, names in os.walk(root):  # os.walk lists a link to a folder but never enters it
        for name in dirs + names:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                others[rel] = "a symlink" if stat.S_ISLNK(mode) else "not a regular file"
            else:
                try:
                    files[rel] = hashlib.sha256(_read_regular(path)).hexdigest()
                except OSError as e:
                    others[rel] = f"unreadable ({e.strerror or type(e).__name__})"
    return dict(sorted(files.items())), dict(sorted(others.items()))


def _read_regular(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file; OSError for a link, FIFO, device or folder.

    Opened without following a final symlink and without blocking (a FIFO swapped in after a
    check must not hang), then checked on the open file itself.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(0, "not a regular file", str(path))
        return f.read()
