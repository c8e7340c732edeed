"""Task laws: the prompt-to-prompt law of the latent-factor model, and the LAW language that writes one.

- ``scalar``: laws of one non-negative scalar (a squared norm): ``Point``, ``Uniform``, ``Beta``,
  ``TwoPoint``, ``Discrete``, ``Mixture``, ``Exponential``, and ``LawError``;
- ``task``: ``TaskLaw`` (d1, d2, the squared norms' laws, the directions, the law of ζ) and ``ZetaLaw``;
- ``language``: LAW text (``parse_law``, ``as_law``, ``GRAMMAR``) and the limits a law must keep
  (``check_law_scale``, ``check_law_limits``);
- ``quadrature``: the rules behind ``E[h(S)]`` (``Rule``, graded Gauss rules, the discrete Gauss rule).

This package is the face: every name below is importable from ``mmicl.numerics.laws``.
"""
from .language import (GRAMMAR, LawSyntaxError, as_law, check_law_limits, check_law_scale, parse_law,
                       parse_scalar_law, parse_zeta, read_law, takes_law)
from .quadrature import Rule
from .scalar import (Beta, Discrete, Exponential, LawError, Mixture, Point, ScalarLaw, SumLaw, TwoPoint,
                     UnboundedSupportError, Uniform)
from .task import TaskLaw, ZetaLaw

__all__ = ["GRAMMAR", "LawSyntaxError", "as_law", "check_law_limits", "check_law_scale", "parse_law",
           "parse_scalar_law", "parse_zeta", "read_law", "takes_law", "Rule", "Beta", "Discrete", "Exponential", "LawError",
           "Mixture", "Point", "ScalarLaw", "SumLaw", "TwoPoint", "UnboundedSupportError", "Uniform", "TaskLaw",
           "ZetaLaw"]
