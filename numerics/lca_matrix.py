"""The large-context LCA computed directly with d×d matrices: an independent check of the
symbolic reduction in ``theory.lca`` (no span decomposition, no closed form, no sampling).

For one task (m, ζ) with ``Λ = I + m mᵀ``: the query column is ``F^T_q = P_T x_q`` with
``P_t = P_{t−1} + W^S + W^V Λ P_{t−1}``, ``P_0 = 0``; the readout is ``ŷ = ζ mᵀ W^R P_T x_q =
w_effᵀ x_q``; and for ``x ~ N(0, Λ)``, ``y = ζu`` with ``Cov(x, y) = ζ m``:

    risk = ζ² − 2 ζ w_effᵀ m + w_effᵀ Λ w_eff,     Bayes: w = ζ Λ⁻¹ m, risk ζ² (1 − mᵀ Λ⁻¹ m).
"""
from __future__ import annotations

import numpy as np

__all__ = ["query_matrix", "matrix_excess"]



def query_matrix(m: np.ndarray, w_skip: np.ndarray, w_value: np.ndarray, T: int) -> np.ndarray:
    """``P_T`` for general d×d ``W^S``, ``W^V`` (``W^K = W^Q = I``)."""
    d = m.size
    lam = np.eye(d) + np.outer(m, m)
    P = np.zeros((d, d))
    for _ in range(T):
        P = P + w_skip + w_value @ lam @ P
    return P


def matrix_excess(m: np.ndarray, zeta: float, w_skip, w_value, T: int, readout=None) -> float:
    """Excess risk over Bayes of the large-context LCA for one task, by matrices."""
    d = m.size
    lam = np.eye(d) + np.outer(m, m)
    W_R = np.eye(d) if readout is None else readout
    w_eff = zeta * (W_R @ query_matrix(m, w_skip, w_value, T)).T @ m
    risk = zeta**2 - 2 * zeta * w_eff @ m + w_eff @ lam @ w_eff
    bayes = zeta**2 * (1 - m @ np.linalg.solve(lam, m))
    return float(risk - bayes)
