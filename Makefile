# tokenpipe: build, test, demo, install. `make help` lists the targets.

SHELL   := bash
PREFIX  ?= /usr/local
DESTDIR ?=
CARGO   ?= cargo
BINS    := arrivals fire reduce table simserve sweep
RELEASE := target/release

# The real-engine tests' cache (scripts/real/common.sh): venv, builds, the tiny model, servers.
REAL_DIR ?= $(or $(TOKENPIPE_REAL_DIR),$(HOME)/.cache/tokenpipe-real)
export TOKENPIPE_REAL_DIR := $(REAL_DIR)

SECONDS ?= 10

.PHONY: help build test bench-build test-cluster fuzz test-real test-real-llama test-real-llama-cpp-python test-real-vllm lint demo demo-recipes bench soak generated man completions schema install uninstall clean

help:
	@echo "make build        release binaries in $(RELEASE)/"
	@echo "make test         every test (unit, integration through real pipes, generated files)"
	@echo "make test-cluster the cluster recipes under real Slurm on three network-namespace hosts (root; installs slurm-wlm and munge; docs/cluster.md)"
	@echo "make test-real    the whole pipe against real engines serving a tiny local model (docs/real-engines.md)"
	@echo "make test-real-llama  the same against llama.cpp's llama-server alone"
	@echo "make test-real-llama-cpp-python  the same against llama-cpp-python's server, which cuts streams"
	@echo "make test-real-vllm   the same against vLLM's CPU build alone"
	@echo "make demo         start the simulated server, run the whole pipe against it, print the table"
	@echo "make demo-recipes every recipe in recipes/ against the simulated server, shortened (results/demo-recipes/)"
	@echo "make fuzz         every fuzz target of fuzz/ for SECONDS each (default 10; installs cargo-fuzz and nightly when missing), executions per target"
	@echo "make bench        measure fire's own timing error and CPU cost against a floor client, its parsing speed, arrivals' output rate, and reduce's events per second and memory (see BENCHMARKS.md)"
	@echo "make soak         an hour at 1,000 streams against the simulated server, fire's and reduce's memory every 10 s into results/soak/ (SOAK_SECONDS=, SOAK_STREAMS=; see BENCHMARKS.md)"
	@echo "make bench-build  build the benchmarks without running them (CI does)"
	@echo "make generated    regenerate man/, completions/ and docs/schema.json from the binaries"
	@echo "make install      install binaries, man pages and completions under DESTDIR/PREFIX"
	@echo "make lint         rustfmt and clippy, warnings as errors"

build:
	$(CARGO) build --release --locked --bins

# Ends with one total line over every test binary, since cargo's own last line is the summary of
# whichever binary ran last.
test:
	@mkdir -p target
	@set -o pipefail; $(CARGO) test --workspace --locked 2>&1 | tee target/test.log
	@awk '/^test result:/ { passed += $$4; failed += $$6 } \
	  END { printf "tests: %d passed, %d failed\n", passed, failed; exit (failed > 0 || passed == 0) }' target/test.log

# The cluster recipes (recipes/cluster/, docs/cluster.md) under real Slurm: three hosts and a
# server made of network namespaces on a blackholed private subnet, torn down whatever happens.
# Needs root (the Slurm steps are skipped with a message without it); installs slurm-wlm and
# munge when missing. It runs the debug binaries `make test` builds: it checks what the recipes
# and the merge do, not speed (`make build && MEASURE=1 scripts/cluster/test.sh target/release`
# measures BENCHMARKS.md's "Cluster" figures).
test-cluster:
	$(CARGO) build --locked --bins
	scripts/cluster/test.sh target/debug

# Real engines (docs/real-engines.md): each target installs what it needs under $(REAL_DIR)
# (skipped when there), makes the tiny model, starts the server on a free loopback port, runs
# its ignored tests with the server's URL, and stops the server whatever the tests did.
test-real: test-real-llama test-real-llama-cpp-python test-real-vllm

