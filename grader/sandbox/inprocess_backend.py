"""Run probes in the judge's own process. For exercise authors and the benchmark only.

This is "plain pytest against the file": no isolation, no tripwire, no deadline.
A grading never uses it; ``pytest checks/ -p grader.judge.plugin
--grader-sandbox inprocess`` does, so authors can iterate on checks quickly.
Arguments and results still make a round trip through the protocol, so probes
get copies (candidate code cannot change the judge's tensors) and checks see
exactly the types they would see from a real sandbox.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch

from grader import protocol
from grader.sandbox.client import CallResult


class InProcessSandbox:
    def __init__(self, probes: Path, submission: Path, module_name: str):
        self.probes_path = Path(probes).resolve()  # calls run in a scratch folder
        self.submission = Path(submission).resolve()
        self.module_name = module_name
        self.hello = {"type": "hello", "torch": torch.__version__, "cuda": torch.cuda.is_available(),
                      "cuda_version": torch.version.cuda,
                      "gpus": torch.cuda.device_count() if torch.cuda.is_available() else 0,
                      "python": sys.version.split()[0]}
        self.starts = 1
        self._probes = None
        self._scratch = tempfile.TemporaryDirectory(prefix="grader-inprocess-")

    def start_in_background(self) -> None:
        pass

    def ensure_started(self) -> None:
        pass

    def close(self) -> None:
        self._scratch.cleanup()

    def _load(self):
        if self._probes is None:
            spec = importlib.util.spec_from_file_location(self.module_name, self.submission)
            candidate = importlib.util.module_from_spec(spec)
            sys.modules[self.module_name] = candidate
            spec.loader.exec_module(candidate)
            spec = importlib.util.spec_from_file_location("probes", self.probes_path)
            probes = importlib.util.module_from_spec(spec)
            sys.modules["probes"] = probes
            spec.loader.exec_module(probes)
            self._probes = probes
        return self._probes

    def call(self, probe: str, args=(), kwargs=None, *, timeout_s=None, already_bytes=0) -> CallResult:
        started = time.perf_counter()
        here = os.getcwd()
        os.chdir(self._scratch.name)  # files a submission writes land here, not in the repo
        try:
            sent = _roundtrip({"type": "call", "args": list(args), "kwargs": kwargs or {}}, strict=True)
            value = getattr(self._load(), probe)(*sent["args"], **sent["kwargs"])
            value = _roundtrip({"type": "result", "value": value}, strict=False)["value"]
            return CallResult(probe, value=value, duration_s=time.perf_counter() - started)
        except Exception as exc:
            error = {"type": type(exc).__name__, "qualnames": [c.__name__ for c in type(exc).__mro__],
                     "builtin": type(exc).__module__ == "builtins", "message": str(exc),
                     "traceback": "".join(traceback.format_exception(exc))}
            return CallResult(probe, error=error, duration_s=time.perf_counter() - started)
        finally:
            os.chdir(here)


def _roundtrip(message: dict, *, strict: bool) -> dict:
    return protocol.decode(protocol.encode(message, strict=strict)[protocol.FRAME_HEADER_BYTES:])
