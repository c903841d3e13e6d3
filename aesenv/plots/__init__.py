"""Plots: figure description (runs inside the sandbox) and the offline plot-quality judge."""
