//! The plan a part belongs to, in a canonical form: two parts are of one plan when their plans
//! are equal as values, whatever tool last wrote the line (`jq -c .` writes `1.0` as `1`).

use serde_json::{Map, Number, Value};
use tokenpipe_format::Header;

/// The plan a sharded run is part of, and how many parts it has; `None` for a run that is not
/// a shard. The plan is the nearest `arrivals` header of the chain: its `params` and `seed`
/// with the shard count, as canonical JSON ([`canonical`]).
pub fn plan_key(header: &Header) -> Option<(String, u32)> {
    let shard = header.shard?;
    let plan = header
        .find("arrivals")
        .or_else(|| header.upstream.first())
        .unwrap_or(header);
    let key = serde_json::json!({
        "params": plan.params,
        "seed": plan.seed,
        "count": shard.count,
    });
    Some((canonical(&key).to_string(), shard.count))
}

/// `value` with every number that is a whole number written as an integer (`1.0` → `1`,
/// `-0.0` → `0`) and object members in name order, so that equal values give equal text.
pub fn canonical(value: &Value) -> Value {
    match value {
        Value::Number(n) => Value::Number(canonical_number(n)),
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            let mut out = Map::new();
            for (k, v) in sorted {
                out.insert(k.clone(), canonical(v));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// A number by its value: a whole float within ±2^53 (where floats hold every integer) as
/// that integer, anything else as it is.
fn canonical_number(n: &Number) -> Number {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    match n.as_f64() {
        Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() <= EXACT => {
            if f < 0.0 {
                Number::from(f as i64)
            } else {
                Number::from(f as u64)
            }
        }
        _ => n.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> String {
        canonical(&serde_json::from_str::<Value>(text).unwrap()).to_string()
    }

    #[test]
    fn numbers_compare_by_value_and_members_by_name() {
        assert_eq!(
            key(r#"{"rate_per_s":1.0,"burstiness":1,"x":[2.0,-0.0]}"#),
            key(r#"{"x":[2,0],"burstiness":1.0,"rate_per_s":1}"#)
        );
        assert_ne!(key(r#"{"rate_per_s":1.5}"#), key(r#"{"rate_per_s":1}"#));
        assert_ne!(key(r#"{"a":"1"}"#), key(r#"{"a":1}"#));
        // Past 2^53 a float is not an integer's exact stand-in: kept as it is.
        assert_ne!(key("1152921504606846976.0"), key("1152921504606846976"));
    }

    #[test]
    fn a_part_through_jq_keeps_its_plan() {
        let line = r#"{"type":"header","format_major":1,"tool":"fire","tool_version":"0","run_id":"f","shard":{"index":0,"count":2},"upstream":[{"format_major":1,"tool":"arrivals","tool_version":"0","run_id":"a","seed":3,"params":{"rate_per_s":5.0,"burstiness":1.0}}]}"#;
        let jq = line.replace("5.0", "5").replace("1.0", "1");
        let a: Header = serde_json::from_str(line).unwrap();
        let b: Header = serde_json::from_str(&jq).unwrap();
        assert_eq!(plan_key(&a), plan_key(&b));
        assert!(plan_key(&a).is_some());
    }
}
