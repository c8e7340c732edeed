# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Laws, depths and limits
#
# This tutorial computes the main quantities of the linearised cross-attention (LCA) theory of
# Barnfield, Sur and Sen, *Multi-layer Cross-Attention is Provably Optimal for Multi-modal
# In-context Learning* (arXiv:2602.04872), on a law of your choice:
#
# 1. a **task law**: how the squared norm s = ‖m‖² of the prompt's latent factor is distributed;
# 2. **α\***, the limit of the trained one-parameter LCA as its depth grows;
# 3. **α_T**, the minimiser of the population loss at depth T, and its **excess risk** over the
#    Bayes predictor;
# 4. the **gradient flows** of the one- and two-parameter models, which training follows;
# 5. the **T → ∞ expansion**: how fast α_T approaches α\*, and how fast the excess falls.
#
# Everything here runs in a few seconds on a laptop.

# %%
import matplotlib.pyplot as plt
import numpy as np

import mmicl

# %% [markdown]
# ## A law
#
# A law is written in the LAW language (`mmicl.GRAMMAR` lists it) or built from objects such as
# `mmicl.TaskLaw(s=mmicl.Uniform(0.5, 4))`. The text form fills in the defaults: the label noise ζ
# is standard normal and both modalities have dimension 1.

# %%
law = mmicl.parse_law("s=uniform(0.5,4)")
print(law)

# %% [markdown]
# ## The limit α\*
#
# In the one-parameter LCA every layer uses the same weights W^S = −W^V = αI. As the depth T grows
# the best α tends to α\* = 2/(2 + s_lo + s_hi), where [s_lo, s_hi] is the support of s: only the
# two ends of the support matter.

# %%
a_star = mmicl.alpha_star(law)
print(f"α* = {a_star:.15f}")
print(f"2/(2 + 0.5 + 4) = {2 / (2 + 0.5 + 4):.15f}")

# %% [markdown]
# ## α_T over the depth T
#
# `mmicl.alpha_T(law, T)` is the unique minimiser of the (convex) population loss of the depth-T
# model, found by bracketed root finding. It approaches α\* from below.

# %%
depths = np.unique(np.logspace(0, 4, 25).astype(int))
alphas = np.array([mmicl.alpha_T(law, int(T)) for T in depths])
for T in (1, 10, 100, 1000, 10000):
    print(f"T = {T:>5}: α_T = {mmicl.alpha_T(law, T):.12f}, α* − α_T = {a_star - mmicl.alpha_T(law, T):.3e}")

# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogx(depths, alphas, "o-", ms=3, label="α_T")
ax.axhline(a_star, color="k", ls="--", lw=1, label="α* = 2/(2 + s_lo + s_hi)")
ax.set_xlabel("depth T")
ax.set_ylabel("α")
ax.set_title("α_T → α* on s=uniform(0.5,4)")
ax.legend()
plt.show()

# %% [markdown]
# ## The excess risk
#
# `mmicl.excess_risk(law, T)` is the population risk of the depth-T model at α_T minus the Bayes
# risk. It falls geometrically with T, soon below the smallest float64, so it is returned as a
# `ScaledValue`: `.log10` always holds it, `.value` is the float where one exists (else `None`).

# %%
for T in (1, 10, 100, 1000):
    ex = mmicl.excess_risk(law, T)
    print(f"T = {T:>4}: excess = {ex.value!s:>24}   log10 = {ex.log10:10.3f}")

# %% [markdown]
# ## The one-parameter gradient flow
#
# Training follows the gradient flow dα/dt = −L′(α). `mmicl.flow_one` integrates it from `alpha0`
# and says whether it came to rest; `flow.time` is real flow time and `flow.alphas` is α(t). Its
# limit is the minimiser α_T, found here independently of the root finder. The flow stops where
# L′ changes sign within ±5·10⁻¹³ of α, so the two agree to that distance.

# %%
T = 10
flow = mmicl.flow_one(law, T, alpha0=0.0)
print("converged:", flow.converged)
print(f"flow's limit    α   = {flow.alpha:.15f}")
print(f"root finder     α_T = {mmicl.alpha_T(law, T):.15f}")
print(f"difference          = {abs(flow.alpha - mmicl.alpha_T(law, T)):.1e}")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogx(1 + flow.time, flow.alphas, label="α(t)")
ax.axhline(mmicl.alpha_T(law, T), color="k", ls="--", lw=1, label=f"α_T, T = {T}")
ax.set_xlabel("1 + t (flow time)")
ax.set_ylabel("α")
ax.set_title("one-parameter gradient flow from α = 0")
ax.legend()
plt.show()

# %% [markdown]
# ## The two-parameter flow
#
# With W^S = αI and W^V = βI the flow moves in the plane (α, β). From a good start it converges to
# the minimiser (α_T, β_T), with β_T close to −α_T: the two-parameter model settles on the
# one-parameter family. `mmicl.minimise_two` finds that minimiser without integrating the flow.

