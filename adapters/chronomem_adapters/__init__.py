"""chronomem adapters: shared vocabulary and the conformance kit."""
