"""Probes for the early_stopping exercise. They run INSIDE the sandbox.

Each probe takes plain data (numbers, strings, CPU tensors), drives the
candidate's EarlyStopping and returns plain data. Probes never judge anything;
the hidden checks (judge side) compare what comes back with what a reference
model of the contract does.

The model the probes train is built here (``_model``): nn.Sequential(nn.Linear(3, 2),
nn.BatchNorm1d(2)), so that its state_dict holds parameters and buffers, an
int64 one included. "Training" is simulated by copying chosen values into its
state_dict tensors in place, as an optimizer step does.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
import tempfile

import torch
from torch import nn

import early_stopping
from grader.sandbox import probekit

ATTRIBUTES = ("best", "best_step", "counter", "should_stop")


def _value(value):
    """An attribute's value as plain data (a float subclass such as numpy.float64 as a float); else opaque."""
    if type(value) in (bool, int, float):
        return value
    if isinstance(value, float):  # e.g. numpy.float64, a float subclass
        return float(value)
    return probekit.opaque(value)


def _state(es) -> dict:
    """The attributes the contract names, those the object has (a missing one is left out)."""
    return {name: _value(getattr(es, name)) for name in ATTRIBUTES if hasattr(es, name)}


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))


def _load_in_place(model: nn.Module, values: dict) -> None:
    """Copy ``values`` into the model's own tensors, in place (like training does)."""
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            tensor.copy_(values[name])


def _weights(model: nn.Module) -> dict:
    return {name: t.detach().clone() for name, t in model.state_dict().items()}


# --------------------------------------------------------------------- metrics only


def es_init(*args, **kwargs):
    """EarlyStopping(*args, **kwargs); its attributes before any step."""
    return _state(early_stopping.EarlyStopping(*args, **kwargs))


def es_run(kwargs, metrics):
    """EarlyStopping(**kwargs), then step(m) for every m in metrics (no model).

    Returns {"initial": attributes, "steps": [{"returned": ..., attributes...}, ...]}.
    """
    es = early_stopping.EarlyStopping(**kwargs)
    trace = {"initial": _state(es), "steps": []}
    for metric in metrics:
        returned = es.step(metric)
        trace["steps"].append({"returned": _value(returned), **_state(es)})
    return trace


# ----------------------------------------------------------------------- snapshots


def es_weights(kwargs, steps, *, then=(), fresh=None):
    """Train a model through ``steps`` and restore the best weights, perhaps more than once.

    steps: [metric, values or None]: with values, they are copied into the model in
    place and step(metric, model) is called; with None, step(metric) without a model.
    then: a list of values; for each, they are copied into the target model in place
    (training after the last step), restore_best_weights(target) is called and the
    target's weights are recorded. The target is the trained model, or with
    ``fresh`` given, a new model of the same architecture holding ``fresh``.

    Returns {"returned": [...], "restored": [weights after each restore]}.
    """
    model = _model()
    es = early_stopping.EarlyStopping(**kwargs)
    returned = []
    for metric, values in steps:
        if values is None:
            returned.append(_value(es.step(metric)))
        else:
            _load_in_place(model, values)
            returned.append(_value(es.step(metric, model)))
    target = model
    if fresh is not None:
        target = _model()
        _load_in_place(target, fresh)
    restored = []
    for values in then:
        _load_in_place(target, values)
        es.restore_best_weights(target)
        restored.append(_weights(target))
    return {"returned": returned, "restored": restored}


def es_restore(kwargs, steps):
    """Like es_weights, then a single restore_best_weights(model).

    Construction and steps raise as usual; what restore_best_weights raises comes
    back as data ({"raised": {"type", "qualnames", "message"}}), so that the check
    can tell the contract's RuntimeError from, e.g., a NotImplementedError left in
    place (a subclass of RuntimeError). Otherwise returns {"restored": weights}.
    """
    model = _model()
    es = early_stopping.EarlyStopping(**kwargs)
    for metric, values in steps:
        if values is None:
            es.step(metric)
        else:
            _load_in_place(model, values)
            es.step(metric, model)
    try:
        es.restore_best_weights(model)
    except Exception as e:
        return {"raised": probekit.raised(e)}
    return {"restored": _weights(model)}


# --------------------------------------------------------------------------- files

_CAPTURE = re.compile(r"^grader-output-\d+\.txt$")  # the worker's own output capture
_BUDGET = 5000  # a place with more entries than this is not scanned (an author's repo)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_AUDIT_LOG: list | None = None  # set while candidate code runs under es_files
_AUDIT_INSTALLED = False


def _ignored(path: str) -> bool:
    name = os.path.basename(path)
    return bool(_CAPTURE.match(name)) or "__pycache__" in path or path.startswith("/dev/")


def _audit(event, args):
    """Records file writes made from Python while _AUDIT_LOG is set (an audit hook cannot be removed)."""
    log = _AUDIT_LOG
    if log is None:
        return
    try:
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int):
                return
            path = os.fsdecode(path)
            if isinstance(mode, str):
                writing = any(c in mode for c in "wax+")
            else:
                writing = isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
            if writing and not _ignored(path):
                log.append(f"opened {path} for writing")
        elif event in ("os.mkdir", "os.rename", "os.symlink", "os.link", "os.truncate"):
            path = args[0]
            if not isinstance(path, int) and not _ignored(os.fsdecode(path)):
                log.append(f"{event}({os.fsdecode(path)})")
    except Exception:
        pass


def _snapshot(root: str) -> dict | None:
    """{path: (kind, size, mtime_ns, inode)} for everything under root, or None when too large."""
    found = {}
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if len(found) >= _BUDGET:
                return None
            if _ignored(entry.path):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                found[entry.path] = ("folder", 0, 0, st.st_ino)
                pending.append(entry.path)
            else:
                found[entry.path] = ("file", st.st_size, st.st_mtime_ns, st.st_ino)
    return found


