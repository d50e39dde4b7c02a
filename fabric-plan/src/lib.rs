//! Descriptor discovery, normalization and fingerprints; planning, doctor, inspect.
