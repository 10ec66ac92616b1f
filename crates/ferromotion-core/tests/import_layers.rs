//! The core's modules import only downward (and the quadruped crate's have no circle): no import circle between files, nor between the
//! folders that hold them, and the top-level groups in the documented order
//! `error → numeric → physics → lab → check → hybrid → systems → fit → conformance → experiments → defaults` (a lower group never
//! names a higher one).
//!
//! The scan reads every `.rs` file under `src/` (comments, strings and `#[cfg(test)]` modules
//! left out) and takes an edge from a file to the module each path names: `use crate::…`,
//! `use super::…`, `use self::…`, `use child::…` and the same paths written inline in code
//! (`crate::physics::state::max_abs(…)`). A name the crate root or a folder's module file
//! re-exports (`crate::FerroError`, `quadruped::QuadrupedExperiment`) is followed to the file
//! that defines it. A module file's `pub use` of its own children is its table of contents,
//! not an import, and makes no edge.
//!
//! File level: the graph of those edges. Folder level: an edge between two files in
//! different sibling folders (or a file and a sibling folder) is an edge between those
//! siblings, at every depth; `physics/integrate/adaptive.rs → check/fd.rs` is
//! `physics → check`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level groups from the bottom up; an edge may only point to the same group or one
/// listed before it. A group not listed here is held to the circle checks only.
const LAYERS: [&str; 11] = [
    "error",
    "numeric",
    "physics",
    "lab",
    "check",
    "hybrid",
    "systems",
    "fit",
    "conformance",
    "experiments",
    "defaults",
];

type ModPath = Vec<String>;

/// One source file: its module path and its text with comments, literals and test modules
/// blanked (newlines kept, so offsets still give line numbers).
struct SourceFile {
    module: ModPath,
    /// The module's own directory-ness: `mod.rs` and `lib.rs` own their folder.
    rel: PathBuf,
    text: String,
}

/// A path found in a file, with the line it is on and whether it is a `pub use`.
struct Named {
    path: ModPath,
    line: usize,
    pub_use: bool,
}

fn module_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    match last.as_str() {
        "lib.rs" | "mod.rs" => {}
        other => parts.push(other.trim_end_matches(".rs").to_string()),
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let p = entry.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Comments, string and char literals replaced by spaces (newlines kept).
fn blank_comments_and_literals(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in out.iter_mut().take(to).skip(from) {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |e| i + e);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if b[i] == b'r' && (b[i..].starts_with(b"r\"") || b[i..].starts_with(b"r#")) {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let start = i + 2 + hashes;
            let end = b[start..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |e| start + e + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, (j + 1).min(b.len()));
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\''); a lifetime ('a) has no closing quote.
            let len = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&c| c == b'\'').map(|e| e + 3)
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(ch + 2)
            };
            match len {
                Some(n) => {
                    blank(&mut out, i, i + n);
                    i += n;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out)
        .expect("blanking keeps UTF-8 (only ASCII spaces written over whole chars)")
}

/// `#[cfg(...test...)] mod name { ... }` blocks replaced by spaces: tests may import anything.
fn blank_test_modules(text: &mut String) {
    while let Some(at) = find_test_module(text) {
        let open = at + text[at..].find('{').expect("a test module's brace");
        let mut depth = 0;
        let mut end = text.len();
        for (k, c) in text[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let blanked: String = text[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        text.replace_range(at..end, &blanked);
    }
}

fn find_test_module(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(k) = text[from..].find("#[cfg(") {
        let at = from + k;
        let close = at + text[at..].find(")]")? + 2;
        let attr = &text[at..close];
        let rest = text[close..].trim_start();
        if attr.contains("test") && (rest.starts_with("mod ") || rest.starts_with("pub mod ")) {
            return Some(at);
        }
        from = close;
    }
    None
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Sep, // ::
    Punct(char),
}

fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\n' {
            line += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            out.push((Tok::Ident(text[i..end].to_string()), line));
        } else if c == ':' && chars.peek().map(|&(_, d)| d) == Some(':') {
            chars.next();
            out.push((Tok::Sep, line));
        } else if !c.is_whitespace() {
            out.push((Tok::Punct(c), line));
        }
    }
    out
}

