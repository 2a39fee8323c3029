"""Learners for move models (Bradley-Terry gammas)."""
