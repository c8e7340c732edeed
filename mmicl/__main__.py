"""``python -m mmicl …`` is the ``mmicl`` command (for environments where the script is not on PATH)."""
from mmicl.cli import main

if __name__ == "__main__":
    main(prog_name="mmicl")
