"""Sweeps: a grid of runs, keyed by a hash of each run's full configuration, run on Dask and kept in
a results store.

- ``spec``: the grid (a TOML file or a dict) expanded into ``RunSpec`` s;
- ``runs``: what one run computes, by kind (``theory``, ``testbed``, ``ensemble``, ``montecarlo``, and
  the multimodal testbed's ``stage1``, ``stage2``, ``fusion``),
  with its provenance;
- ``store``: one JSON file per run plus an index, every write atomic, every record sealed with a
  checksum and checked when read back (a file that fails is set aside as ``*.corrupt`` and its run
  redone; ``Store(root, writable=False)`` reads without changing anything);
- ``runner``: ``run_sweep`` on a ``dask.distributed`` cluster (a LocalCluster by default).
"""
from .runner import run_sweep
from .spec import RunSpec, expand, load_spec
from .store import Store, StoreError, StoreWarning

__all__ = ["RunSpec", "Store", "StoreError", "StoreWarning", "expand", "load_spec", "run_sweep"]
