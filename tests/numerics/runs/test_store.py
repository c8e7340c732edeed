"""Run keys and the store's table (``numerics.runs``): a key does not depend on the order of its settings, and
the table flattens nested results into dotted keys."""
from __future__ import annotations


def test_a_run_key_does_not_depend_on_the_order_of_its_settings():
    """Two RunSpecs whose configurations differ only in order have one key (mutant sweep_key_order:
    the key's JSON without sort_keys)."""
    from mmicl.numerics.runs.spec import RunSpec

    a = RunSpec("theory", {"law": "s=uniform(0.5,4)", "T": 3, "alpha0": 0.1})
    b = RunSpec("theory", {"alpha0": 0.1, "T": 3, "law": "s=uniform(0.5,4)"})
    assert a.key == b.key and a.key != RunSpec("theory", {"law": "s=uniform(0.5,4)", "T": 4, "alpha0": 0.1}).key


def test_the_store_table_flattens_nested_results_with_dotted_keys(tmp_path):
    """``Store.table`` joins nested keys with dots and leaves out the bulky entries (mutant
    store_flat_nested)."""
    from mmicl.numerics.runs.key import FORMAT
    from mmicl.numerics.runs.spec import run_key
    from mmicl.numerics.runs.store import Store

    config = {"law": "x", "opt": {"lr": 0.1}}
    key = run_key("theory", config)
    store = Store(tmp_path)
    store.write({"format": FORMAT, "key": key, "kind": "theory", "status": "done", "config": config,
                 "result": {"a": {"b": 1.5, "c": {"d": 2}}, "history": [1, 2]}, "provenance": {"seconds": 0.5}})
    row, = store.table()
    assert row["config.opt.lr"] == 0.1 and row["result.a.b"] == 1.5 and row["result.a.c.d"] == 2
    assert "result.a" not in row and not any(k.startswith("result.history") for k in row)
    assert row["seconds"] == 0.5 and Store(tmp_path).status(key) == "done"
