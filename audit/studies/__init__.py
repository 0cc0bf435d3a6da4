"""Studies of the three papers: catalogues of bias checks and the papers' experiments."""
