"""Core layer: symbolic muscles, multibody dynamics and optimal control on CasADi (imports the base only)."""
