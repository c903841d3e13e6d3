"""The project packages' npm manifest and lock (`aesenv setup` installs them)."""
