#!/usr/bin/env python3
"""Makes tests/fixtures/arrivals/tokenizer.json, the small tokenizer the tests of
`arrivals --tokenizer` load.

It is a byte-level BPE (the GPT-2 / Llama 3 kind) trained on a made-up corpus: the shared
one-token words (crates/format/src/words.rs), often and both at the start of a line and after
a space, so that most of them become one token either way; a few longer words, rarely, so that
they stay split into several tokens; and digits and punctuation. A template adds a `<s>` before
every sequence, so a count that wrongly includes special tokens is off by one.

The tests never run this script: its output is checked in. To make it again:

    python3 -m venv /tmp/tokvenv && /tmp/tokvenv/bin/pip install tokenizers
    /tmp/tokvenv/bin/python scripts/make-test-tokenizer.py

Training is deterministic for a given corpus, so the output changes only with the words or
the `tokenizers` version.
"""

import pathlib
import re

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORDS_RS = ROOT / "crates" / "format" / "src" / "words.rs"
OUT = ROOT / "tests" / "fixtures" / "arrivals" / "tokenizer.json"

# Words that appear once each: too rare for the merges to join them into one token.
RARE = [
    "antidisestablishmentarianism",
    "photosynthesis",
    "quintessential",
    "xylophone",
    "onomatopoeia",
    "juxtaposition",
    "kaleidoscope",
    "serendipity",
]


def one_token_words():
    text = WORDS_RS.read_text()
    block = text.split("ONE_TOKEN_WORDS", 1)[1].split("];", 1)[0]
    return re.findall(r'"([^"]+)"', block)


def corpus(words):
    # Each word alone on a line (no leading space) and after another word (leading space).
    for _ in range(50):
        for w in words:
            yield w
        yield " ".join(words)
    yield " ".join(RARE)
    yield "0 1 2 3 4 5 6 7 8 9 , . ; : ! ? ( ) - ' \""


def main():
    words = one_token_words()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=2000,
        min_frequency=2,
        special_tokens=["<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(words), trainer=trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 0)]
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(OUT), pretty=False)
    print(f"{OUT}: {tok.get_vocab_size()} tokens, {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
