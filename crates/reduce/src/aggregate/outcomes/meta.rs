//! Run metadata (`reduce --meta model=llama-70b --meta gpu=h100`): what was measured, as the
//! user names it, carried on every summary so a summary read alone says what it describes.
//! The command line reads the pairs.

use crate::aggregate::{Aggregator, RunSpan};
use crate::error::RequestError;
use crate::request::RequestResult;
use std::collections::BTreeMap;
use tokenpipe_format::{Record, Summary};

/// Writes the metadata into the run's summary.
#[derive(Debug)]
pub struct Meta(pub BTreeMap<String, String>);

impl Aggregator for Meta {
    fn add(&mut self, _r: &RequestResult) -> Result<(), RequestError> {
        Ok(())
    }

    fn finish(&mut self, _span: &RunSpan, summary: &mut Summary, _out: &mut Vec<Record>) {
        summary.meta = self.0.clone();
    }
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
