"""梨园 Liyuan Desktop: role-play and long-form fiction written on a draft the model can edit before it seals."""

__version__ = "0.1.0"
