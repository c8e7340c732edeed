"""mmicl-acds: an example mmicl plugin checking Ahn, Cheng, Daneshmand & Sra, *Transformers learn to
implement preconditioned gradient descent for in-context learning* (arXiv:2306.00297), through
mmicl's public claim API.

- ``mmicl_acds.case``: the plugin's case type (covariance, context length, deepest stack);
- ``mmicl_acds.theory``: one layer's loss and optimum, and the exact loss of L steps of
  preconditioned gradient descent from the Wishart trace moments, derived with SymPy;
- ``mmicl_acds.numerics``: sampling, the L-layer linear transformer, gradient descent on each prompt,
  fitting the transformer;
- ``mmicl_acds.claims``: the claims ``acds.onelayer``, ``acds.critical`` and ``acds.layers``
  (entry point ``acds``).
"""
__version__ = "0.1.0"
