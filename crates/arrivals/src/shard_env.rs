//! `--shard auto`: which part of the plan this process writes, from the environment its launcher
//! set (docs/arrivals.md, "Shards"), so that one command line serves every host of a Slurm job,
//! a Kubernetes Indexed Job or a GNU parallel run.
//!
//! The launchers are tried innermost first: GNU parallel started inside a Slurm job numbers its
//! own jobs, while the job's `SLURM_PROCID` is the same for all of them.

use crate::shard::ShardSpec;

/// The explicit variable: `I/N` as `--shard` takes it.
pub const SHARD_VAR: &str = "TOKENPIPE_SHARD";
/// The count for launchers that give an index alone (Kubernetes, GNU parallel).
pub const SHARDS_VAR: &str = "TOKENPIPE_SHARDS";

/// One launcher's variables: where the index is, whether it counts from 1, where the count is.
struct Launcher {
    index: &'static str,
    from_one: bool,
    count: &'static str,
}

/// The launchers after [`SHARD_VAR`], in the order they are tried.
const LAUNCHERS: &[Launcher] = &[
    Launcher {
        index: "PARALLEL_SEQ",
        from_one: true,
        count: SHARDS_VAR,
    },
    Launcher {
        index: "JOB_COMPLETION_INDEX",
        from_one: false,
        count: SHARDS_VAR,
    },
    Launcher {
        index: "SLURM_PROCID",
        from_one: false,
        count: "SLURM_NTASKS",
    },
];

/// Why the environment gives no shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AutoError {
    /// None of the variables is set.
    #[error("--shard auto: none of {SHARD_VAR} (I/N), PARALLEL_SEQ, JOB_COMPLETION_INDEX or SLURM_PROCID is set; give --shard I/N, or set {SHARD_VAR}, or {SHARDS_VAR} with PARALLEL_SEQ or JOB_COMPLETION_INDEX")]
    NoLauncher,
    /// An index without its count.
    #[error("--shard auto: {index} is set but {count} is not; set {count} to the number of parts")]
    NoCount {
        /// The index variable found.
        index: &'static str,
        /// The count variable missing.
        count: &'static str,
    },
    /// A variable that does not hold what it should.
    #[error("--shard auto: {var}={value:?}: {problem}")]
    Bad {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// The shard the environment `get` gives, and the variables it came from (`SLURM_PROCID/SLURM_NTASKS`).
pub fn from_env(get: &dyn Fn(&str) -> Option<String>) -> Result<(ShardSpec, String), AutoError> {
    if let Some(value) = get(SHARD_VAR) {
        let spec = value.parse::<ShardSpec>().map_err(|e| AutoError::Bad {
            var: SHARD_VAR,
            value: value.clone(),
            problem: e.to_string(),
        })?;
        return Ok((spec, SHARD_VAR.to_string()));
    }
    for l in LAUNCHERS {
        let Some(raw_index) = get(l.index) else {
            continue;
        };
        let whole = |var: &'static str, value: &str| {
            value.trim().parse::<u64>().map_err(|_| AutoError::Bad {
                var,
                value: value.to_string(),
                problem: "not a whole number".into(),
            })
        };
        let mut index = whole(l.index, &raw_index)?;
        if l.from_one {
            index = index.checked_sub(1).ok_or_else(|| AutoError::Bad {
                var: l.index,
                value: raw_index.clone(),
                problem: "counts from 1".into(),
            })?;
        }
        let raw_count = get(l.count).ok_or(AutoError::NoCount {
            index: l.index,
            count: l.count,
        })?;
        let count = whole(l.count, &raw_count)?;
        let spec = format!("{index}/{count}")
            .parse::<ShardSpec>()
            .map_err(|e| AutoError::Bad {
                var: l.index,
                value: raw_index.clone(),
                problem: format!("with {}={raw_count}: {e}", l.count),
            })?;
        return Ok((spec, format!("{}/{}", l.index, l.count)));
    }
    Err(AutoError::NoLauncher)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    fn shard(pairs: &[(&str, &str)]) -> Result<(u64, u64, String), AutoError> {
        from_env(&env(pairs)).map(|(s, from)| (s.index, s.count, from))
    }

    #[test]
    fn each_launcher_gives_its_index_and_count() {
        let slurm = shard(&[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "3")]).unwrap();
        assert_eq!(slurm, (2, 3, "SLURM_PROCID/SLURM_NTASKS".into()));
        let k8s = shard(&[("JOB_COMPLETION_INDEX", "0"), ("TOKENPIPE_SHARDS", "4")]).unwrap();
        assert_eq!((k8s.0, k8s.1), (0, 4));
        let parallel = shard(&[("PARALLEL_SEQ", "3"), ("TOKENPIPE_SHARDS", "3")]).unwrap();
        assert_eq!((parallel.0, parallel.1), (2, 3));
        let explicit = shard(&[("TOKENPIPE_SHARD", "1/2"), ("SLURM_PROCID", "0")]).unwrap();
        assert_eq!((explicit.0, explicit.1), (1, 2));
        // GNU parallel inside a Slurm job: parallel numbers the jobs.
        let inner = shard(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
            ("PARALLEL_SEQ", "2"),
            ("TOKENPIPE_SHARDS", "2"),
        ])
        .unwrap();
        assert_eq!((inner.0, inner.1), (1, 2));
    }

    #[test]
    fn a_missing_or_bad_variable_is_named() {
        assert_eq!(shard(&[]).unwrap_err(), AutoError::NoLauncher);
        assert!(AutoError::NoLauncher.to_string().contains("SLURM_PROCID"));
        assert_eq!(
            shard(&[("JOB_COMPLETION_INDEX", "1")]).unwrap_err(),
            AutoError::NoCount {
                index: "JOB_COMPLETION_INDEX",
                count: "TOKENPIPE_SHARDS"
            }
        );
        let bad = shard(&[("SLURM_PROCID", "x"), ("SLURM_NTASKS", "2")]).unwrap_err();
        assert!(bad.to_string().contains("SLURM_PROCID=\"x\""), "{bad}");
        let beyond = shard(&[("SLURM_PROCID", "3"), ("SLURM_NTASKS", "3")]).unwrap_err();
        assert!(
            beyond.to_string().contains("3/3 does not exist"),
            "{beyond}"
        );
        let zero = shard(&[("PARALLEL_SEQ", "0"), ("TOKENPIPE_SHARDS", "2")]).unwrap_err();
        assert!(zero.to_string().contains("counts from 1"), "{zero}");
    }
}
