"""Analyses of measured motions: inverse dynamics and static optimization."""