# %%
T = 5
flow2 = mmicl.flow_two(law, T, alpha0=0.1, beta0=0.0)
a_T2, b_T2 = mmicl.minimise_two(law, T)
print("outcome:", flow2.outcome, "| converged:", flow2.converged)
print(f"flow's limit (α, β) = ({flow2.alpha:.10f}, {flow2.beta:.10f})")
print(f"minimiser   (α, β) = ({a_T2:.10f}, {b_T2:.10f})")

fig, ax = plt.subplots(figsize=(5, 4))
ax.plot(flow2.alphas, flow2.betas, label="trajectory")
ax.plot([0.1], [0.0], "o", label="start")
ax.plot([a_T2], [b_T2], "*", ms=12, label="minimiser (α_T, β_T)")
grid = np.linspace(0, 0.35, 2)
ax.plot(grid, -grid, "k--", lw=1, label="β = −α")
ax.set_xlabel("α")
ax.set_ylabel("β")
ax.set_title(f"two-parameter gradient flow, T = {T}")
ax.legend()
plt.show()

# %% [markdown]
# ## How α_T approaches α\*: the T → ∞ expansion
#
# `mmicl.alpha_expansion(law)` derives the correction α\* − α_T symbolically from the law's
# behaviour at the two ends of its support (an atom, or a density with some exponent there).
# When both ends behave alike the correction is c/T + d/T² + …; when they differ a logarithm
# appears, (a·log T + c)/T + (E₀ + E₁·log T + E₂·log²T)/T² + …. `form` says which, `coefficient`
# is c, `log_coefficient` is a, and `second` holds the 1/T² term's coefficients (E₀, E₁, E₂) from the
# constant up (for c/T, d = E₀ and the others are 0); `term(T, k)` evaluates the k-th order.

# %%
ex = mmicl.alpha_expansion(law)
print("form:", ex.form)
print(f"c = {ex.coefficient:.12f}, d = {ex.second[0]:.6f}")

# %% [markdown]
# So T·(α\* − α_T) should tend to c, with the correction d/T. A second law, a Beta law whose
# density vanishes at s_lo but not at s_hi (its ends have different exponents), shows the
# logarithmic form: there T·(α\* − α_T) grows like a straight line in log T.

# %%
beta_law = mmicl.parse_law("s=beta(2,1,0.5,4)")
ex_beta = mmicl.alpha_expansion(beta_law)
print("form:", ex_beta.form)
print(f"a = {ex_beta.log_coefficient:.12f}, c = {ex_beta.coefficient:.12f}")

depths = np.unique(np.logspace(1, 5, 30).astype(int))
fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
for ax, this_law, e in ((axes[0], law, ex), (axes[1], beta_law, ex_beta)):
    a_s = mmicl.alpha_star(this_law)
    scaled = [T * (a_s - mmicl.alpha_T(this_law, int(T))) for T in depths]
    if e.form == "c/T":
        derived = e.coefficient + e.second[0] / depths
        label = "derived c + d/T"
    else:
        derived = np.array([T * (e.term(int(T), 1) + e.term(int(T), 2)) for T in depths])
        label = "derived (a·log T + c) + P₂(log T)/T"
    ax.semilogx(depths, scaled, "o", ms=3, label="computed T·(α* − α_T)")
    ax.semilogx(depths, derived, "-", label=label)
    ax.set_xlabel("depth T (log scale)")
    ax.set_title(str(this_law).split(";")[0])
    ax.legend()
axes[0].set_ylabel("T·(α* − α_T)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## How fast the excess falls
#
# `mmicl.excess_expansion(law)` gives the leading term of the excess at α_T,
# E[ζ²]·prefactor·rate_per_layer^T·(2T)^(−power): a geometric rate per layer, ρ² with
# ρ = (κ − 1)/(κ + 1) and κ = (1 + s_hi)/(1 + s_lo), times a power of T set by the ends of the
# law. `log10(T)` evaluates it without underflow; set against the computed excess, the ratio
# tends to 1 (its log10 to 0).

# %%
ee = mmicl.excess_expansion(law)
print(f"rate per layer = {ee.rate_per_layer:.12f}, power = {ee.power}, prefactor = {ee.prefactor:.6f}")
for T in (10, 100, 1000, 10000):
    computed = mmicl.excess_risk(law, T).log10
    print(f"T = {T:>5}: log10 excess = {computed:12.4f}, leading term {ee.log10(T):12.4f}, "
          f"difference {computed - ee.log10(T):+.2e}")

# %% [markdown]
# `mmicl limits --law "s=uniform(0.5,4)"` prints the same expansion from the command line and
# checks it against α_T up to T = 10⁶; [Depth T → ∞](../limits.md) gives the derivation.
