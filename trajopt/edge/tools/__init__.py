"""OpenSim-style tools for the command line (``trajopt muscle-inverse`` ...): files in, result folders out."""
