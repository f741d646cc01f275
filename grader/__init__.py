"""grader: grade PyTorch interview exercises.

Zones (docs/how-it-is-built.md):
- ``grader.judge``: trusted. Runs the hidden pytest + hypothesis checks and scores.
- ``grader.sandbox``: where candidate code runs (``worker``) and how we reach it
  (``docker_backend``, ``local_backend``).
- ``grader.wire.protocol``: the one module both sides import.
- ``grader.reports``: the JSON report model and its renderers.
- ``grader.cli``: a thin click layer over ``grader.host.grading``.
"""

__version__ = "0.1.0"
