"""Probes for the export_for_serving exercise. They run INSIDE the sandbox.

``serve`` builds one of shared.py's models, calls the candidate's ``export_model`` with
a path in a fresh private folder and lists what the folder holds afterwards. Then it
loads the file in a **fresh process with a fresh scope**: a forked child in which the
model's class is gone (it lives in ``_served_models``, a module that exists only in the
exporting process and is dropped from ``sys.modules`` in the child) and the candidate's
module is imported anew (nothing it kept in memory is there). A file that needs the
class cannot be loaded there. The child runs ``torch.export.load(path).module()`` (the
file read as a torch.export archive, without the candidate's code; on the inputs where a
scenario asks) and the candidate's ``load_for_serving(path)`` on every input, and reads
the batch dimension's declared range. Everything comes back as plain data; never a verdict.

The child is forked rather than spawned: a spawned interpreter would import torch again
(seconds). It sets one intra-op thread first, as forked DataLoader workers do.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import sys
import tempfile
import time
import types

import torch

import serving
import shared
from grader.sandbox import probekit

#: The module the served model's class lives in: only in the process that exports.
CLASS_MODULE = "_served_models"
#: Wall clock for the loading process, from its start to its result.
CHILD_BUDGET_S = 40.0


def _context():
    """Forked children: torch is already imported there; the scope is made fresh in ``_load_main``."""
    import multiprocessing

    return multiprocessing.get_context("fork")


def _served(kind: str, seed: int) -> torch.nn.Module:
    """shared's model ``kind``, its class a subclass that lives in ``_served_models`` only here."""
    module = sys.modules.get(CLASS_MODULE)
    if module is None:
        module = types.ModuleType(CLASS_MODULE)
        sys.modules[CLASS_MODULE] = module
    base = shared.CLASSES[kind]
    cls = getattr(module, base.__name__, None)
    if cls is None:
        cls = type(base.__name__, (base,), {"__module__": CLASS_MODULE, "__qualname__": base.__name__})
        setattr(module, base.__name__, cls)
    return shared.build(kind, seed, cls=cls)


def _outputs(fn, xs) -> list:
    """fn(x) for each x: a tensor, probekit.raised(...) when it raised, else what it was (type name, repr)."""
    out = []
    for x in xs:
        try:
            y = fn(x.clone())
        except Exception as exc:
            out.append({"raised": probekit.raised(exc)})
            continue
        if type(y) is torch.Tensor:
            out.append(y.detach().clone())
        else:
            o = probekit.opaque(y)
            out.append({"opaque": [o.type_name, o.repr]})
    return out


def _batch_range(program) -> list:
    """[lower, upper] that the program declares for input 0's dim 0; upper -1 for unbounded; [] if not a symbol."""
    placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
    users = set(program.graph_signature.user_inputs)
    vals = [n.meta.get("val") for n in placeholders if n.name in users]
    if not vals or not hasattr(vals[0], "shape") or len(vals[0].shape) == 0:
        return []
    size = vals[0].shape[0]
    if isinstance(size, int):
        return [size, size]
    expr = size.node.expr
    bounds = program.range_constraints.get(expr)
    if bounds is None:
        return []
    try:
        upper = int(bounds.upper)
    except Exception:  # sympy's (int_)oo: no upper bound
        upper = -1
    return [int(bounds.lower), upper]


def _load_main(workdir: str) -> None:
    """In the fresh process: read the archive, then the candidate's load, on every input; write the result."""
    result: dict = {}
    try:
        torch.set_num_threads(1)
        sys.modules.pop(CLASS_MODULE, None)
        job = torch.load(os.path.join(workdir, "job.pt"), weights_only=True)
        path, xs, archive = job["path"], job["inputs"], job["archive"]
        result["class_importable"] = CLASS_MODULE in sys.modules
        try:
            program = torch.export.load(path)
            result["batch_range"] = _batch_range(program)
            if archive:
                result["archive"] = _outputs(program.module(), xs)
        except Exception as exc:
            result["archive_raised"] = probekit.raised(exc)
        # A fresh scope: the model's class gone, the candidate's module imported anew (nothing it kept in memory).
        sys.modules.pop(CLASS_MODULE, None)
        sys.modules.pop("serving", None)
        fresh = importlib.import_module("serving")
        try:
            loaded = fresh.load_for_serving(path)
        except Exception as exc:
            result["load_raised"] = probekit.raised(exc)
        else:
            if callable(loaded):
                result["served"] = _outputs(loaded, xs)
            else:
                o = probekit.opaque(loaded)
                result["load_returned"] = [o.type_name, o.repr]
    except BaseException as exc:
        result = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
    out = os.path.join(workdir, "result.pt")
    torch.save(result, out + ".tmp")
    os.replace(out + ".tmp", out)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no interpreter teardown: candidate atexit hooks get no say


