"""Character-level tokenizer of the bundled model, saved as a standard ``tokenizer.json``.

Every character of the arithmetic alphabet is one token, except the answer marker
``"Answer: "`` which is a single token (it starts every terminal step). Loading goes through
``transformers.AutoTokenizer.from_pretrained(path)`` like any Hugging Face tokenizer.
"""
from __future__ import annotations

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

PAD, EOS, UNK = "[PAD]", "[EOS]", "[UNK]"
ANSWER_TOKEN = "Answer: "
ALPHABET = list("0123456789+-*()=\n")


def build_tokenizer() -> PreTrainedTokenizerFast:
    """Build the tokenizer. Ids: [PAD]=0, [EOS]=1, [UNK]=2, "Answer: "=3, then ALPHABET."""
    vocab = {tok: i for i, tok in enumerate([PAD, EOS, UNK, ANSWER_TOKEN] + ALPHABET)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    # Isolate the answer marker first, then every single character (newline included).
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"Answer: |[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, eos_token=EOS,
                                   unk_token=UNK, padding_side="left")
