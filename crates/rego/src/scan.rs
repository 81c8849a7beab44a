//! The dotted names a module mentions (`data.inventory.cluster`, `http.send(`), read off its
//! text with comments and strings skipped. Enough for the checks hosts make at load time
//! (Gatekeeper refuses `data` other than `data.inventory`, and disabled builtins), which
//! regorus does not make before a rule first runs.

/// A dotted name in a module's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    /// The segments joined by dots, brackets with a string key read as a segment
    /// (`data["inventory"]` is `data.inventory`).
    pub path: String,
    /// Whether it is called (`(` follows).
    pub called: bool,
    /// 1-based line.
    pub line: usize,
}

/// Every dotted name in `text`, in order.
pub fn names(text: &str) -> Vec<Name> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let ident_start = |b: u8| b == b'_' || b.is_ascii_alphabetic();
    let ident_char = |b: u8| b == b'_' || b.is_ascii_alphanumeric();
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => i = skip_string(bytes, i, &mut line).0,
            b'`' => i = skip_raw_string(bytes, i, &mut line),
            _ if ident_start(b) && (i == 0 || !ident_char(bytes[i - 1])) => {
                let start_line = line;
                let mut path = String::new();
                loop {
                    let start = i;
                    while i < bytes.len() && ident_char(bytes[i]) {
                        i += 1;
                    }
                    path.push_str(&text[start..i]);
                    // `.segment` or `["segment"]` continue the name.
                    if i + 1 < bytes.len() && bytes[i] == b'.' && ident_start(bytes[i + 1]) {
                        path.push('.');
                        i += 1;
                        continue;
                    }
                    if i + 1 < bytes.len() && bytes[i] == b'[' && bytes[i + 1] == b'"' {
                        let mut key_line = line;
                        let (end, key) = skip_string(bytes, i + 1, &mut key_line);
                        if end < bytes.len() && bytes[end] == b']' && !key.is_empty() {
                            path.push('.');
                            path.push_str(&key);
                            (i, line) = (end + 1, key_line);
                            if i + 1 < bytes.len() && bytes[i] == b'.' && ident_start(bytes[i + 1])
                            {
                                path.push('.');
                                i += 1;
                                continue;
                            }
                        }
                    }
                    break;
                }
                let mut j = i;
                while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                    j += 1;
                }
                out.push(Name {
                    path,
                    called: j < bytes.len() && bytes[j] == b'(',
                    line: start_line,
                });
            }
            _ => i += 1,
        }
    }
    out
}

/// Words after which a line's opening `(` continues the expression.
const CONTINUING: [&str; 11] = [
    "in", "not", "some", "every", "with", "as", "else", "if", "contains", "default", "package",
];

/// Rego ends an expression at a newline outside brackets, so a line that begins with `(`
/// starts a new expression; regorus 0.14 reads it as a call on the previous line's last
/// term instead (`x := input.a` then `(x - 1) >= 0` becomes `input.a(x - 1)`). This marks
/// such lines with the explicit separator `;` before the `(`, on the same line, so line and
/// column numbers of errors stay as written. `None` when no line needs it.
pub fn separate_parenthesized_lines(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut inserts = Vec::new();
    let (mut i, mut line) = (0, 1);
    let (mut brackets, mut braces) = (0i64, 0i64);
    // The last significant byte and, if it ended a word, the word.
    let mut last: Option<u8> = None;
    let mut last_word = String::new();
    let mut at_line_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        if at_line_start && !matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
            at_line_start = false;
            let ends_term = last.is_some_and(|c| {
                c.is_ascii_alphanumeric() || matches!(c, b'_' | b']' | b')' | b'"' | b'`')
            });
            if b == b'('
                && brackets == 0
                && braces > 0
                && ends_term
                && !CONTINUING.contains(&last_word.as_str())
            {
                inserts.push(i);
            }
        }
        match b {
            b'\n' => {
                line += 1;
                at_line_start = true;
                i += 1;
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => {
                i = skip_string(bytes, i, &mut line).0;
                last = Some(b'"');
                last_word.clear();
            }
            b'`' => {
                i = skip_raw_string(bytes, i, &mut line);
                last = Some(b'`');
                last_word.clear();
            }
            b' ' | b'\t' | b'\r' => i += 1,
            _ => {
                match b {
                    b'(' | b'[' => brackets += 1,
                    b')' | b']' => brackets -= 1,
                    b'{' => braces += 1,
                    b'}' => braces -= 1,
                    _ => {}
                }
                if b.is_ascii_alphanumeric() || b == b'_' {
                    let joined =
                        i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
                    if !joined {
                        last_word.clear();
                    }
                    last_word.push(char::from(b));
                } else {
                    last_word.clear();
                }
                last = Some(b);
                i += 1;
            }
        }
    }
    let _ = line;
    if inserts.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len() + inserts.len());
    let mut from = 0;
    for at in inserts {
        out.push_str(&text[from..at]);
        out.push(';');
        from = at;
    }
    out.push_str(&text[from..]);
    Some(out)
}

