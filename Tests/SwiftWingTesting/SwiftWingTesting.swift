// Test doubles that implement the same protocols as the real parts.
