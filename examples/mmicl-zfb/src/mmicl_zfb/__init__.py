"""mmicl-zfb: an example mmicl plugin checking Zhang, Frei & Bartlett, *Trained Transformers Learn
Linear Models In-Context* (JMLR 2024) through mmicl's public claim API.

- ``mmicl_zfb.theory``: the population loss derived with SymPy, its minimiser, compiled functions;
- ``mmicl_zfb.numerics``: numerical minimisation, the gradient flow of the LSA layer, Monte Carlo;
- ``mmicl_zfb.claims``: the claims ``zfb.minimiser``, ``zfb.flow``, ``zfb.montecarlo`` (the
  entry point ``zfb`` of the group ``mmicl.claims``; importing it registers them).
"""
__version__ = "0.1.0"
