"""The sandbox's runtime image: its name (on every Docker grading's path) and how it is built.

- ``naming``: ``grader-runtime:<tag>`` from the Dockerfile and the pinned requirements, per flavour
  (CPU or CUDA): the only module of this package a grading imports;
- ``image``: ``grader sandbox build``: the base, the wheelhouse, then ``docker build``;
- ``base``: a Debian root made by debootstrap (``apt_sources``: from this machine's mirror), or the
  registry's python image; ``wheels``: every pinned package downloaded on the host;
- ``steps``: a build step run with the tail of its output named on failure.
"""
