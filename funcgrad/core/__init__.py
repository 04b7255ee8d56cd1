"""funcgrad core: the IR, primitives registry, interpreters and dtype rules."""
