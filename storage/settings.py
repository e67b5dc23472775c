"""A store's settings: salience decay, promotion thresholds, entity and fact decay, the embedder
for text queries and new vectors, and (for a store on a server) the Chroma server holding its
vectors. Kept in the store's journal under SETTINGS_KEY; never a secret."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .salience import EntityDecay, InferredFactDecay, PromotionThresholds, SalienceModel

SETTINGS_KEY = "settings"


@dataclass(frozen=True)
class StoreSettings:
    salience: SalienceModel = field(default_factory=SalienceModel)
    promotion: PromotionThresholds = field(default_factory=PromotionThresholds)
    # The embedder for text queries and new vectors: its model's name ("mnemoscope-hashing-256",
    # "wordllama-l2_supercat", "text-embedding-3-small"), the OpenAI-compatible endpoint that
    # serves it (None: it runs here) and the dimensions asked of it. Never its API key.
    embedder: str | None = None
    entity_decay: EntityDecay = field(default_factory=EntityDecay)
    fact_decay: InferredFactDecay = field(default_factory=InferredFactDecay)
    embedder_url: str | None = None
    embedder_dimensions: int | None = None
    # A store on a database server: the Chroma server holding its vectors (a URL without secrets),
    # opened with it whenever no other is named.
    vectors_url: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "salience": asdict(self.salience),
            "promotion": asdict(self.promotion),
            "embedder": self.embedder,
            "embedder_url": self.embedder_url,
            "embedder_dimensions": self.embedder_dimensions,
            "vectors_url": self.vectors_url,
            "entity_decay": asdict(self.entity_decay),
            "fact_decay": {**asdict(self.fact_decay), "labels": list(self.fact_decay.labels)},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> StoreSettings:
        data = data or {}
        fact = dict(data.get("fact_decay", {}))
        if "labels" in fact:
            fact["labels"] = tuple(fact["labels"])
        return cls(
            salience=SalienceModel(**data.get("salience", {})),
            promotion=PromotionThresholds(**data.get("promotion", {})),
            embedder=data.get("embedder"),
            embedder_url=data.get("embedder_url"),
            embedder_dimensions=data.get("embedder_dimensions"),
            vectors_url=data.get("vectors_url"),
            entity_decay=EntityDecay(**data.get("entity_decay", {})),
            fact_decay=InferredFactDecay(**fact),
        )
