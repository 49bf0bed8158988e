#!/usr/bin/env python3
"""Makes the tiny Llama model the real-engine tests serve, from nothing but local files.

    python tiny_model.py OUT_DIR

writes into OUT_DIR (through a temporary directory renamed at the end, so a directory that
exists is complete):

- tokenizer.json: a byte-level BPE of 8,192 tokens (the GPT-2 / Llama 3 kind) trained with the
  `tokenizers` package on this Python's own standard-library sources, with three special
  tokens: <|endoftext|> (0), <|im_start|> (1), <|im_end|> (2). No template adds tokens to a
  plain encoding, so a prompt's count is the same with and without special tokens.
- tokenizer_config.json and special_tokens_map.json, written by hand as
  `transformers.PreTrainedTokenizerFast.save_pretrained` writes them, with a ChatML chat
  template (the one Qwen uses, without a default system message).
- config.json and generation_config.json: a `LlamaForCausalLM` of 2 layers, hidden size 256,
  4 attention heads and 2 KV heads of 64, 8,192 positions.
- model.safetensors: seeded random weights (normal, sd 0.02; norms 1) in float16, ~5 M
  parameters.
- tiny.gguf: the same model for llama.cpp (arch llama, tokenizer gpt2 with the same ids, merges,
  specials and chat template; the same weights, q and k permuted as llama.cpp's converter does).
- think/: the same model as a thinking one, for vLLM's reasoning parsers, which look `<think>`
  and `</think>` up as single tokens: the tokenizer with those two added (ids 8,192 and 8,193,
  not special, as DeepSeek-R1 and Qwen3 have them), a chat template whose generation prompt
  opens `<think>`, and the weights with two more rows of embedding and output drawn from a
  second seed. Every other token, weight and count is the base model's, so the base model (and
  every test of it) is unchanged.

Training is deterministic: the same Python (its standard library is the corpus) and the same
`tokenizers` version give a byte-identical tokenizer.json, and the weights depend on SEED alone.
"""

import json
import os
import pathlib
import shutil
import sys
import sysconfig

import gguf
import numpy as np
from safetensors.numpy import save_file
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

VOCAB = 8192
CORPUS_BYTES = 12 << 20
SEED = 20240611
THINK_SEED = 20240612
THINK_TOKENS = ["<think>", "</think>"]
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
# As tests/fixtures/real/thinking.jinja (the llama-server reasoning test's): a thinking
# model's template, which opens the thinking in the prompt, so all the model writes is reasoning
# until it writes `</think>` (or the server's thinking budget makes it).
THINK_CHAT_TEMPLATE = CHAT_TEMPLATE.replace("assistant\\n' }}", "assistant\\n<think>\\n' }}")
assert THINK_CHAT_TEMPLATE != CHAT_TEMPLATE
CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "hidden_act": "silu",
    "attention_bias": False,
    "mlp_bias": False,
    "tie_word_embeddings": False,
    "initializer_range": 0.02,
    "bos_token_id": 0,
    "eos_token_id": 2,
    "pad_token_id": 0,
    "torch_dtype": "float16",
}


def corpus_files():
    """The standard library's .py files in a fixed order, tests and vendored packages left out,
    up to CORPUS_BYTES."""
    root = pathlib.Path(sysconfig.get_paths()["stdlib"])
    skip = {"test", "tests", "site-packages", "idlelib", "lib2to3", "__pycache__"}
    files = sorted(
        p for p in root.rglob("*.py") if not skip.intersection(p.relative_to(root).parts)
    )
    total = 0
    for p in files:
        if total >= CORPUS_BYTES:
            break
        text = p.read_text(encoding="utf-8", errors="replace")
        total += len(text)
        yield text


def train_tokenizer():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        min_frequency=2,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus_files(), trainer=trainer)
    return tok