def _places(private: str) -> list[str]:
    """The writable places to watch: the private folder, the sandbox's cwd, $HOME, temp dirs,
    the submission's folder, and /tmp when it is the sandbox's own (cwd or $HOME is /tmp).

    A /tmp shared with the rest of the machine (the local sandbox, an author's run) is
    not scanned, since other programs write there; the audit hook and the torch.save
    watch cover it.
    """
    cwd = os.getcwd()
    home = os.environ.get("HOME")
    candidates = [private, cwd, home, os.environ.get("TMPDIR"), tempfile.gettempdir(),
                  os.path.dirname(os.path.abspath(early_stopping.__file__))]
    tmp = os.path.realpath("/tmp")
    tmp_is_private = tmp in {os.path.realpath(p) for p in (cwd, home) if p}
    if tmp_is_private:
        candidates.append(tmp)
    places = []
    for place in candidates:
        if not place or not os.path.isdir(place) or not os.access(place, os.W_OK):
            continue
        real = os.path.realpath(place)
        if real == tmp and not tmp_is_private:
            continue
        if real not in places:
            places.append(real)
    return places


def _changes(before: dict, after: dict) -> tuple[list, list]:
    new, changed = [], []
    for path, info in after.items():
        old = before.get(path)
        if old is None:
            new.append(path)
        elif info[0] == "file" and old != info:
            changed.append(path)
    return new, changed


def _drive() -> None:
    """Ordinary use: improvements with a model, plateaus, a stop, steps without a model, a restore."""
    model = _model()
    es = early_stopping.EarlyStopping(patience=2, min_delta=0.0, mode="min")
    for i, metric in enumerate([1.0, 0.5, 0.75, 0.25, 0.5, 0.5, 0.5]):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.125 * (i + 1))
        es.step(metric, model)
    es.step(0.125)
    es.restore_best_weights(model)
    other = early_stopping.EarlyStopping(patience=1, mode="max")
    other.step(0.5, model)
    other.step(0.25, model)
    other.restore_best_weights(model)


def _watched_writer(original: type, saved: list) -> type:
    """A subclass of torch.serialization's writer for paths that records each path it opens."""

    class Watched(original):
        def __init__(self, name, *args, **kwargs):
            saved.append(f"torch.save to {os.fsdecode(name)}")
            super().__init__(name, *args, **kwargs)

    return Watched


def es_files():
    """Drive EarlyStopping through ordinary use and report every file it wrote.

    While candidate code runs, the working directory, $HOME, $TMPDIR and
    tempfile's directory point at a fresh private folder. Three nets:
    - the watched places (``_places``) are listed before and after: new paths and
      changed files are reported (``new``, ``changed``);
    - an audit hook records files opened for writing from Python (``opened``);
    - torch.save, and the file writer it opens for a path, are wrapped to record
      saves to a path or a real file (``saved``); saving into an in-memory buffer
      such as io.BytesIO is fine.
    """
    global _AUDIT_LOG, _AUDIT_INSTALLED
    if not _AUDIT_INSTALLED:
        sys.addaudithook(_audit)
        _AUDIT_INSTALLED = True
    private = tempfile.mkdtemp(prefix="es-probe-")
    places = _places(private)
    before = {p: _snapshot(p) for p in places}

    saved: list[str] = []
    original_save = torch.save

    def watched_save(obj, f, *args, **kwargs):
        if isinstance(f, (str, bytes, os.PathLike)):
            saved.append(f"torch.save to {os.fsdecode(f)}")
        elif not isinstance(f, io.BytesIO):
            try:
                f.fileno()
                saved.append(f"torch.save to a file object ({getattr(f, 'name', '?')})")
            except Exception:
                pass
        return original_save(obj, f, *args, **kwargs)

    # torch.save(path) writes from C++, out of the audit hook's sight, and a module may
    # hold its own reference to torch.save: watch the writer torch.save opens for a path.
    original_writer = getattr(torch.serialization, "_open_zipfile_writer_file", None)
    watched_writer = _watched_writer(original_writer, saved) if isinstance(original_writer, type) else None

    redirected = ("HOME", "TMPDIR", "TEMP", "TMP")
    old_cwd, old_tempdir = os.getcwd(), tempfile.tempdir
    old_env = {key: os.environ.get(key) for key in redirected}
    opened: list[str] = []
    failure = None
    try:
        os.chdir(private)
        for key in redirected:
            os.environ[key] = private
        tempfile.tempdir = private
        torch.save = torch.serialization.save = watched_save
        if watched_writer is not None:
            torch.serialization._open_zipfile_writer_file = watched_writer
        _AUDIT_LOG = opened
        try:
            _drive()
        except Exception as e:  # the candidate's; what it wrote before raising is still reported below
            failure = e
    finally:
        _AUDIT_LOG = None
        torch.save = torch.serialization.save = original_save
        if watched_writer is not None:
            torch.serialization._open_zipfile_writer_file = original_writer
        tempfile.tempdir = old_tempdir
        for key, value in old_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        os.chdir(old_cwd)
        after = {p: _snapshot(p) for p in places}
        new, changed = [], []
        for place in places:
            if before[place] is not None and after[place] is not None:
                n, c = _changes(before[place], after[place])
                new += n
                changed += c
        shutil.rmtree(private, ignore_errors=True)
    if failure is not None and not (new or changed or opened or saved):
        raise failure  # nothing written to show: the candidate's exception is the answer
    return {
        "watched": places,
        "new": sorted(set(new)),
        "changed": sorted(set(changed)),
        "opened": list(dict.fromkeys(opened))[:20],
        "saved": list(dict.fromkeys(saved))[:20],
    }
