"""agrad.check: finite differences and gradient reports (prints nothing)."""
