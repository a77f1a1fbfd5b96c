"""The platform both apps build on: PyRIT vocabulary and identifiers, and shared web pieces."""
