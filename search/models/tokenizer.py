"""Character-level tokenizer of a bundled model, saved as a standard ``tokenizer.json``.

Every character of the task's alphabet (``Task.alphabet``; by default the arithmetic one) is one
token, except the task's word tokens (``Task.word_tokens``, by default the answer marker
``"Answer: "``, which starts every terminal step), one token each. Loading goes through
``transformers.AutoTokenizer.from_pretrained(path)`` like any Hugging Face tokenizer.
"""
from __future__ import annotations

import re

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

PAD, EOS, UNK = "[PAD]", "[EOS]", "[UNK]"
ANSWER_TOKEN = "Answer: "
ALPHABET = list("0123456789+-*()=\n")


def _escape(word: str) -> str:
    # Regex metacharacters only (re.escape would also escape the space of "Answer: ").
    return re.sub(r"([\\.^$*+?{}\[\]|()])", r"\\\1", word)


def build_tokenizer(alphabet=None, word_tokens=(ANSWER_TOKEN,)) -> PreTrainedTokenizerFast:
    """Build the tokenizer of ``alphabet`` (a string or list of characters; None: ALPHABET, the
    arithmetic task's) and ``word_tokens``. Ids: [PAD]=0, [EOS]=1, [UNK]=2, then the word
    tokens ("Answer: "=3 by default), then the alphabet in order. ValueError when a character
    repeats."""
    chars = ALPHABET if alphabet is None else list(alphabet)
    entries = [PAD, EOS, UNK] + list(word_tokens) + chars
    if len(set(entries)) != len(entries):
        raise ValueError("the alphabet and word tokens must not repeat a token")
    vocab = {tok: i for i, tok in enumerate(entries)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    # Isolate the word tokens first, then every single character (newline included).
    words = "".join(_escape(w) + "|" for w in sorted(word_tokens, key=len, reverse=True))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(words + r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, eos_token=EOS,
                                   unk_token=UNK, padding_side="left")
