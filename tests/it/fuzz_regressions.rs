//! Inputs the fuzz targets (fuzz/) found, through the real binaries: each names what it broke
//! and checks the tool now answers it as bad input with a message that says where.

use crate::common;
use common::*;

/// A vLLM result file with a negative TTFT (`ttfts[5]` = -0.095 s) whose request was sent late
/// enough (2.1 s) that the chunk still fell after the run's start: the importer put a token
/// before its send, and reduce refused the stream it made itself with "line 19: request 5:
/// token record for a request that was never sent", naming a line the user never wrote. The
/// `vllm_import` target's first long run found it (fuzz/seeds/vllm_import/negative-ttft).
#[test]
fn a_negative_ttft_in_a_vllm_file_is_refused_naming_the_field() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/fuzz/vllm-negative-ttft.json"
    );
    let out = run(&cmd("reduce", &["--from-vllm", file]), b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr
            .contains(r#"field "ttfts"[5]: expected a number of seconds of 0 or more, got -0.095"#),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing written for a file refused");
}
