//! The flag a misspelt long flag meant. clap suggests a flag by Jaro similarity, which misses
//! short names with two letters swapped (`--ulr` for `--url`: Jaro looks for matching letters
//! only within a window that is zero wide for three letters), and a tool that takes file names
//! then tells the user to pass the typo as one (`-- --ulr`). Where clap found nothing, the
//! closest flag by edit distance (adjacent swaps count as one edit) is suggested instead. Where
//! clap did find one, its tip to pass the typo as a value (which a tool with a trailing `--
//! COMMAND` gets beside it) is dropped: the flag is what was meant.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// `e`, or, for an unknown `--flag`, the same error with one tip: the flag clap found similar,
/// else the closest flag of `cmd`, in place of clap's tip to pass the typo as a value.
pub(crate) fn suggest(e: clap::Error, cmd: &clap::Command) -> clap::Error {
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let Some(ContextValue::String(typo)) = e.get(ContextKind::InvalidArg) else {
        return e;
    };
    let Some(name) = typo.strip_prefix("--") else {
        return e;
    };
    if let Some(ContextValue::String(similar)) = e.get(ContextKind::SuggestedArg) {
        return only_tip(&e, cmd, typo, similar.clone());
    }
    let mut built = cmd.clone();
    built.build();
    // Each shown flag's long name, then its shown aliases (arrivals' `--tg`).
    let longs = built
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .flat_map(|a| {
            let aliases = a.get_visible_aliases().unwrap_or_default();
            a.get_long().into_iter().chain(aliases)
        });
    let Some(meant) = closest(name, longs) else {
        return e;
    };
    only_tip(&e, cmd, typo, format!("--{meant}"))
}

/// `e` for `typo` again, with `meant` as its one tip.
fn only_tip(e: &clap::Error, cmd: &clap::Command, typo: &str, meant: String) -> clap::Error {
    let mut better = clap::Error::new(ErrorKind::UnknownArgument).with_cmd(cmd);
    better.insert(
        ContextKind::InvalidArg,
        ContextValue::String(typo.to_string()),
    );
    better.insert(ContextKind::SuggestedArg, ContextValue::String(meant));
    if let Some(usage) = e.get(ContextKind::Usage) {
        better.insert(ContextKind::Usage, usage.clone());
    }
    better
}

/// The long flag nearest `typo`, if one is near enough: one edit for names of up to four
/// letters, two for longer ones, and fewer edits than the typo has letters. The first of equals
/// wins (the order flags are declared in).
fn closest<'a>(typo: &str, longs: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let most = if typo.chars().count() <= 4 { 1 } else { 2 };
    let mut best: Option<(usize, &str)> = None;
    for long in longs {
        let d = edits(typo, long);
        if d <= most && d < typo.chars().count() && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, long));
        }
    }
    best.map(|(_, long)| long)
}

/// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// two adjacent letters, one edit each.
fn edits(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows[i][j]: the distance between a[..i] and b[..j]; three rows are all it needs.
    let mut before = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut last);
        std::mem::swap(&mut last, &mut row);
    }
    last[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_count_a_swap_of_neighbours_as_one() {
        assert_eq!(edits("ulr", "url"), 1);
        assert_eq!(edits("url", "url"), 0);
        assert_eq!(edits("ur", "url"), 1);
        assert_eq!(edits("uxl", "url"), 1);
        assert_eq!(edits("", "url"), 3);
        assert_eq!(edits("lru", "url"), 2);
        assert_eq!(edits("concurency", "concurrency"), 1);
    }

    #[test]
    fn the_closest_flag_within_reach_is_chosen() {
        let longs = ["url", "api", "model", "concurrency"];
        assert_eq!(closest("ulr", longs.into_iter()), Some("url"));
        assert_eq!(closest("aip", longs.into_iter()), Some("api"));
        assert_eq!(closest("modle", longs.into_iter()), Some("model"));
        assert_eq!(closest("zzz", longs.into_iter()), None);
        assert_eq!(
            closest("x", ["y"].into_iter()),
            None,
            "one letter is no clue"
        );
        assert_eq!(
            closest("lru", longs.into_iter()),
            None,
            "two edits in three letters"
        );
    }

    #[derive(clap::Parser)]
    struct Flags {
        #[arg(long)]
        url: Option<String>,
        #[arg(long, hide = true)]
        tgz: Option<String>,
        #[arg(long, visible_alias = "pp")]
        prompt_tokens: Option<u64>,
        files: Vec<String>,
    }

    #[test]
    fn a_missed_typo_gets_the_flag_in_place_of_the_value_tip() {
        use clap::CommandFactory;
        let cmd = Flags::command();
        let e = cmd
            .clone()
            .try_get_matches_from(["t", "--ulr", "x"])
            .unwrap_err();
        let e = suggest(e, &cmd);
        assert_eq!(e.kind(), ErrorKind::UnknownArgument);
        let shown = e.render().to_string();
        assert!(
            shown.contains("a similar argument exists: '--url'"),
            "{shown}"
        );
        assert!(!shown.contains("-- --ulr"), "{shown}");
        assert!(shown.contains("Usage: t"), "{shown}");
        // A flag's shown alias is a flag too.
        let e = cmd.clone().try_get_matches_from(["t", "--pq"]).unwrap_err();
        let shown = suggest(e, &cmd).render().to_string();
        assert!(
            shown.contains("a similar argument exists: '--pp'"),
            "{shown}"
        );
        // A typo near nothing, or near a hidden flag alone, keeps clap's words.
        for typo in ["--zzzz", "--tzg"] {
            let e = cmd.clone().try_get_matches_from(["t", typo]).unwrap_err();
            let before = e.render().to_string();
            assert!(before.contains(&format!("-- {typo}")), "{before}");
            assert_eq!(suggest(e, &cmd).render().to_string(), before);
        }
    }
}
