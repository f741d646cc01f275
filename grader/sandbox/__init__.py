"""What runs INSIDE the sandbox: the candidate's territory, and the only grader code there.

Every module here is staged read-only beside the candidate's file (``grader.backends.staging``
copies this folder's modules to ``lib/grader/sandbox/``) and imports only the standard library,
torch, ``grader.wire.protocol`` and its neighbours here; the judge never imports anything back
from it. Once the candidate's module is imported, all of it is theirs to read and patch, so
nothing here decides anything: it runs, reports and sends plain data.

- ``worker``: the process itself: answers the judge's ``call`` frames by running probes;
- ``probekit``: what exercises' probes share (``from grader.sandbox import probekit``);
- ``instruments``: what probes measure with (through the kit), kept out of the candidate's reach;
- ``removal`` / ``absent_ops`` / ``absent_imports``: the exercise's forbidden APIs removed before the probes load;
- ``restricted``: the subset's runtime guard the candidate's module is loaded under.

How the judge opens and drives a sandbox from outside is ``grader.backends``.
This ``__init__`` stays empty on purpose: the worker's read-only copy ships an empty one too.
"""
