"""gpukit.random (filled in by the change that brings it)."""
