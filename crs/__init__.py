"""Conversational recommender systems of the arena."""

from crs.base import TOP_K_KEPT, TOP_K_SHOWN, ConversationalRecommender, CRSSpec, CRSUnavailable

__all__ = ["TOP_K_KEPT", "TOP_K_SHOWN", "ConversationalRecommender", "CRSSpec", "CRSUnavailable"]