def tokenizer_files(out, tok, template=CHAT_TEMPLATE, added_after=()):
    """The tokenizer files; `added_after` are (id, text) tokens added after training, not
    special."""
    tok.save(str(out / "tokenizer.json"), pretty=False)
    added = {
        str(i): {
            "content": s,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
        for i, s in enumerate(SPECIALS)
    }
    for i, s in added_after:
        added[str(i)] = dict(added["0"], content=s, normalized=True, special=False)
    config = {
        "added_tokens_decoder": added,
        "bos_token": "<|endoftext|>",
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": None,
        "chat_template": template,
        "clean_up_tokenization_spaces": False,
        "model_max_length": CONFIG["max_position_embeddings"],
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    write_json(out / "tokenizer_config.json", config)
    write_json(
        out / "special_tokens_map.json",
        {"bos_token": "<|endoftext|>", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    )


def weights(vocab):
    """HF names and float16 arrays, drawn in a fixed order from one seeded generator."""
    c = CONFIG
    h, inter, hd = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    rng = np.random.default_rng(SEED)

    def normal(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * c["initializer_range"]).astype(
            np.float16
        )

    def ones():
        return np.ones(h, dtype=np.float16)

    w = {"model.embed_tokens.weight": normal(vocab, h)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = ones()
        w[p + "self_attn.q_proj.weight"] = normal(q, h)
        w[p + "self_attn.k_proj.weight"] = normal(kv, h)
        w[p + "self_attn.v_proj.weight"] = normal(kv, h)
        w[p + "self_attn.o_proj.weight"] = normal(h, q)
        w[p + "post_attention_layernorm.weight"] = ones()
        w[p + "mlp.gate_proj.weight"] = normal(inter, h)
        w[p + "mlp.up_proj.weight"] = normal(inter, h)
        w[p + "mlp.down_proj.weight"] = normal(h, inter)
    w["model.norm.weight"] = ones()
    w["lm_head.weight"] = normal(vocab, h)
    return w


def permute(w, heads):
    """HF's rotary layout (halves) to GGML's (interleaved pairs), as convert_hf_to_gguf.py does
    for Llama's q and k."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


GGUF_NAMES = {
    "input_layernorm": "attn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "post_attention_layernorm": "ffn_norm",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}


def gguf_tensor(name, array):
    c = CONFIG
    if name == "model.embed_tokens.weight":
        return "token_embd.weight", array
    if name == "model.norm.weight":
        return "output_norm.weight", array.astype(np.float32)
    if name == "lm_head.weight":
        return "output.weight", array
    _, _, layer, rest = name.split(".", 3)
    part = rest.removesuffix(".weight")
    if part == "self_attn.q_proj":
        array = permute(array, c["num_attention_heads"])
    elif part == "self_attn.k_proj":
        array = permute(array, c["num_key_value_heads"])
    if array.ndim == 1:
        array = array.astype(np.float32)
    return f"blk.{layer}.{GGUF_NAMES[part]}.weight", array


def write_gguf(path, tok, w):
    c = CONFIG
    data = json.loads(tok.to_str())
    vocab = tok.get_vocab_size()
    by_id = {i: t for t, i in tok.get_vocab(with_added_tokens=True).items()}
    tokens = [by_id[i] for i in range(vocab)]
    types = [
        gguf.TokenType.CONTROL if t in SPECIALS else gguf.TokenType.NORMAL for t in tokens
    ]
    merges = [m if isinstance(m, str) else " ".join(m) for m in data["model"]["merges"]]

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tokenpipe-tiny")
    writer.add_context_length(c["max_position_embeddings"])
    writer.add_embedding_length(c["hidden_size"])
    writer.add_block_count(c["num_hidden_layers"])
    writer.add_feed_forward_length(c["intermediate_size"])
    writer.add_head_count(c["num_attention_heads"])
    writer.add_head_count_kv(c["num_key_value_heads"])
    writer.add_rope_dimension_count(c["head_dim"])
    writer.add_layer_norm_rms_eps(c["rms_norm_eps"])
    writer.add_rope_freq_base(c["rope_theta"])
    writer.add_vocab_size(vocab)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_tokenizer_model("gpt2")
    # The GPT-2 pre-tokenizer regex, the one `pre_tokenizers.ByteLevel` applies.
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(c["bos_token_id"])
    writer.add_eos_token_id(c["eos_token_id"])
    writer.add_pad_token_id(c["pad_token_id"])
    # As tokenizer.json: nothing is added to a plain encoding.
    writer.add_add_bos_token(False)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)
    for name, array in w.items():
        gname, garray = gguf_tensor(name, array)
        writer.add_tensor(gname, garray)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def write_think_model(out, tok, w):
    """think/: the base model with `<think>` and `</think>` added (see the module's doc)."""
    out.mkdir()
    base = tok.get_vocab_size()
    tok.add_tokens([AddedToken(t, special=False, normalized=True) for t in THINK_TOKENS])
    vocab = tok.get_vocab_size()
    ids = [tok.token_to_id(t) for t in THINK_TOKENS]
    assert ids == list(range(base, vocab)), ids
    tokenizer_files(out, tok, THINK_CHAT_TEMPLATE, zip(ids, THINK_TOKENS))
    write_json(out / "config.json", dict(CONFIG, vocab_size=vocab))
    write_json(
        out / "generation_config.json",
        {"bos_token_id": CONFIG["bos_token_id"], "eos_token_id": CONFIG["eos_token_id"]},
    )
    rng = np.random.default_rng(THINK_SEED)
    h, sd = CONFIG["hidden_size"], CONFIG["initializer_range"]
    think = dict(w)
    for name in ("model.embed_tokens.weight", "lm_head.weight"):
        rows = (rng.standard_normal((vocab - base, h), dtype=np.float32) * sd).astype(np.float16)
        think[name] = np.concatenate([w[name], rows])
    save_file(think, str(out / "model.safetensors"), metadata={"format": "pt"})


def write_json(path, value):
    path.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tiny_model.py OUT_DIR")
    out = pathlib.Path(sys.argv[1])
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)

    tok = train_tokenizer()
    tokenizer_files(tmp, tok)
    vocab = tok.get_vocab_size()
    config = dict(CONFIG, vocab_size=vocab)
    write_json(tmp / "config.json", config)
    write_json(
        tmp / "generation_config.json",
        {"bos_token_id": CONFIG["bos_token_id"], "eos_token_id": CONFIG["eos_token_id"]},
    )
    w = weights(vocab)
    save_file(w, str(tmp / "model.safetensors"), metadata={"format": "pt"})
    write_gguf(tmp / "tiny.gguf", tok, w)
    write_think_model(tmp / "think", tok, w)

    params = sum(a.size for a in w.values())
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    print(f"{out}: {vocab} tokens, {params} parameters")


if __name__ == "__main__":
    main()
