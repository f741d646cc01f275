"""How the judge reaches a sandbox from outside: open one, call it, charge it, close it.

The other side of ``grader.sandbox`` (what runs inside); runs in the judge child and the host, never in
the sandbox. ``client``: the judge's ``Sandbox`` (``booting``: spares); ``deadlines`` / ``accounting``:
a call's deadline on the sandbox's own CPU clocks; ``docker_backend`` / ``local_backend``
(``memory_watch``): how a worker is started; ``engine``: the Docker connection; ``oci_runtime``: runc
or runsc; ``factory``: one grading's sandbox; ``staging``: the only files a sandbox sees; ``choice``:
``--sandbox auto``; ``gpu`` / ``gpu_probe``: the GPU policy and what this machine can do.
"""