/// Parse a use tree starting at `toks[*k]`, appending every full path under `prefix`.
fn use_tree(
    toks: &[(Tok, usize)],
    k: &mut usize,
    prefix: ModPath,
    out: &mut Vec<(ModPath, usize)>,
) {
    let mut path = prefix;
    loop {
        match toks.get(*k) {
            Some((Tok::Ident(s), line)) => {
                let line = *line;
                *k += 1;
                if s == "as" {
                    *k += 1; // the alias
                    out.push((path, line));
                    return;
                }
                if s != "self" || path.is_empty() {
                    path.push(s.clone());
                }
                if toks.get(*k).map(|t| &t.0) == Some(&Tok::Sep) {
                    *k += 1;
                    continue;
                }
                if let Some((Tok::Ident(a), _)) = toks.get(*k) {
                    if a == "as" {
                        continue;
                    }
                }
                out.push((path, line));
                return;
            }
            Some((Tok::Punct('*'), line)) => {
                out.push((path, *line));
                *k += 1;
                return;
            }
            Some((Tok::Punct('{'), _)) => {
                *k += 1;
                loop {
                    match toks.get(*k) {
                        Some((Tok::Punct('}'), _)) => {
                            *k += 1;
                            return;
                        }
                        Some((Tok::Punct(','), _)) => *k += 1,
                        None => return,
                        _ => use_tree(toks, k, path.clone(), out),
                    }
                }
            }
            _ => return,
        }
    }
}

/// Every path a file names, relative paths still unresolved (`super`, `self`, `crate` first).
fn named_paths(text: &str) -> Vec<Named> {
    let toks = tokens(text);
    let mut out = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        match &toks[k].0 {
            Tok::Ident(s) if s == "use" => {
                // `pub use` / `pub(crate) use` / `pub(in path) use`.
                let mut before = k;
                if before > 0 && toks[before - 1].0 == Tok::Punct(')') {
                    while before > 0 && toks[before - 1].0 != Tok::Punct('(') {
                        before -= 1;
                    }
                    before = before.saturating_sub(1);
                }
                let pub_use =
                    before > 0 && matches!(&toks[before - 1].0, Tok::Ident(p) if p == "pub");
                k += 1;
                let mut found = Vec::new();
                use_tree(&toks, &mut k, Vec::new(), &mut found);
                out.extend(found.into_iter().map(|(path, line)| Named {
                    path,
                    line,
                    pub_use,
                }));
            }
            Tok::Ident(s)
                if (s == "crate" || s == "super" || s == "self")
                    && toks.get(k + 1).map(|t| &t.0) == Some(&Tok::Sep)
                    && !(k > 0 && toks[k - 1].0 == Tok::Sep) =>
            {
                let line = toks[k].1;
                let mut path = vec![s.clone()];
                k += 1;
                while toks.get(k).map(|t| &t.0) == Some(&Tok::Sep) {
                    match toks.get(k + 1) {
                        Some((Tok::Ident(seg), _)) => {
                            path.push(seg.clone());
                            k += 2;
                        }
                        _ => break,
                    }
                }
                out.push(Named {
                    path,
                    line,
                    pub_use: false,
                });
            }
            _ => k += 1,
        }
    }
    out
}

