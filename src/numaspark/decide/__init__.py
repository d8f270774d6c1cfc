"""Decide: classify configurations, advise, tune."""
