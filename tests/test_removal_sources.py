"""Removal by identity (grader.sandbox.absent_imports.refuse_sources): a removed torch API's own source can never run
again as another module. Every route that would load it under a new name is tried in a child interpreter in which
the removal is installed (as a worker does), as code that got past the runtime subset would: each is refused."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

ROUTES = textwrap.dedent('''
    import importlib, importlib.machinery, importlib.util, inspect, io, json, linecache, os, runpy, shutil, sys
    from grader.sandbox import removal

    removal.install(["torch.utils.checkpoint", "torch.nn.functional.silu"],
                    {"torch.utils.checkpoint": ["*checkpoint*"]}, candidate_dirs=[])
    import torch

    path = os.path.join(os.path.dirname(torch.__file__), "utils", "checkpoint.py")
    silu = torch.nn.functional.__file__  # a file that defines a removed function
    tmp = sys.argv[1]

    def spec_route(p):
        spec = importlib.util.spec_from_file_location("again", p)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))

    def via_sys_path():
        sys.path.insert(0, os.path.dirname(path))
        try:
            importlib.import_module("checkpoint")
        finally:
            sys.path.pop(0)

    def via_link(kind):
        target = os.path.join(tmp, kind + ".py")
        (os.symlink if kind == "symlink" else os.link)(path, target)
        return open(target).read()

    routes = {
        "spec_from_file_location": lambda: spec_route(path),
        "SourceFileLoader": lambda: importlib.machinery.SourceFileLoader("again2", path).load_module(),
        "cached_pyc": lambda: importlib.machinery.SourcelessFileLoader(
            "again3", importlib.util.cache_from_source(path)).load_module(),
        "runpy.run_path": lambda: runpy.run_path(path),
        "sys.path": via_sys_path,
        "reload": lambda: importlib.reload(sys.modules["torch.utils.checkpoint"]),
        "open": lambda: open(path).read(),
        "io.open_code": lambda: io.open_code(path).read(),
        "os.open": lambda: os.read(os.open(path, os.O_RDONLY), 100),
        "copy": lambda: shutil.copy(path, os.path.join(tmp, "copy.py")),
        "symlink": lambda: via_link("symlink"),
        "hardlink": lambda: via_link("hardlink"),
        "proc_root": lambda: open("/proc/self/root" + path).read(),
        "loader.get_source": lambda: sys.modules["torch.utils.checkpoint"].__loader__.get_source("x"),
        "inspect.getsource": lambda: inspect.getsource(sys.modules["torch.utils.checkpoint"]),
        "a removed function's module": lambda: spec_route(silu),
    }
    loaded = {}
    for name, route in routes.items():
        try:
            route()
            loaded[name] = True
        except BaseException:
            loaded[name] = False
    # Python's own line cache copes: a warning or a traceback shows no source line, nothing breaks.
    loaded["linecache reads nothing"] = linecache.getline(path, 10) == ""
    print(json.dumps(loaded))
''')


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/root is Linux's")
def test_no_route_loads_a_removed_apis_source_again(tmp_path):
    out = subprocess.run([sys.executable, "-c", ROUTES, str(tmp_path)], capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded.pop("linecache reads nothing") is True
    assert len(loaded) == 16 and not any(loaded.values()), [k for k, v in loaded.items() if v]
