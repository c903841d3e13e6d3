"""Benchmarks: quality (OpenDesign, PandasPlotBench), judge sanity (degradation pairs), performance."""
