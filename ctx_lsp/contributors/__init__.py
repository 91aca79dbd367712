"""Contributors: sources of candidate sections, one module each."""
