//! A misspelt long flag, in every tool: the error names the flag that was meant, even where
//! clap's own similarity measure misses it (a short name with two letters swapped, `--ulr`), and
//! never tells the user to pass the typo as a file name (`-- --ulr`).

use crate::common;
use common::*;

#[test]
fn a_misspelt_flag_suggests_the_flag_meant_in_every_tool() {
    for (tool, typo, meant) in [
        ("fire", "--ulr", "--url"),
        ("fire", "--aip", "--api"),
        ("arrivals", "--gt", "--tg"),
        ("reduce", "--sol", "--slo"),
        ("table", "--tpo", "--top"),
        ("simserve", "--hsot", "--host"),
        // clap finds this one itself, but a trailing `-- COMMAND` adds its tip to pass the
        // typo as a value, which is dropped.
        ("sweep", "--sacn", "--scan"),
        ("sweep", "--fnid", "--find"),
    ] {
        let out = run(&cmd(tool, &[typo, "x"]), b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tool} {typo}: {stderr}");
        assert!(
            stderr.contains(&format!("unexpected argument '{typo}' found")),
            "{tool} {typo}: {stderr}"
        );
        assert!(
            stderr.contains(&format!("tip: a similar argument exists: '{meant}'")),
            "{tool} {typo}: {stderr}"
        );
        assert!(!stderr.contains("use '-- "), "{tool} {typo}: {stderr}");
        assert!(stderr.contains("Usage:"), "{tool} {typo}: {stderr}");
    }
}

#[test]
fn a_flag_like_no_other_keeps_the_tip_for_a_file_of_that_name() {
    let out = run(&cmd("fire", &["--zzzzzz"]), b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("use '-- --zzzzzz'"), "{stderr}");
    assert!(!stderr.contains("similar argument"), "{stderr}");
}
