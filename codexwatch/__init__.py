"""codexwatch: why Codex stopped, and what to do next."""

__version__ = "0.1.0"
