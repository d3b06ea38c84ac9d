"""End-to-end scenarios on the local stack (a package, so its stack is torn down when the last scenario ends)."""
