"""grader: grade PyTorch interview exercises.

Zones (docs/how-it-is-built.md):
- ``grader.host``: the grader's own process: ``grade()``, the judge child it runs, the credit decision.
- ``grader.judge``: trusted. Runs the hidden pytest + hypothesis checks and scores.
- ``grader.sandbox``: what runs inside the sandbox, where candidate code runs (``worker``).
- ``grader.backends``: how the judge reaches a sandbox from outside (``docker_backend``, ``local_backend``).
- ``grader.wire``: what crosses a process boundary (``protocol``: the framed judge-worker protocol).
- ``grader.reports``: the JSON report model and its renderers; ``grader.cli``: a thin click layer.
"""

__version__ = "0.1.0"
