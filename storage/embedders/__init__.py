"""What turns text into vectors: ``base`` (the Embedder protocol, the offline hashing embedder,
what a store records about the model that wrote its vectors), ``local`` (WordLlama, offline),
``openai_compatible`` (any OpenAI-compatible endpoint) and ``choice`` (which one a name means).
"""
