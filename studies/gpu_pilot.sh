#!/usr/bin/env bash
# The GPU pilot on a lent device machine (one H200), from the repository's root:
#   bash studies/gpu_pilot.sh            (through the device tool: run with command "bash studies/gpu_pilot.sh")
# Installs mmicl without its dependencies (the machine's python3 has torch, numpy, scipy, sympy; nothing can be
# fetched there), then runs studies/gpu_pilot.py at the full size with an eight-minute training budget and writes
# the record to $OUT/gpu_pilot.json (the device tool brings $OUT back), or to studies/results/ without $OUT.
set -euo pipefail
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/mmicl-site . >/dev/null
export PYTHONPATH=/tmp/mmicl-site PYTHONUNBUFFERED=1
out="${OUT:-studies/results}/gpu_pilot.json"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
python3 studies/gpu_pilot.py --device cuda --size full --budget-s "${BUDGET_S:-480}" --out "$out"