struct Crate {
    files: Vec<SourceFile>,
    modules: BTreeSet<ModPath>,
    /// Per module file: name → the absolute path it re-exports (`pub use a::b::c as name`).
    reexports: BTreeMap<ModPath, BTreeMap<String, ModPath>>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut paths = Vec::new();
        rust_files(src, &mut paths);
        paths.sort();
        let files: Vec<SourceFile> = paths
            .iter()
            .map(|p| {
                let rel = p.strip_prefix(src).expect("under src").to_path_buf();
                let mut text =
                    blank_comments_and_literals(&std::fs::read_to_string(p).expect("read"));
                blank_test_modules(&mut text);
                SourceFile {
                    module: module_of(&rel),
                    rel,
                    text,
                }
            })
            .collect();
        let modules = files.iter().map(|f| f.module.clone()).collect();
        let mut c = Crate {
            files,
            modules,
            reexports: BTreeMap::new(),
        };
        for f in &c.files {
            let mut map = BTreeMap::new();
            for n in named_paths(&f.text).into_iter().filter(|n| n.pub_use) {
                if let (Some(abs), Some(last)) = (c.absolute(&f.module, &n.path), n.path.last()) {
                    if last != "*" {
                        map.insert(last.clone(), abs);
                    }
                }
            }
            c.reexports.insert(f.module.clone(), map);
        }
        c
    }

    /// `path` as named in module `at`, made absolute; `None` for another crate's path.
    fn absolute(&self, at: &ModPath, path: &ModPath) -> Option<ModPath> {
        let mut base = at.clone();
        let mut rest = path.as_slice();
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                // `use child::…` in a module file: a relative path into its own child.
                let mut child = at.clone();
                child.push(first.to_string());
                if !self.modules.contains(&child) {
                    return None;
                }
            }
            None => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module file an absolute path lands in, following re-exports of other files.
    fn resolve(&self, from: &ModPath, abs: &ModPath, depth: usize) -> ModPath {
        let mut m = abs.clone();
        while !self.modules.contains(&m) {
            m.pop();
        }
        if depth < 8 && m != *from && abs.len() > m.len() {
            let name = &abs[m.len()];
            if let Some(target) = self.reexports.get(&m).and_then(|r| r.get(name)) {
                let mut next = target.clone();
                next.extend(abs[m.len() + 1..].iter().cloned());
                return self.resolve(from, &next, depth + 1);
            }
        }
        m
    }

    /// File-level edges `from → to` with the first line of `from` that names `to`.
    fn edges(&self) -> BTreeMap<(ModPath, ModPath), (PathBuf, usize)> {
        let mut edges = BTreeMap::new();
        for f in &self.files {
            for n in named_paths(&f.text) {
                let Some(abs) = self.absolute(&f.module, &n.path) else {
                    continue;
                };
                if n.pub_use && abs.starts_with(&f.module) {
                    continue; // a module file's table of contents
                }
                let to = self.resolve(&f.module, &abs, 0);
                if to != f.module {
                    edges
                        .entry((f.module.clone(), to))
                        .or_insert((f.rel.clone(), n.line));
                }
            }
        }
        edges
    }
}

