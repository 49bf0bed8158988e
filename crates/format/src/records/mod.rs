//! The typed records of the stream. Each struct is one `"type"` of line; [`Record`] is the union
//! that readers return and writers take, and [`RecordType`] names the types without their
//! contents. Both come from the one list in this file, so a new record type is added in one
//! place. Field names carry their unit.

mod client;
mod events;
mod header;
mod interval;
mod llama_benchy;
mod parts;
mod result;
mod schedule;
mod server_metrics;
mod spread;
mod stamp;
mod summary;
mod sweep;
mod verdict;
mod window;

pub use client::Client;
pub use events::{Done, ErrorKind, Sent, Stall, Token};
pub use header::{Header, Shard};
pub use interval::Interval;
pub use llama_benchy::{LlamaBenchy, MeanStd, SpreadFigure};
pub use parts::{
    clock_skew, parts_failures, spread_limit_ms, Part, PartStatus, SPREAD_FLOOR_MS, SPREAD_FRACTION,
};
pub use result::ResultRecord;
pub use schedule::{Grouping, LoopMode, Phase, Request, Salt, Schedule, MAX_IN_FLIGHT};
pub use server_metrics::{
    parse_exposition, series_name, sum_series, ScrapePhase, ServerMetrics, ENGINE_PREFIXES,
};
pub use spread::AcrossRuns;
pub use stamp::Stamp;
pub use summary::{parse_stat_key, stat_key, MetricState, StatName, Summary};
pub use sweep::{
    Bracket, Knee, PointStatus, SloTerm, SloValue, Sweep, SweepEnd, SweepMode, SweepPoint,
};
pub use verdict::{
    ended_as, server_failures, Check, Verdict, RUN_ENDED_KINDS, RUN_ENDS, SERVER_REQUESTS_SLACK,
    SERVER_REQUESTS_TOLERANCE, SERVER_TOKENS_TOLERANCE, UNFINISHED,
};
pub use window::MeasuredWindow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Declares [`Record`], [`RecordType`] and everything that must list every record type, from one
/// list: the variant, its type, its wire name, which tool writes it and which reads it.
macro_rules! record_types {
    ($(
        $(#[$doc:meta])*
        $variant:ident($ty:ty) = $name:literal, written by $writer:literal, read by $reader:literal;
    )*) => {
        /// One line of a tokenpipe stream, tagged by its `"type"` field.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(tag = "type")]
        pub enum Record {
            $(
                $(#[$doc])*
                #[serde(rename = $name)]
                $variant($ty),
            )*
        }

        /// The kinds of record, without their contents: what a reader asks for.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RecordType {
            $( $(#[$doc])* $variant, )*
        }

        impl RecordType {
            /// Every record type this build knows, in the order of the format's documentation.
            pub const ALL: &'static [RecordType] = &[$(RecordType::$variant),*];

            /// The `"type"` value on the wire.
            pub fn name(self) -> &'static str {
                match self { $(RecordType::$variant => $name,)* }
            }

            /// The type with this wire name, if this build knows it.
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $($name => Some(RecordType::$variant),)* _ => None }
            }

            /// The tool that writes records of this type, for messages about misplaced input.
            pub fn writer(self) -> &'static str {
                match self { $(RecordType::$variant => $writer,)* }
            }

            /// The tool that reads records of this type.
            pub fn reader(self) -> &'static str {
                match self { $(RecordType::$variant => $reader,)* }
            }

            /// Re-parses `text` as this type's body alone, so that a field error names the field
            /// (an internally tagged enum loses the path); `whole` is the whole record's error, for
            /// a fault the body alone does not show.
            pub(crate) fn field_error(self, text: &[u8], whole: &serde_json::Error) -> String {
                match self { $(RecordType::$variant => crate::json_error::path_error::<$ty>(text, whole),)* }
            }

            pub(crate) fn bit(self) -> u32 {
                1 << (self as u32)
            }
        }

        impl Record {
            /// The type of this record.
            pub fn record_type(&self) -> RecordType {
                match self { $(Record::$variant(_) => RecordType::$variant,)* }
            }
        }
    };
}

record_types! {
    /// Provenance; the first line of a stream, and the start of every further run in it.
    Header(Header) = "header", written by "every tool", read by "every tool";
    /// How `fire` should pace the requests that follow.
    Schedule(Schedule) = "schedule", written by "arrivals", read by "fire";
    /// One request to send.
    Request(Request) = "request", written by "arrivals", read by "fire";
    /// A request left the client.
    Sent(Sent) = "sent", written by "fire", read by "reduce";
    /// A streamed event that carried content arrived.
    Token(Token) = "token", written by "fire", read by "reduce";
    /// A request ended, successfully or not; exactly one per request.
    Done(Done) = "done", written by "fire", read by "reduce";
    /// `fire`'s output was blocked by a slow reader for a while.
    Stall(Stall) = "stall", written by "fire", read by "reduce";
    /// Metrics over a run.
    Summary(Box<Summary>) = "summary", written by "reduce", read by "table";
    /// The simulated server's own record of when it sent a request's tokens.
    Stamp(Stamp) = "stamp", written by "simserve", read by "the benchmarks";
    /// `fire`'s account of its own cost and timing, last in its output.
    Client(Client) = "client", written by "fire", read by "reduce";
    /// One request's values (`reduce --per-request`), before its run's summary.
    Result(Box<ResultRecord>) = "result", written by "reduce", read by "jq or a notebook";
    /// What happened in one slice of a run's clock (`reduce --every`).
    Interval(Interval) = "interval", written by "reduce", read by "people watching a run";
    /// A scrape of the server's `/metrics` before or after the run (`fire --server-metrics`).
    ServerMetrics(ServerMetrics) = "server_metrics", written by "fire", read by "reduce";
    /// What a sweep over one load variable found: capacity, bracket, knee, every point.
    Sweep(Box<Sweep>) = "sweep", written by "sweep", read by "table (skips it), jq or a notebook";
}

impl Record {
    /// The `"type"` value of this record, for messages.
    pub fn type_name(&self) -> &'static str {
        self.record_type().name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_are_serde_names_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for t in RecordType::ALL {
            assert!(seen.insert(t.name()), "{} twice", t.name());
            assert_eq!(RecordType::from_name(t.name()), Some(*t));
            assert!((*t as u32) < 32, "the reader's filter is a u32 bit set");
        }
        let token = Record::Token(Token {
            id: 1,
            at_ns: 2,
            tokens: 3,
            empty: false,
        });
        let text = serde_json::to_string(&token).unwrap();
        assert!(text.starts_with("{\"type\":\"token\""), "{text}");
        assert_eq!(token.type_name(), "token");
    }
}
