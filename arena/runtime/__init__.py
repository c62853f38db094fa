"""How the arena runs: settings, devices, workers, imports, files and one-time set-up."""