/// Strongly connected components of more than one node (Tarjan).
fn circles(edges: &BTreeSet<(ModPath, ModPath)>) -> Vec<Vec<ModPath>> {
    let nodes: BTreeSet<&ModPath> = edges.iter().flat_map(|(a, b)| [a, b]).collect();
    let nodes: Vec<&ModPath> = nodes.into_iter().collect();
    let index_of: BTreeMap<&ModPath, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut adj = vec![Vec::new(); nodes.len()];
    for (a, b) in edges {
        adj[index_of[a]].push(index_of[b]);
    }
    struct T {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, adj: &[Vec<usize>], t: &mut T) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in &adj[v] {
            match t.index[w] {
                None => {
                    visit(w, adj, t);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let n = nodes.len();
    let mut t = T {
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(v, &adj, &mut t);
        }
    }
    t.out
        .into_iter()
        .map(|c| {
            let mut c: Vec<ModPath> = c.into_iter().map(|i| nodes[i].clone()).collect();
            c.sort();
            c
        })
        .collect()
}

/// Folder-level edges: each file edge lifted to the two siblings under the deepest folder
/// that holds both ends (none when one end is inside the other).
fn folder_edges(edges: &BTreeSet<(ModPath, ModPath)>) -> BTreeSet<(ModPath, ModPath)> {
    edges
        .iter()
        .filter_map(|(a, b)| {
            let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            (common < a.len() && common < b.len())
                .then(|| (a[..=common].to_vec(), b[..=common].to_vec()))
        })
        .collect()
}

fn name(m: &ModPath) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

/// Every problem found under `src` (empty when the layering holds), and the edge count.
fn problems(src: &Path) -> (Vec<String>, usize) {
    let c = Crate::read(src);
    let located = c.edges();
    let edges: BTreeSet<(ModPath, ModPath)> = located.keys().cloned().collect();
    let at = |a: &ModPath, b: &ModPath| {
        located
            .iter()
            .find(|((x, y), _)| x.starts_with(a) && y.starts_with(b))
            .map(|(_, (file, line))| format!("{}:{line}", file.display()))
            .unwrap_or_default()
    };
    let describe = |kind: &str, comp: &[ModPath], set: &BTreeSet<(ModPath, ModPath)>| {
        let inside: Vec<String> = set
            .iter()
            .filter(|(a, b)| comp.contains(a) && comp.contains(b))
            .map(|(a, b)| format!("{} → {} ({})", name(a), name(b), at(a, b)))
            .collect();
        format!("{kind} circle: {}", inside.join("; "))
    };
    let mut out = Vec::new();
    for comp in circles(&edges) {
        out.push(describe("file", &comp, &edges));
    }
    let folders = folder_edges(&edges);
    for comp in circles(&folders) {
        let is_folder = |m: &ModPath| {
            c.modules
                .iter()
                .any(|o| o.len() > m.len() && o.starts_with(m))
        };
        if comp.iter().any(is_folder) {
            out.push(describe("folder", &comp, &folders));
        }
    }
    let layer = |m: &ModPath| m.first().and_then(|g| LAYERS.iter().position(|l| l == g));
    for (a, b) in &edges {
        if let (Some(la), Some(lb)) = (layer(a), layer(b)) {
            if lb > la {
                out.push(format!(
                    "upward edge: {} → {} ({}; {} sits below {})",
                    name(a),
                    name(b),
                    at(a, b),
                    LAYERS[la],
                    LAYERS[lb]
                ));
            }
        }
    }
    (out, edges.len())
}

#[test]
fn the_core_imports_only_downward() {
    // IMPORT_LAYERS_SRC=<dir> scans another tree (an older commit's `src/`, for comparison).
    let src = std::env::var_os("IMPORT_LAYERS_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let (found, n) = problems(&src);
    // The scan must see the crate's real edges, or an empty scan would pass.
    assert!(
        n > 100,
        "only {n} import edges found: the scanner is broken"
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_quadruped_crate_has_no_import_circle() {
    // Its own crate beside the core's (its modules sit at its root; no layer order, circles only).
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ferromotion-quadruped/src");
    let (found, n) = problems(&src);
    assert!(n > 20, "only {n} import edges found in {}", src.display());
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_scanner_sees_a_circle_and_an_upward_edge() {
    // A made-up crate: `a` and `b` name each other (one inline, one in a `use` group through
    // a re-export at the root), `error` names `physics`, and a test module's import is ignored.
    let dir = std::env::temp_dir().join(format!("ferro_layers_{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("physics")).unwrap();
    let write = |rel: &str, text: &str| std::fs::write(src.join(rel), text).unwrap();
    write(
        "lib.rs",
        "pub mod error;\npub mod physics;\npub use physics::b::Thing;\n",
    );
    write("physics/mod.rs", "pub mod a;\npub mod b;\n");
    write(
        "physics/a.rs",
        "// use crate::physics::b; (a comment)\nfn f() { let s = \"crate::error\"; crate::Thing::new(); }\n",
    );
    write(
        "physics/b.rs",
        "use super::{a::{self}, super::error};\npub struct Thing;\n",
    );
    write(
        "error.rs",
        "#[cfg(test)]\nmod tests { use crate::physics::a; }\npub fn e() { crate::physics::a::f() }\n",
    );
    let (found, _) = problems(&src);
    std::fs::remove_dir_all(&dir).ok();
    let text = found.join("\n");
    assert!(text.contains("file circle"), "{text}");
    assert!(
        text.contains("physics::a → physics::b (physics/a.rs:2)"),
        "{text}"
    );
    assert!(
        text.contains("physics::b → physics::a (physics/b.rs:1)"),
        "{text}"
    );
    assert!(text.contains("upward edge: error → physics::a"), "{text}");
    assert!(
        !text.contains("error → physics::b"),
        "a comment, a string or a test module made an edge:\n{text}"
    );
}
