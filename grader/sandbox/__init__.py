"""What runs INSIDE the sandbox: the candidate's territory, and the only grader code there.

Every module here is staged read-only beside the candidate's file (``grader.backends.staging``) and
imports only the standard library, torch, ``grader.wire.protocol`` and its neighbours here; the judge
never imports anything back. Once the candidate's module is imported all of it is theirs to patch,
so nothing here decides anything. ``worker``: the process that runs probes; ``probekit`` /
``instruments``: what probes share and measure with; ``removal`` / ``absent_ops`` / ``absent_imports``:
forbidden APIs removed; ``restricted``: the runtime subset's loader. From outside: ``grader.backends``.
This ``__init__`` stays empty on purpose: the worker's read-only copy ships an empty one too.
"""