test-real-llama:
	scripts/real/tiny-model.sh
	scripts/real/llama-server.sh install
	scripts/real/llama-server.sh start >/dev/null
	@status=0; \
	  TOKENPIPE_LLAMA_URL=$$(scripts/real/llama-server.sh url) TOKENPIPE_TINY_DIR=$(REAL_DIR)/tiny \
	  $(CARGO) test --locked --test it real_llama:: -- --ignored --test-threads=1 || status=$$?; \
	  scripts/real/llama-server.sh stop; exit $$status

test-real-llama-cpp-python:
	scripts/real/tiny-model.sh
	scripts/real/llama-cpp-python.sh install
	scripts/real/llama-cpp-python.sh start >/dev/null
	@status=0; \
	  TOKENPIPE_LCP_URL=$$(scripts/real/llama-cpp-python.sh url) TOKENPIPE_TINY_DIR=$(REAL_DIR)/tiny \
	  $(CARGO) test --locked --test it real_llama_cpp_python:: -- --ignored --test-threads=1 || status=$$?; \
	  scripts/real/llama-cpp-python.sh stop; exit $$status

test-real-vllm:
	scripts/real/tiny-model.sh
	scripts/real/vllm.sh install
	scripts/real/vllm.sh start >/dev/null
	@status=0; \
	  TOKENPIPE_VLLM_URL=$$(scripts/real/vllm.sh url) TOKENPIPE_TINY_DIR=$(REAL_DIR)/tiny \
	  $(CARGO) test --locked --test it real_vllm:: -- --ignored --test-threads=1 || status=$$?; \
	  scripts/real/vllm.sh stop; exit $$status

# cargo fuzz (libFuzzer, nightly) over every parser of outside input: fuzz/ is a workspace of
# its own that `build` and `test` never build. Seeds, figures and findings: BENCHMARKS.md.
fuzz:
	scripts/fuzz.sh $(SECONDS)

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

demo: build
	scripts/demo.sh $(RELEASE)

# A benchmark, not a test: asserts nothing; BENCHMARKS.md keeps what it showed.
soak: build
	scripts/soak.sh $(RELEASE)

demo-recipes: build
	scripts/demo-recipes.sh $(RELEASE)

# The benchmarks built, not run, in the test profile (sharing the test build's dependencies), so
# that a change cannot break them unseen; CI runs it after `make test`.
bench-build:
	$(CARGO) test --workspace --locked --benches --no-run

bench:
	$(CARGO) bench --locked --bench fire_overhead
	$(CARGO) bench --locked --bench arrivals_throughput
	$(CARGO) bench --locked --bench sse_parse
	$(CARGO) bench --locked --bench reduce_throughput
	$(CARGO) bench --locked --bench simserve_scale

generated: man completions schema

man: build
	@mkdir -p man
	@for b in $(BINS); do $(RELEASE)/$$b --generate man > man/$$b.1; done

completions: build
	@mkdir -p completions
	@for b in $(BINS); do \
	  $(RELEASE)/$$b --generate complete-bash > completions/$$b.bash; \
	  $(RELEASE)/$$b --generate complete-zsh > completions/_$$b; \
	  $(RELEASE)/$$b --generate complete-fish > completions/$$b.fish; \
	done

schema: build
	@mkdir -p docs
	$(RELEASE)/reduce --generate schema > docs/schema.json

install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	  $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	@for b in $(BINS); do \
	  install -m 755 $(RELEASE)/$$b $(DESTDIR)$(PREFIX)/bin/$$b; \
	  install -m 644 man/$$b.1 $(DESTDIR)$(PREFIX)/share/man/man1/$$b.1; \
	  install -m 644 completions/$$b.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$b; \
	  install -m 644 completions/_$$b $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_$$b; \
	  install -m 644 completions/$$b.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/$$b.fish; \
	done

uninstall:
	@for b in $(BINS); do \
	  rm -f $(DESTDIR)$(PREFIX)/bin/$$b $(DESTDIR)$(PREFIX)/share/man/man1/$$b.1 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$b \
	    $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_$$b \
	    $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/$$b.fish; \
	done

clean:
	$(CARGO) clean
