"""Audit engines, one module each: trade-off, reconstruction, bias, calibration, pair search, learner releases, Opacus."""
