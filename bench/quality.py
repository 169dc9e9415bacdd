"""Retrieval quality: recall@k, MRR, empty answers and stale facts served as current, per category.

The baseline is plain Okapi BM25 (k1 1.5, b 0.75) over the same turns in a
few lines of Python: lower-cased words, English stop words dropped, no
stemming, no access control. Pure Python (no Django).
"""

import itertools
import math
import re
from collections import Counter

from bench.conversations import CATEGORIES, Dataset, Question
from bench.long_chats import KINDS

_WORD = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "i'm",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "now",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


class Bm25:
    """Okapi BM25 over ``documents`` (key → text), the issue's "few lines of Python" baseline."""

    def __init__(self, documents: dict[str, str], k1: float = 1.5, b: float = 0.75):
        self.keys = list(documents)
        self.docs = [Counter(words(documents[key])) for key in self.keys]
        self.lengths = [sum(doc.values()) for doc in self.docs]
        self.average = sum(self.lengths) / max(len(self.docs), 1)
        df = Counter(term for doc in self.docs for term in doc)
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}
        self.k1, self.b = k1, b

    def search(self, query: str, limit: int = 10) -> list[str]:
        terms = set(words(query))
        scored = []
        for key, doc, length in zip(self.keys, self.docs, self.lengths, strict=True):
            score = sum(
                self.idf[t]
                * doc[t]
                * (self.k1 + 1)
                / (doc[t] + self.k1 * (1 - self.b + self.b * length / self.average))
                for t in terms
                if t in doc
            )
            if score > 0:
                scored.append((-score, key))
        return [key for _, key in sorted(scored)[:limit]]


def evaluate(questions: list[Question], answers: list[list[str]]) -> dict:
    """Score ranked turn keys per question; return the metrics per category and over all."""
    rows: dict[str, list[dict]] = {category: [] for category in dict.fromkeys((*CATEGORIES, *KINDS))}
    for question, served in zip(questions, answers, strict=True):
        rows[question.category].append(_score(question, served))
    table = {category: _mean(scores) for category, scores in rows.items() if scores}
    table["all"] = _mean([score for scores in rows.values() for score in scores])
    return table


def _score(question: Question, served: list[str]) -> dict:
    gold = set(question.gold)
    first = next((rank for rank, key in enumerate(served[:10], start=1) if key in gold), None)
    score = {
        "recall@5": len(gold & set(served[:5])) / len(gold),
        "recall@10": len(gold & set(served[:10])) / len(gold),
        "mrr": 1 / first if first else 0.0,
        "zero_results": float(not served),
    }
    if question.superseded:
        # The fact's first turn in the answer states an older value: a stale fact served as current.
        stale = set(question.superseded)
        top = next((key for key in served[:10] if key in gold or key in stale), None)
        score["superseded_as_current"] = float(top in stale)
    return score


def _mean(scores: list[dict]) -> dict:
    names = sorted({name for score in scores for name in score})
    table = {"questions": len(scores)}
    for name in names:
        values = [score[name] for score in scores if name in score]
        table[name] = round(sum(values) / len(values), 3)
    return table


def baseline(dataset: Dataset) -> dict:
    """The BM25 baseline's metrics on ``dataset``."""
    index = Bm25({turn.key: turn.statement for turn in dataset.turns})
    return evaluate(dataset.questions, [index.search(q.text) for q in dataset.questions])


def adjacency(dataset: Dataset, served: list[tuple[str, dict[str, list[str]]]]) -> dict:
    """Of the neighbours shown next to served turns, the share that are the turn just before or after.

    ``served`` holds (turn key, {"before": keys, "after": keys}) per served
    item asked with one neighbour a side. ``missing`` is the share of true
    neighbours (a turn has none before its session's first) not shown.
    """
    before, after = {}, {}
    for conversation in dataset.conversations:
        for session in conversation.sessions:
            for earlier, later in itertools.pairwise(session):
                before[later.key], after[earlier.key] = earlier.key, later.key
    truth = {"before": before, "after": after}
    shown = adjacent = expected = found = 0
    for key, sides in served:
        for side, keys in sides.items():
            shown += len(keys)
            adjacent += sum(truth[side].get(key) == k for k in keys)
            if key in truth[side]:
                expected += 1
                found += truth[side][key] in keys
    return {
        "served": len(served),
        "neighbours": shown,
        "adjacent": round(adjacent / shown, 3) if shown else 0.0,
        "missing": round(1 - found / expected, 3) if expected else 0.0,
    }
