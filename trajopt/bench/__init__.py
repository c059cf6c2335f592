"""Benchmarks: ``trajopt bench NAME`` runs ``trajopt.bench.NAME.main(argv)``, writing
./trajopt_results/benchmarks/NAME.json (or --out)."""
