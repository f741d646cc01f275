"""How the judge reaches a sandbox from outside: open one, call it, charge it, close it.

The other side of ``grader.sandbox`` (what runs inside): these modules run in the judge
child (the pytest plugin opens a sandbox per grading) and in the host (choosing a sandbox,
planning GPUs, reaping containers), never in the sandbox.

- ``client``: the judge's ``Sandbox``: calls as values, a restart after a crash (``booting``: spares);
- ``deadlines`` / ``accounting``: a call's deadline, charged to the sandbox's own CPU clocks;
- ``docker_backend`` / ``local_backend`` (``memory_watch``): how a worker is started, always in a
  process of its own; ``engine``: the Docker connection; ``oci_runtime``: runc or runsc;
- ``factory``: one grading's sandbox from its grant; ``staging``: the only files a sandbox sees;
- ``choice``: ``--sandbox auto``; ``gpu`` / ``gpu_probe``: the GPU policy and what this machine can do.
"""
