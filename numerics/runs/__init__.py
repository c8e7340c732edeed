"""The content-addressed store of runs: a grid of runs, keyed by a hash of each run's full
configuration, run here or on Dask and kept in a results store.

- ``key``: ``RunSpec`` (a kind and its configuration) and ``run_key``, the ground everything else keys by;
- ``kinds``: the table of run kinds (``KINDS``: ``theory``, ``testbed``, ``ensemble``, ``montecarlo``,
  and the multimodal testbed's ``stage1``, ``stage2``, ``fusion``), one module each;
- ``record``: ``execute``, one run and the record it leaves, with its provenance;
- ``spec``: a sweep's grid (a TOML file or a dict) expanded into ``RunSpec`` s;
- ``store``: one JSON file per run plus an index, every write atomic, every record sealed with a
  checksum and checked when read back (a file that fails is set aside as ``*.corrupt`` and its run
  redone; ``Store(root, writable=False)`` reads without changing anything);
- ``artifacts``: the stage-1 checkpoints a store keeps beside its records;
- ``runner``: ``run_sweep`` on a ``dask.distributed`` cluster (a LocalCluster by default), ``run_here``
  in this process, and reading finished runs back (``finished_records``, ``stored_stage1``,
  ``stored_arm_results``).
"""
from .key import FORMAT, RunSpec, run_key
from .kinds import KINDS, Kind
from .runner import finished_records, run_here, run_pending, run_sweep, stored_arm_results, stored_stage1
from .spec import SweepSpecError, expand, load_spec
from .store import Store, StoreError, StoreWarning

__all__ = ["FORMAT", "RunSpec", "run_key", "KINDS", "Kind", "finished_records", "run_here", "run_pending",
           "run_sweep", "stored_arm_results", "stored_stage1", "SweepSpecError", "expand", "load_spec", "Store",
           "StoreError", "StoreWarning"]
