"""Claims thm6.2 and thm6.3: the one- and two-parameter LCA trained by gradient flow."""
