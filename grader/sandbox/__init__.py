"""The sandbox zone: where candidate code runs, and the transports that reach it.

- ``worker``: the process inside the sandbox. It imports only the standard
  library, torch and ``grader.wire.protocol``, and is mounted read-only into a bare
  runtime image, so nothing else of the grader may be imported from it.
- ``probekit``: what exercises' probes share, staged beside the worker under the same
  rule (the standard library, torch and the sandbox-side modules only); the judge
  never imports it back.
- ``client``: the judge-side ``Sandbox`` object a check talks to.
- ``docker_backend`` / ``local_backend``: how a worker is started, always in a
  process of its own (the judge never runs candidate code in its own process).

This ``__init__`` stays empty on purpose: the worker's read-only copy ships an
empty one too.
"""
