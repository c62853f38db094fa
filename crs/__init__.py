"""Conversational recommender systems of the arena."""

from arena.conversation.crs_interface import TOP_K_KEPT, TOP_K_SHOWN, ConversationalRecommender, CRSSpec, CRSUnavailable

__all__ = ["TOP_K_KEPT", "TOP_K_SHOWN", "ConversationalRecommender", "CRSSpec", "CRSUnavailable"]
