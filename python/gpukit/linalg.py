"""gpukit.linalg (filled in by the change that brings it)."""
