"""Sweeps: a grid of runs, keyed by a hash of each run's full configuration, run on Dask and kept in
a results store.

- ``spec``: the grid (a TOML file or a dict) expanded into ``RunSpec`` s;
- ``runs``: what one run computes, by kind (``theory``, ``testbed``, ``ensemble``, ``montecarlo``),
  with its provenance;
- ``store``: one JSON file per run plus an index, every write atomic;
- ``runner``: ``run_sweep`` on a ``dask.distributed`` cluster (a LocalCluster by default).
"""
from .runner import run_sweep
from .spec import RunSpec, expand, load_spec
from .store import Store

__all__ = ["RunSpec", "Store", "expand", "load_spec", "run_sweep"]
