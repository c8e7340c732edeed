"""mmicl-llzmp: an example mmicl plugin checking Lu, Letey, Zavatone-Veth, Maiti & Pehlevan, *Asymptotic
theory of in-context learning by linear attention* (arXiv:2405.11751), through mmicl's public claim API.

- ``mmicl_llzmp.case``: the plugin's case type (α, κ, τ, ρ, λ);
- ``mmicl_llzmp.theory``: the Marchenko–Pastur function derived with SymPy, the asymptotic ICL error
  and its ridgeless closed forms;
- ``mmicl_llzmp.numerics``: the finite-dimensional simulation (ridge fit over H_Z's features);
- ``mmicl_llzmp.claims``: the claims ``llzmp.asymptotics`` and ``llzmp.simulation`` (entry point ``llzmp``).
"""
__version__ = "0.1.0"
