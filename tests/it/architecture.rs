//! The layers docs/architecture.md draws, checked on the sources: which crate may depend on
//! which (format ← cli ← the stages, no stage on another; sweep above them, on reduce's
//! library alone), and no import circle between the
//! top-level modules of any crate. A circle is found from the `crate::…` paths each module's
//! code names (comments and `#[cfg(test)]` modules left out), the way a reader follows them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's crates by directory, with the tokenpipe crates each may depend on.
const LAYERS: &[(&str, &[&str])] = &[
    ("format", &[]),
    ("cli", &["format"]),
    ("arrivals", &["format", "cli"]),
    ("fire", &["format", "cli"]),
    ("reduce", &["format", "cli"]),
    ("table", &["format", "cli"]),
    ("sim", &["format", "cli"]),
    // A layer above the stages: it runs the pipe as a command and reduces what it writes.
    ("sweep", &["format", "cli", "reduce"]),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let crates_dir = root().join("crates");
    let mut seen = BTreeSet::new();
    for entry in std::fs::read_dir(&crates_dir).unwrap() {
        let dir = entry.unwrap().file_name().to_string_lossy().into_owned();
        let manifest = std::fs::read_to_string(crates_dir.join(&dir).join("Cargo.toml")).unwrap();
        let allowed = LAYERS
            .iter()
            .find(|(name, _)| *name == dir)
            .unwrap_or_else(|| panic!("crates/{dir} is not in LAYERS: place it in a layer"))
            .1;
        for dep in tokenpipe_dependencies(&manifest) {
            assert!(
                allowed.contains(&dep.as_str()),
                "crates/{dir} depends on tokenpipe-{dep}; it may depend only on {allowed:?}"
            );
        }
        seen.insert(dir);
    }
    assert_eq!(
        seen.len(),
        LAYERS.len(),
        "a crate of LAYERS is gone: {seen:?}"
    );
}

/// The `tokenpipe-*` crates a manifest names in `[dependencies]` (dev-dependencies aside), by
/// directory name.
fn tokenpipe_dependencies(manifest: &str) -> Vec<String> {
    let mut section = "";
    let mut deps = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[dependencies]" {
            if let Some(rest) = line.strip_prefix("tokenpipe-") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                deps.push(name);
            }
        }
    }
    deps
}

#[test]
fn no_crate_has_an_import_circle_between_its_top_level_modules() {
    let mut circles = Vec::new();
    for (name, _) in LAYERS {
        let graph = module_graph(&root().join("crates").join(name).join("src"));
        for circle in circles_of(&graph) {
            circles.push(format!("{name}: {}", circle.join(", ")));
        }
    }
    assert!(
        circles.is_empty(),
        "import circles between top-level modules (docs/architecture.md, \"Layers\"): {circles:?}"
    );
}

#[test]
fn the_circle_finder_finds_a_circle_and_only_circles() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", &["b"][..]),
        ("b", &["c"]),
        ("c", &["a", "d"]),
        ("d", &[]),
        ("e", &["d"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
    .collect();
    assert_eq!(circles_of(&graph), [["a", "b", "c"]]);
    let text = "use crate::{a, b::{c, D}};\n// crate::commented\nfn f() { crate::e::g(); }\n\
                #[cfg(test)]\nmod tests {\n    use crate::t;\n}\n";
    assert_eq!(named_modules(text), ["a", "b", "e"]);
}

/// For each top-level module of the crate whose sources are under `src`, the other top-level
/// modules its code names.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).unwrap();
        let mut parts: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        let is_test = parts.iter().any(|p| p == "tests" || p.ends_with("_tests"));
        let Some(top) = parts.first().cloned() else {
            continue;
        };
        if is_test {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let edges = graph.entry(top.clone()).or_default();
        for module in named_modules(&text) {
            if module != top {
                edges.insert(module);
            }
        }
    }
    graph
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// The top-level modules that code names through `crate::`, outside comments and
/// `#[cfg(test)]` modules.
fn named_modules(text: &str) -> Vec<String> {
    let code = without_test_modules(&without_comments(text));
    let mut names = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::{c, d}}`: the first segment of each top-level item.
            let mut depth = 0;
            let mut at_item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        rest = &group[j..];
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => at_item_start = true,
                    c if at_item_start && (c.is_alphanumeric() || c == '_') => {
                        names.insert(identifier(&group[j..]));
                        at_item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            names.insert(identifier(rest));
        }
    }
    names.retain(|n| !n.is_empty() && n != "self" && n != "super");
    names.into_iter().collect()
}

fn identifier(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` without the bodies of `#[cfg(test)] mod … { … }`.
fn without_test_modules(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let Some(open) = after.find('{').filter(|&o| !after[..o].contains(';')) else {
            // `#[cfg(test)] mod tests;` or a test-only item without a body: skip the line.
            rest = after.find('\n').map_or("", |n| &after[n..]);
            continue;
        };
        let mut depth = 0;
        let mut end = after.len();
        for (j, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + j + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The strongly connected components of more than one module (Tarjan's algorithm), each sorted,
/// in sorted order.
fn circles_of(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found.sort();
    state.found
}
