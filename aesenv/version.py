"""The package version, in a module of its own so that no module needs to import the package root."""

__version__ = "0.1.0"
