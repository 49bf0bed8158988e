//! Run metadata (`reduce --meta model=llama-70b --meta gpu=h100`): what was measured, as the
//! user names it, carried on every summary so a summary read alone says what it describes.

use crate::aggregate::{Aggregator, RunSpan};
use crate::request::RequestResult;
use std::collections::BTreeMap;
use tokenpipe_format::{Record, Summary};

/// Writes the metadata into the run's summary.
#[derive(Debug)]
pub struct Meta(pub BTreeMap<String, String>);

impl Aggregator for Meta {
    fn add(&mut self, _r: &RequestResult) -> Result<(), String> {
        Ok(())
    }

    fn finish(&mut self, _span: &RunSpan, summary: &mut Summary, _out: &mut Vec<Record>) {
        summary.meta = self.0.clone();
    }
}

/// Reads one `KEY=VALUE` pair; the value is everything after the first `=`.
pub fn parse_meta_pair(s: &str) -> Result<(String, String), String> {
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE such as model=llama-70b, got `{s}`"))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("the key is empty in `{s}`"));
    }
    Ok((key.to_string(), value.to_string()))
}

/// The pairs as a map; a key given twice is refused, since one of its values would be lost.
pub fn collect_meta(pairs: &[(String, String)]) -> Result<BTreeMap<String, String>, String> {
    let mut meta = BTreeMap::new();
    for (key, value) in pairs {
        if meta.insert(key.clone(), value.clone()).is_some() {
            return Err(format!(
                "--meta: `{key}` is given twice; give each key once"
            ));
        }
    }
    Ok(meta)
}

/// Puts the metadata into a reduce header's `params` under `meta`, so the chain of headers
/// that reaches a table records it too; nothing when there is none.
pub fn add_to_header(header: &mut tokenpipe_format::Header, meta: &BTreeMap<String, String>) {
    if meta.is_empty() {
        return;
    }
    let object = meta
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
        .collect();
    header
        .params
        .insert("meta".into(), serde_json::Value::Object(object));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_split_at_the_first_equals_and_keys_are_unique() {
        assert_eq!(
            parse_meta_pair("engine=vllm --tp=2"),
            Ok(("engine".into(), "vllm --tp=2".into()))
        );
        assert_eq!(parse_meta_pair("note="), Ok(("note".into(), String::new())));
        assert!(parse_meta_pair("model").is_err());
        assert!(parse_meta_pair("=x").is_err());
        let pairs = [
            ("gpu".to_string(), "h100".to_string()),
            ("gpu".to_string(), "a100".to_string()),
        ];
        let err = collect_meta(&pairs).unwrap_err();
        assert!(err.contains("`gpu` is given twice"), "{err}");
        assert_eq!(collect_meta(&pairs[..1]).unwrap().len(), 1);
    }
}