/// Skips the raw string starting at `bytes[start] == '`'`: the index after it.
/// Rego v0 lets one head carry several bodies, or-ed (`f(x) = y { a } { b }`): each body is
/// a definition of its own, exactly as if the head were written before each. regorus 0.14
/// refuses the form ("else cannot be used with set rules"), so this writes it out that way:
/// the head's text is repeated before every body after the first, on that body's line, so
/// line numbers of errors stay as written. Only heads on one line are repeated (a body after
/// a head that spans lines is left as written, and regorus then says what it says). `None`
/// when no rule needs it.
pub fn split_multi_body_rules(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut inserts: Vec<(usize, &str)> = Vec::new();
    let (mut i, mut line) = (0, 1);
    let mut depth = 0i64;
    // Where the statement at depth 0 began, and the head of the rule whose body just closed.
    let mut statement: Option<usize> = None;
    let mut head: Option<&str> = None;
    let mut body_closed = false;
    let mut line_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                line += 1;
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        if depth == 0 {
            if body_closed && b == b'{' {
                if let Some(h) = head {
                    inserts.push((i, h));
                }
            } else if body_closed || line_start {
                // Something other than another body: a statement begins here (heads are
                // taken only from statements that begin a line).
                statement = Some(i);
                head = None;
            }
            body_closed = false;
        }
        line_start = false;
        match b {
            b'"' => {
                i = skip_string(bytes, i, &mut line).0;
                continue;
            }
            b'`' => {
                i = skip_raw_string(bytes, i, &mut line);
                continue;
            }
            b'{' if depth == 0 => {
                // A rule's first body: its head is the statement's text before it, when that
                // is on one line and is not an `else`.
                if head.is_none() {
                    head = statement
                        .and_then(|start| text.get(start..i))
                        .map(str::trim_end)
                        .filter(|h| !h.is_empty() && !h.contains('\n') && !h.starts_with("else"));
                }
                depth += 1;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' => depth -= 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    body_closed = true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    if inserts.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len() + inserts.iter().map(|(_, h)| h.len() + 1).sum::<usize>());
    let mut at = 0;
    for (position, head) in inserts {
        out.push_str(text.get(at..position)?);
        out.push_str(head);
        out.push(' ');
        at = position;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

fn skip_raw_string(bytes: &[u8], start: usize, line: &mut usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() && bytes[i] != b'`' {
        if bytes[i] == b'\n' {
            *line += 1;
        }
        i += 1;
    }
    i + 1
}

/// Skips the string starting at `bytes[start] == '"'`: the index after it and its text
/// (escapes kept as written, which is enough for names).
fn skip_string(bytes: &[u8], start: usize, line: &mut usize) -> (usize, String) {
    let mut i = start + 1;
    let mut text = Vec::new();
    while i < bytes.len() && bytes[i] != b'"' {
        match bytes[i] {
            b'\\' if i + 1 < bytes.len() => {
                text.extend_from_slice(&bytes[i..i + 2]);
                i += 2;
            }
            b'\n' => {
                *line += 1;
                i += 1;
            }
            b => {
                text.push(b);
                i += 1;
            }
        }
    }
    (i + 1, String::from_utf8_lossy(&text).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<(String, bool, usize)> {
        names(text)
            .into_iter()
            .map(|n| (n.path, n.called, n.line))
            .collect()
    }

    #[test]
    fn multi_body_rules_are_written_as_one_definition_per_body() {
        let text = "package p\n\nf(obj) = spec {\n  obj.kind == \"Pod\"\n  spec := 1\n} {\n  obj.kind == \"Job\" # a } here\n  spec := \"}{\"\n}\n{ spec := 3 }\n\ng(x) = 1 { x } else = 2 { true }\n";
        let split = split_multi_body_rules(text);
        assert_eq!(
            split.as_deref(),
            Some("package p\n\nf(obj) = spec {\n  obj.kind == \"Pod\"\n  spec := 1\n} f(obj) = spec {\n  obj.kind == \"Job\" # a } here\n  spec := \"}{\"\n}\nf(obj) = spec { spec := 3 }\n\ng(x) = 1 { x } else = 2 { true }\n")
        );
        // Line numbers stay as written.
        assert_eq!(split.map(|s| s.lines().count()), Some(text.lines().count()));
        assert_eq!(split_multi_body_rules("package p\n\nr { true }\ns { false }\n"), None);
        // A head over several lines is left alone.
        assert_eq!(split_multi_body_rules("package p\nv[{\"msg\": m,\n  \"d\": 1}] = x { m := 1 } { m := 2 }\n"), None);
    }

    #[test]
    fn names_calls_and_lines_are_found_outside_comments_and_strings() {
        let text = "package p\n# data.secret in a comment\nx := \"data.nope\"\ny := data.inventory.cluster[\"v1\"]\nz := http.send({})\nw := data[\"lib\"].helpers.f(1)\n";
        assert_eq!(
            paths(text),
            vec![
                ("package".to_string(), false, 1),
                ("p".to_string(), false, 1),
                ("x".to_string(), false, 3),
                ("y".to_string(), false, 4),
                ("data.inventory.cluster.v1".to_string(), false, 4),
                ("z".to_string(), false, 5),
                ("http.send".to_string(), true, 5),
                ("w".to_string(), false, 6),
                ("data.lib.helpers.f".to_string(), true, 6),
            ]
        );
    }

    #[test]
    fn raw_strings_and_escapes_do_not_hide_names_after_them() {
        let text = "a := `data.x\n` \nb := \"q\\\"data.y\" \nc := data.z";
        let found: Vec<String> = names(text).into_iter().map(|n| n.path).collect();
        assert_eq!(found, ["a", "b", "c", "data.z"]);
        assert_eq!(names(text).last().map(|n| n.line), Some(4));
    }

    #[test]
    fn a_line_that_begins_with_a_parenthesis_starts_an_expression() {
        let text = "package p\nr {\n  x := input.a\n  (x - 1) >= 0\n}\n";
        assert_eq!(
            separate_parenthesized_lines(text).as_deref(),
            Some("package p\nr {\n  x := input.a\n  ;(x - 1) >= 0\n}\n")
        );
        // Inside brackets, after an operator or a keyword, and at the top level: unchanged.
        for unchanged in [
            "package p\nr {\n  x := f(1,\n  (2))\n}\n",
            "package p\nr {\n  x := 1 +\n  (2)\n}\n",
            "package p\nr {\n  some x in\n  (y)\n}\n",
            "package p\nx := 1\n(y)\n",
            "package p\nr {\n  x := \"a\" # ends (\n  y := 1\n}\n",
        ] {
            assert_eq!(separate_parenthesized_lines(unchanged), None, "{unchanged}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_scans_without_panicking(text in "\\PC{0,200}") {
            let _ = names(&text);
            if let Some(out) = separate_parenthesized_lines(&text) {
                let semicolons = |t: &str| t.bytes().filter(|b| *b == b';').count();
                proptest::prop_assert!(out.len() > text.len());
                proptest::prop_assert_eq!(semicolons(&out) - semicolons(&text), out.len() - text.len());
            }
            if let Some(out) = split_multi_body_rules(&text) {
                proptest::prop_assert!(out.len() > text.len());
                proptest::prop_assert_eq!(out.lines().count(), text.lines().count());
            }
        }
        #[test]
        fn bodies_in_braces_scan_without_panicking(text in "[a-z{}\\[\\]() \n\"#=]{0,120}") {
            if let Some(out) = split_multi_body_rules(&text) {
                proptest::prop_assert_eq!(out.lines().count(), text.lines().count());
            }
        }
    }
}
