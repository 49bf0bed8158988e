//! Every integration test, in one binary: one link for the whole suite instead of one per file.
//!
//! A module per area. Most drive the real binaries (`CARGO_BIN_EXE_*`) through real OS pipes
//! against `simserve` on a free loopback port (`common`); `sim` and the `*_snapshots`,
//! `*_statistics` and `format_compat` modules call the library crates directly. The `real_*`
//! modules need a real engine and are ignored unless `make test-real` runs them, selected by
//! their module path (`cargo test --test it real_vllm:: -- --ignored`).
//!
//! Unit tests stay beside the code they test (docs/architecture.md, "Tests").

mod common;

mod architecture;
mod arrivals_shapes;
mod arrivals_signals;
mod arrivals_statistics;
mod arrivals_tokenizer;
mod arrivals_trace;
mod cluster_merge;
mod cluster_start;
mod datasets;
mod docs_examples;
mod failure_kinds;
mod failures;
mod faults_e2e;
mod fire_benchy;
mod fire_credentials;
mod fire_limits;
mod fire_messages;
mod fire_output;
mod fire_protocol;
mod fire_selfcheck;
mod fire_stop;
mod fire_transport;
mod fire_workloads;
mod flag_typos;
mod format_compat;
mod fuzz_regressions;
mod generated;
mod implausible_values;
mod library;
mod llama_benchy;
mod llama_benchy_fixture;
mod pipeline;
mod real_llama;
mod real_llama_cpp_python;
mod real_vllm;
mod recipes;
mod recipes_matrix;
mod reduce_outcomes;
mod runs_and_shards;
mod server_faults;
mod server_metrics;
mod signals;
mod signals_pipeline;
mod sim;
mod simserve_engine;
mod simserve_prompt;
mod simserve_scale;
mod simserve_stamps;
mod sweep;
mod sweep_stops;
mod table_capacity_chart;
mod table_charts;
mod table_input_cap;
mod table_layouts;
mod table_pivot;
mod table_snapshots;
mod table_styles;
mod table_vllm;
mod timing;
mod verdict;
mod verdict_e2e;
mod vllm_compat;
