"""Statistics of audits: ε lower bounds and their power, estimation bounds (Cramér–Rao, van Trees), Fisher information, Hotelling's test, trends."""
