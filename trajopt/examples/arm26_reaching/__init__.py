"""arm26 point-to-point reaching (Moco and bioptim static_arm comparisons)."""
