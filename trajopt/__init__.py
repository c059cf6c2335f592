"""trajopt: optimal control of musculoskeletal models on CasADi and IPOPT."""

__version__ = "0.1.0"
