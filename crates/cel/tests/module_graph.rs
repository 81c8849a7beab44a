//! The top-level modules of the core depend on each other without a cycle.
//!
//! How it checks: starting from each top-level module declared in `src/lib.rs`, it walks the
//! module's files as rustc would find them (`mod x;` as `x.rs` or `x/mod.rs` beside the
//! declaring file, or its `#[path]`), leaving out modules declared under `#[cfg(test)]` and
//! inline `#[cfg(test)] mod x { ... }` blocks, since tests may use the crate from the top. In
//! what remains, with comments and string literals blanked out, every path that leaves the
//! module is an edge: `crate::m::...`, `crate::{m::..., ...}`, a `super::` that climbs to the
//! crate root, and `crate::Name` for a name `lib.rs` re-exports from module `m`. The test
//! fails, printing the cycle, if the resulting graph has one; `detects_a_cycle` shows that
//! the search finds one when there is.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Source with comments, string and char literals replaced by spaces (newlines kept).
fn blank(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let keep = |c: u8| if c == b'\n' { b'\n' } else { b' ' };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        out.extend([b' ', b' ']);
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        out.extend([b' ', b' ']);
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        out.push(keep(b[i]));
                        i += 1;
                    }
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    out.push(b[i]);
                    i += 1;
                    continue;
                }
                j += 1;
                loop {
                    if j >= b.len() {
                        break;
                    }
                    if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                out.extend(b[i..j.min(b.len())].iter().map(|&c| keep(c)));
                i = j;
            }
            b'"' => {
                out.push(b' ');
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        out.push(b' ');
                        i += 1;
                    }
                    if i < b.len() {
                        out.push(keep(b[i]));
                        i += 1;
                    }
                }
                out.push(b' ');
                i += 1;
            }
            // A char literal ('x', '\n', '\u{..}'); a lifetime ('a) is left alone.
            b'\'' => {
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|p| i + 2 + p)
                } else {
                    let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                    (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
                };
                match end {
                    Some(e) => {
                        out.extend(std::iter::repeat_n(b' ', e + 1 - i));
                        i = e + 1;
                    }
                    None => {
                        out.push(b'\'');
                        i += 1;
                    }
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A module declaration in blanked source: its name, `#[path]`, whether it is inline, and
/// whether it is under `#[cfg(test)]`.
struct ModDecl {
    name: String,
    path: Option<String>,
    test: bool,
    /// Byte range of an inline module's body, braces included.
    inline: Option<(usize, usize)>,
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn matching_brace(b: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    b.len()
}

/// `mod` declarations at any depth of one file (blanked source; `raw` is the original, for
/// `#[path = "..."]`, whose string the blanking removed).
fn mod_decls(blanked: &str, raw: &str) -> Vec<ModDecl> {
    let b = blanked.as_bytes();
    let mut decls = Vec::new();
    let mut i = 0;
    while let Some(p) = blanked[i..].find("mod ") {
        let at = i + p;
        i = at + 4;
        if at > 0 && is_ident(b[at - 1]) {
            continue;
        }
        let name: String = blanked[i..]
            .trim_start()
            .bytes()
            .take_while(|&c| is_ident(c))
            .map(char::from)
            .collect();
        if name.is_empty() {
            continue;
        }
        let after = i + blanked[i..].find(&name).unwrap_or(0) + name.len();
        let rest = blanked[after..].trim_start();
        let inline = if rest.starts_with('{') {
            let open = after + blanked[after..].find('{').unwrap_or(0);
            Some((open, matching_brace(b, open)))
        } else if rest.starts_with(';') {
            None
        } else {
            continue;
        };
        // The attributes just before: the text back to the previous item's end.
        let start = blanked[..at].rfind([';', '}', '{']).map_or(0, |k| k + 1);
        let attrs = &raw[start..at];
        let test = blanked[start..at].contains("cfg(test)");
        let path = attrs.find("#[path").and_then(|k| {
            let s = &attrs[k..];
            let q = s.find('"')? + 1;
            let e = s[q..].find('"')? + q;
            Some(s[q..e].to_string())
        });
        decls.push(ModDecl {
            name,
            path,
            test,
            inline,
        });
    }
    decls
}

/// The modules a chunk of (blanked, test-free) code of a module at `depth` below the root
/// reaches outside `own`: the edges of the graph.
fn references(
    code: &str,
    depth: usize,
    own: &str,
    tops: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
    out: &mut BTreeSet<String>,
) {
    let b = code.as_bytes();
    let mut add = |name: &str| {
        let target = if tops.contains(name) {
            Some(name.to_string())
        } else {
            reexports.get(name).cloned()
        };
        if let Some(t) = target
            && t != own
        {
            out.insert(t);
        }
    };
    let ident_at = |k: usize| -> String {
        code[k..]
            .trim_start()
            .bytes()
            .take_while(|&c| is_ident(c))
            .map(char::from)
            .collect()
    };
    let mut i = 0;
    while i < b.len() {
        if !is_ident(b[i]) || (i > 0 && (is_ident(b[i - 1]) || b[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let word = ident_at(i);
        let mut k = i + word.len();
        let rooted = match word.as_str() {
            "crate" => true,
            "super" => {
                let mut supers = 1;
                while code[k..].starts_with("::super") {
                    supers += 1;
                    k += "::super".len();
                }
                supers >= depth
            }
            _ => false,
        };
        if rooted && code[k..].starts_with("::") {
            k += 2;
            let rest = code[k..].trim_start();
            if rest.starts_with('{') {
                let open = k + code[k..].find('{').unwrap_or(0);
                let close = matching_brace(b, open);
                // First segments of each item of the group, at the group's top level.
                let inner = &code[open + 1..close.saturating_sub(1)];
                let mut level = 0;
                let mut item_start = true;
                for (n, c) in inner.char_indices() {
                    match c {
                        '{' => level += 1,
                        '}' => level -= 1,
                        ',' if level == 0 => item_start = true,
                        c if item_start
                            && level == 0
                            && (c.is_ascii_alphanumeric() || c == '_') =>
                        {
                            add(&ident_at(open + 1 + n));
                            item_start = false;
                        }
                        _ => {}
                    }
                }
                i = close;
                continue;
            }
            add(&ident_at(k));
        }
        i = k.max(i + 1);
    }
}

/// Walks a module file and the files of its submodules, adding their edges.
fn walk_module(
    file: &Path,
    depth: usize,
    own: &str,
    tops: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
    out: &mut BTreeSet<String>,
) {
    let raw = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut code = blank(&raw);
    let decls = mod_decls(&code, &raw);
    // A file that is `mod.rs` (or the crate's own module file) declares children beside it;
    // `foo.rs` declares them in `foo/`.
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let dir = file.parent().unwrap_or(Path::new("."));
    let child_dir: PathBuf = if stem == "mod" || stem == "lib" {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    for d in &decls {
        if let Some((open, close)) = d.inline
            && d.test
        {
            code.replace_range(open..close, &" ".repeat(close - open));
        }
    }
    for d in &decls {
        if d.test || d.inline.is_some() {
            continue;
        }
        let path = match &d.path {
            // `#[path]` is relative to the declaring file's directory.
            Some(p) => dir.join(p),
            None => {
                let flat = child_dir.join(format!("{}.rs", d.name));
                if flat.exists() {
                    flat
                } else {
                    child_dir.join(&d.name).join("mod.rs")
                }
            }
        };
        walk_module(&path, depth + 1, own, tops, reexports, out);
    }
    references(&code, depth, own, tops, reexports, out);
}

/// Top-level modules and the root's re-exports (`pub use m::...::{A, B}` maps A and B to m).
fn root(lib: &str) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let code = blank(lib);
    let mut tops = BTreeSet::new();
    let mut reexports = BTreeMap::new();
    for line in code.lines().map(str::trim) {
        let line = line
            .trim_start_matches("pub ")
            .trim_start_matches("pub(crate) ");
        if let Some(name) = line.strip_prefix("mod ").and_then(|l| l.strip_suffix(';')) {
            tops.insert(name.trim().to_string());
        }
        if let Some(path) = line.strip_prefix("use ").and_then(|l| l.strip_suffix(';')) {
            let module = path.split("::").next().unwrap_or("").to_string();
            let last = path.rsplit("::").next().unwrap_or("");
            let names = last.trim_start_matches('{').trim_end_matches('}');
            for n in names.split(',') {
                let n = n.split(" as ").last().unwrap_or("").trim();
                if !n.is_empty() {
                    reexports.insert(n.to_string(), module.clone());
                }
            }
        }
    }
    (tops, reexports)
}

fn module_graph(src: &Path) -> Graph {
    let lib = fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
    let (tops, reexports) = root(&lib);
    let mut graph = Graph::new();
    for top in &tops {
        let flat = src.join(format!("{top}.rs"));
        let file = if flat.exists() {
            flat
        } else {
            src.join(top).join("mod.rs")
        };
        let mut edges = BTreeSet::new();
        walk_module(&file, 1, top, &tops, &reexports, &mut edges);
        graph.insert(top.clone(), edges);
    }
    graph
}

/// A cycle of the graph, as the list of its nodes with the first repeated at the end.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|n| n == next).unwrap_or(0);
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(next, graph, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if !state.contains_key(node.as_str()) {
            let mut stack = Vec::new();
            if let Some(c) = visit(node, graph, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn top_level_modules_form_a_dag() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    assert!(graph.len() >= 10, "too few modules found: {graph:?}");
    for (module, deps) in &graph {
        eprintln!(
            "{module} -> {}",
            deps.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "import cycle between top-level modules: {}",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn detects_a_cycle() {
    let mut graph = Graph::new();
    graph.insert("env".into(), ["check".to_string()].into());
    graph.insert("check".into(), ["library".to_string()].into());
    graph.insert("library".into(), ["env".to_string()].into());
    let cycle = find_cycle(&graph).expect("a cycle");
    assert_eq!(cycle.first(), cycle.last());
    assert_eq!(cycle.len(), 4);
}

#[test]
fn references_are_found_in_every_form() {
    let tops: BTreeSet<String> = ["env", "check", "value", "format"].map(String::from).into();
    let reexports: BTreeMap<String, String> = [("Env".to_string(), "env".to_string())].into();
    let code = blank(
        "use crate::{value::Value, format};\nfn f(e: &crate::Env) { super::check::x(); }\n\
         // crate::nothing_here\nconst S: &str = \"crate::not_code\";",
    );
    let mut out = BTreeSet::new();
    references(&code, 1, "self", &tops, &reexports, &mut out);
    assert_eq!(
        out,
        ["check", "env", "format", "value"].map(String::from).into()
    );
    let src = "#[cfg(test)]\nmod tests {\n    use crate::env::Env;\n}\nmod real;\n";
    let decls = mod_decls(&blank(src), src);
    assert!(decls[0].test && decls[0].inline.is_some());
    assert!(!decls[1].test && decls[1].inline.is_none());
}
