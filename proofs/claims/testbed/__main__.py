"""The maintainers' commands of the testbed claims::

    python -m mmicl.proofs.claims.testbed docs [--docs docs/testbed.md] [--results DIR]
    python -m mmicl.proofs.claims.testbed pilot --pilot NAME [--store DIR] [--out FILE]

``docs`` prints the designs' Markdown, or with ``--docs`` rewrites the design and results blocks of
that file from the committed verdict runs (``results.main``); ``pilot`` applies a pilot's rule to
its results store, or runs claim 7's encoder pilot, and prints the choice (``pilots.main``).
"""
from __future__ import annotations

import sys

from . import pilots, results

__all__ = ["main"]

COMMANDS = {"docs": results.main, "pilot": pilots.main}


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr if argv and argv[0] not in ("-h", "--help") else sys.stdout)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    COMMANDS[argv[0]](argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
