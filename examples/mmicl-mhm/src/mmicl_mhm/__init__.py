"""mmicl-mhm: an example mmicl plugin checking Mahankali, Hashimoto & Ma, *One Step of Gradient Descent
is Provably the Optimal In-Context Learner with One Layer of Linear Self-Attention* (arXiv:2307.03576),
through mmicl's public claim API.

- ``mmicl_mhm.case``: the plugin's case type (covariance, context length, target function);
- ``mmicl_mhm.theory``: the population loss of one LSA layer derived with SymPy, its minimiser;
- ``mmicl_mhm.numerics``: sampling, Monte Carlo losses, training the full layer;
- ``mmicl_mhm.claims``: the claims ``mhm.onestep`` and ``mhm.trained`` (entry point ``mhm``).
"""
__version__ = "0.1.0"
