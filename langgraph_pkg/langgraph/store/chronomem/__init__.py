"""LangGraph BaseStore backed by chronomem."""
