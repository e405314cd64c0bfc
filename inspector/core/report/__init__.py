"""Text and machine-readable reports built from the core's data (no Qt)."""
