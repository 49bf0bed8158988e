//! Other benchmark tools' layouts (`--style`): what they print, reproduced line for line so that
//! a result can be pasted beside theirs. Each gives a [`crate::laid_out::LaidOut`] from the
//! report alone, as this tool's layouts do, and has no layout flags: [`vllm`] lays each run out
//! as the result block of `vllm bench serve` (preformatted, the same in every text format),
//! [`llama_bench`] as llama-benchy's decode and prefill tables (written as Markdown).

pub(crate) mod llama_bench;
pub(crate) mod vllm;
