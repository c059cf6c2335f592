"""Benchmarks: ``trajopt bench NAME`` runs ``trajopt.bench.NAME.main(argv)``, writing results/benchmarks/NAME.json."""
