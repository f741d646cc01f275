"""What crosses a process boundary: the one module family every side imports.

- ``protocol``: the framed protocol between the judge and the sandbox's worker (JSON plus
  safetensors, never pickle). The worker imports it and nothing else of the grader, so this
  package's ``__init__`` imports nothing and is staged empty (``grader.backends.staging``);
- ``spec``: a check as the judge collected it (in the judge's "collected" event);
- ``selfreport``: what a sandbox says about itself (the worker's hello) and the judge's summary of it;
- ``error_record``: the candidate's exception as the worker reports it.

Everything that arrives from another process is validated here, on reading, once.
"""
