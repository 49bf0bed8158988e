//! The values `--api` and `--stream-usage` take: the library's [`Api`] and [`StreamUsage`],
//! named for clap here so that the library knows no clap. Each name and help line is the one the
//! help, the man page and the completions show (`tests/it/generated.rs` compares them).

use crate::api::{Api, StreamUsage};
use crate::benchy::LatencyMode;
use clap::builder::PossibleValue;
use clap::ValueEnum;

impl ValueEnum for Api {
    fn value_variants<'a>() -> &'a [Self] {
        &[Api::Completions, Api::Chat]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Api::Completions => {
                PossibleValue::new("completions").help("`POST {url}/completions` with `prompt`")
            }
            Api::Chat => PossibleValue::new("chat")
                .help("`POST {url}/chat/completions` with one user message"),
        })
    }
}

impl ValueEnum for LatencyMode {
    fn value_variants<'a>() -> &'a [Self] {
        &[LatencyMode::Api, LatencyMode::Generation, LatencyMode::None]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            LatencyMode::Api => PossibleValue::new("api")
                .help("Mean of three `GET {url}/models`, each to its whole answer (llama-benchy's default)"),
            LatencyMode::Generation => PossibleValue::new("generation")
                .help("Mean of three streamed one-token requests on the run's API, each to its first bytes"),
            LatencyMode::None => PossibleValue::new("none").help("Not measured: 0 ms"),
        })
    }
}

impl ValueEnum for StreamUsage {
    fn value_variants<'a>() -> &'a [Self] {
        &[StreamUsage::On, StreamUsage::Continuous, StreamUsage::Off]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            StreamUsage::On => PossibleValue::new("on").help(
                "`stream_options: {include_usage: true}`: one usage chunk at the end (OpenAI, vLLM, SGLang)",
            ),
            StreamUsage::Continuous => PossibleValue::new("continuous").help(
                "Also `continuous_usage_stats: true`: usage on every chunk (vLLM), so each event's token count is exact even when one event carries several tokens",
            ),
            StreamUsage::Off => PossibleValue::new("off")
                .help("No `stream_options` member at all, for servers that refuse it"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each value's name is the one the header records for it (serde's snake case), so that
    /// `--api chat` is written as `"api": "chat"`.
    #[test]
    fn names_are_the_recorded_ones() {
        for api in Api::value_variants() {
            let name = api.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(serde_json::json!(api), serde_json::json!(name));
            assert_eq!(Api::from_str(&name, false), Ok(*api));
        }
        for mode in LatencyMode::value_variants() {
            let name = mode.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(serde_json::json!(mode), serde_json::json!(name));
        }
        for usage in StreamUsage::value_variants() {
            let name = usage.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(serde_json::json!(usage), serde_json::json!(name));
            assert_eq!(StreamUsage::from_str(&name, false), Ok(*usage));
        }
    }
}
