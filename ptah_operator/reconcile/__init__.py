"""reconcile layer."""
