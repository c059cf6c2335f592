"""Studies layer: what a user solves (inverse dynamics, static optimization, muscle-driven inverse, gait)."""