def _load_fresh(path: str, xs: list, archive: bool) -> dict:
    workdir = tempfile.mkdtemp(prefix="serving-load-")
    try:
        torch.save({"path": path, "inputs": xs, "archive": archive}, os.path.join(workdir, "job.pt"))
        p = _context().Process(target=_load_main, args=(workdir,), name="serving-load", daemon=True)
        started = time.monotonic()
        p.start()
        p.join(CHILD_BUDGET_S)
        if p.exitcode is None:
            p.kill()
            p.join(5)
            return {"error": f"loading and serving in a fresh process took more than {CHILD_BUDGET_S:g} s"}
        result_path = os.path.join(workdir, "result.pt")
        if not os.path.exists(result_path):
            return {"error": f"the fresh process ended without a result (exit code {p.exitcode})"}
        result = torch.load(result_path, weights_only=True)
        result["seconds"] = round(time.monotonic() - started, 3)
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _plain(outputs):
    """The fresh process's outputs as the protocol carries them: an Opaque where a non-tensor came back."""
    if not isinstance(outputs, list):
        return outputs
    return [o if type(o) is torch.Tensor or "raised" in o else probekit.Opaque(*o["opaque"])
            for o in outputs]


_REPORTS: dict = {}


def serve(kind: str, seed: int, example: torch.Tensor, inputs: list, name: str = "model.pt2",
          archive: bool = True) -> dict:
    """``_serve``, once per scenario: several checks read one export's report."""
    key = (kind, seed, name, archive, _digest(example), tuple(_digest(x) for x in inputs))
    if key not in _REPORTS:
        _REPORTS[key] = _serve(kind, seed, example, inputs, name, archive)
    return _REPORTS[key]


def _digest(t: torch.Tensor) -> tuple:
    return tuple(t.shape), hashlib.sha256(t.contiguous().numpy().tobytes()).hexdigest()


def _serve(kind: str, seed: int, example: torch.Tensor, inputs: list, name: str, archive: bool) -> dict:
    """export_model(model, example, path), then a fresh process loads ``path`` and runs every input.

    ``archive``: also run torch.export.load(path).module() on every input (its declared range is read always).

    Returns {"files": {name: bytes} in the folder after export_model, "path": the name given,
    "export_returned", "export_seconds", "archive": outputs of
    torch.export.load(path).module() or "archive_raised", "batch_range": [lower, upper],
    "served": outputs of load_for_serving(path) or "load_raised" / "load_returned",
    "class_importable": whether the model's class existed in the fresh process}.
    An output is a tensor, {"raised": record} or an Opaque.
    """
    model = _served(kind, seed)
    folder = tempfile.mkdtemp(prefix="serving-")
    try:
        path = os.path.join(folder, name)
        t0 = time.monotonic()
        returned = serving.export_model(model, example.clone(), path)
        export_s = round(time.monotonic() - t0, 3)
        files = {f: os.path.getsize(os.path.join(folder, f)) for f in sorted(os.listdir(folder))}
        del model
        report = {"files": files, "path": name, "export_returned": probekit.opaque(returned)
                  if returned is not None else None, "export_seconds": export_s}
        if os.path.isfile(path):
            loaded = _load_fresh(path, inputs, archive)
            for key in ("archive", "served"):
                if key in loaded:
                    loaded[key] = _plain(loaded[key])
            if "load_returned" in loaded:
                loaded["load_returned"] = probekit.Opaque(*loaded["load_returned"])
            report.update(loaded)
        return report
    finally:
        shutil.rmtree(folder, ignore_errors=True)
