"""Import swaps and test-framework shims for the conformance runners (test process only)."""
