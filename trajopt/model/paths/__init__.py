"""Muscle paths: polynomial surrogates of length and moment arms, their fitting and training data."""
