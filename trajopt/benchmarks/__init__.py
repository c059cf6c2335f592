"""Benchmarks: ``trajopt bench NAME`` runs ``trajopt.benchmarks.NAME.main(argv)``, writing
./trajopt_results/benchmarks/NAME.json (or --out)."""
