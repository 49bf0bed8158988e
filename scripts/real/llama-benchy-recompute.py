#!/usr/bin/env python3
"""llama-benchy's own figures for runs that fire recorded.

    llama-benchy-recompute.py [--latency-ms MS] [--spread token-ids|usage] EVENTS... OUT_PREFIX

Each EVENTS file is one batch run as fire writes it (`arrivals --batch C --runs R | fire`).
Its requests are rebuilt as llama-benchy 0.4's `RequestResult`s, stamp for stamp (the send, the
first chunk of any kind, every chunk with text and its token count, the end, the usage), its
warm-up batches left out, and handed to llama-benchy's own `BenchmarkResults.add`, batch by
batch in batch order, one benchmark per file. Writes OUT_PREFIX.json (llama-benchy's
`--format json` report) and OUT_PREFIX.md (its Markdown table), so that `reduce` and
`table --style llama-bench` can be checked against llama-benchy's code on the same timings
(tests/fixtures/llama_benchy/README.md).

--spread says how a chunk's tokens get their stamps: `token-ids` (llama-benchy's branch when the
server sends `token_ids`, as vLLM does when asked: a chunk of k tokens spreads them from the
previous stamp to its own time) or `usage` (the branch for servers that send none: the usage
count spread evenly from the first chunk with text to the last). Needs llama-benchy on the
Python path (scripts/real/parity-llama-benchy.sh installs it in a venv).
"""
import argparse
import json
import sys

from llama_benchy.client import LLMClient, RequestResult
from llama_benchy.results import BenchmarkMetadata, BenchmarkResults

NS = 1e9


def params(header, tool):
    """The params of the header written by `tool`, the header itself or one upstream."""
    for h in [header] + header.get("upstream", []):
        if h.get("tool") == tool:
            return h.get("params", {})
    return {}


def load_run(path, spread):
    """The run's fire and arrivals params and its batches of RequestResults."""
    records = [json.loads(line) for line in open(path) if line.strip()]
    header = records[0]
    assert header["type"] == "header", f"{path}: no header on line 1"
    fire, arrivals = params(header, "fire"), params(header, "arrivals")
    sent, chunks, done = {}, {}, {}
    for r in records[1:]:
        if r["type"] == "sent":
            sent[r["id"]] = r["sent_ns"]
        elif r["type"] == "token" and not r.get("empty", False):
            chunks.setdefault(r["id"], []).append(r)
        elif r["type"] == "done":
            done[r["id"]] = r
    client = LLMClient(base_url="", api_key="", model_name="")
    batches = {}
    for rid in sorted(done):
        d = done[rid]
        if rid not in sent:
            continue  # never sent: llama-benchy has no such request
        res = RequestResult(start_ts=sent[rid] / NS)
        if d.get("first_event_ns") is not None:
            res.first_response_ts = d["first_event_ns"] / NS
        mine = chunks.get(rid, [])
        if mine:
            res.first_token_ts = mine[0]["at_ns"] / NS
        content = [
            {
                "text": "x",
                "timestamp": c["at_ns"] / NS,
                "token_ids": [0] * c["tokens"] if spread == "token-ids" else None,
            }
            for c in mine
        ]
        if d.get("prompt_tokens") is not None:
            res.prompt_tokens = d["prompt_tokens"]
        client._finalize_stream_tokens(res, content, d.get("completion_tokens"), None)
        res.end_ts = d["at_ns"] / NS
        if not d["ok"]:
            res.error = d.get("error") or d.get("error_kind") or "failed"
        batches.setdefault(d.get("batch", 0), []).append(res)
    return fire, arrivals, batches


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency-ms", type=float, default=None)
    ap.add_argument("--spread", choices=["token-ids", "usage"], default="token-ids")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    *events, prefix = args.files
    results = BenchmarkResults()
    latency_ms, model, top = 0.0, "", 1
    for path in events:
        fire, arrivals, batches = load_run(path, args.spread)
        latency_ms = args.latency_ms if args.latency_ms is not None else fire.get("net_latency_ms", 0.0)
        model = fire.get("model", "")
        pp, tg = arrivals["input_tokens"], arrivals["output_tokens"]
        depth, c = arrivals.get("depth", 0), arrivals["batch"]
        warm = arrivals.get("warmup_batches", 0)
        expected = pp + depth - fire.get("adapt_tokens", 0)
        runs = [batches[b] for b in sorted(batches) if b >= warm]
        results.add(model, pp, tg, depth, c, runs, latency_ms / 1000, expected)
        top = max(top, c)
    results.metadata = BenchmarkMetadata(
        version="0.4.0", timestamp="2026-01-01 00:00:00Z", latency_mode="api",
        latency_ms=latency_ms, model=model, prefix_caching_enabled=False, max_concurrency=top,
    )
    report = dict(results.metadata.model_dump())
    report["benchmarks"] = [run.model_dump() for run in results.runs]
    with open(prefix + ".json", "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    with open(prefix + ".md", "w") as f:
        f.write(results._generate_md_report(top) + "\n")


if __name__ == "__main__":
    sys.exit(main())
