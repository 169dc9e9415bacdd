"""A generated set of long casual chats for the retrieval-quality benchmark, in the style of LoCoMo.

Two people with personas (work, family, hobbies, pets, trips) talk over
20-30 sessions days or weeks apart, 15-30 turns each. Most turns are
greetings, chit-chat, reactions and follow-up questions that share the
common words of the questions; facts are told in varied phrasing, often
over two turns (the listener asks, the teller answers referring back),
followed up with a detail and mentioned again later in passing. Questions
of six kinds (``questions.KINDS``) name their gold turns. Deterministic per
seed; pure Python (no Django), like ``bench.conversations``, whose
``Dataset`` it returns, so both sets load through the same code.
"""

from bench.long_chats.dataset import generate
from bench.long_chats.questions import ADVERSARIAL, KINDS, OPEN_DOMAIN

__all__ = ["ADVERSARIAL", "KINDS", "OPEN_DOMAIN", "generate"]
