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
    apply_edits(
        text,
        inserts.into_iter().map(|at| (at, at, ";".to_string())),
    )
}

/// `text` with each `(start, end, replacement)` applied, in ascending order and not
/// overlapping; `None` when there is none (or a range falls outside the text).
fn apply_edits(
    text: &str,
    edits: impl IntoIterator<Item = (usize, usize, String)>,
) -> Option<String> {
    let mut edits = edits.into_iter().peekable();
    edits.peek()?;
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (start, end, replacement) in edits {
        out.push_str(text.get(at..start)?);
        out.push_str(&replacement);
        at = end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

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
    // Whether the brace open at depth 0 is a body (not a value such as `= {"a": x}`), and
    // the last significant byte before the current one.
    let mut in_body = false;
    let mut previous = 0u8;
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
        let value_brace = matches!(previous, b'=' | b',' | b':' | b'|');
        previous = b;
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
            b'{' if depth == 0 && value_brace => {
                in_body = false;
                depth += 1;
            }
            b'{' if depth == 0 => {
                in_body = true;
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
                    body_closed = in_body;
                }
            }
            _ => {}
        }
        i += 1;
    }
    apply_edits(
        text,
        inserts
            .into_iter()
            .map(|(at, head)| (at, at, format!("{head} "))),
    )
}

/// OPA evaluates the arguments of a call under `not` before the negation: `not
/// f(input.missing)` and `not startswith(input.missing, "a")` fail when the argument is
/// undefined (as if written `x := input.missing; not f(x)`), while `not input.missing == 1`,
/// an operator, holds. regorus 0.14 evaluates the whole call under the negation, so an
/// undefined argument makes the `not` true. This writes each argument that is not a plain
/// variable or constant out before the `not`, on the same line (`__celer_not_1 :=
/// input.missing; not f(__celer_not_1)`), so line numbers stay as written. Only a statement
/// that is exactly `not name(args)` is rewritten (no `with`, nothing after the call). `None`
/// when no statement needs it.
pub fn hoist_negated_call_arguments(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let ident = |b: u8| b == b'_' || b.is_ascii_alphanumeric();
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut counter = 0usize;
    let (mut i, mut line) = (0, 1);
    // The last significant byte, to tell a statement's start.
    let mut previous = b'\n';
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                line += 1;
                previous = b'\n';
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
            b'"' => {
                i = skip_string(bytes, i, &mut line).0;
                previous = b'"';
                continue;
            }
            b'`' => {
                i = skip_raw_string(bytes, i, &mut line);
                previous = b'`';
                continue;
            }
            _ => {}
        }
        let starts_statement = matches!(previous, b'\n' | b'{' | b';' | b'|');
        if starts_statement
            && bytes[i..].starts_with(b"not")
            && bytes.get(i + 3).is_some_and(|c| *c == b' ' || *c == b'\t')
            && let Some((end, replacement)) = negated_call(text, i, &mut counter)
        {
            edits.push((i, end, replacement));
            previous = b')';
            i = end;
            continue;
        }
        previous = b;
        if ident(b) {
            while i < bytes.len() && ident(bytes[i]) {
                i += 1;
            }
            continue;
        }
        i += 1;
    }
    apply_edits(text, edits)
}

/// `not name(args)` at `start`: the end of the call and its rewrite, when an argument needs
/// writing out and nothing but the end of the statement follows the call.
fn negated_call(text: &str, start: usize, counter: &mut usize) -> Option<(usize, String)> {
    let bytes = text.as_bytes();
    let mut i = start + 3;
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t') {
        i += 1;
    }
    let name_start = i;
    while i < bytes.len()
        && (bytes[i] == b'_' || bytes[i] == b'.' || bytes[i].is_ascii_alphanumeric())
    {
        i += 1;
    }
    let name = text.get(name_start..i)?;
    if name.is_empty() || !name.as_bytes()[0].is_ascii_alphabetic() && name.as_bytes()[0] != b'_' {
        return None;
    }
    if bytes.get(i) != Some(&b'(') {
        return None;
    }
    // The arguments, split at commas outside brackets and strings.
    let mut args: Vec<(usize, usize)> = Vec::new();
    let (mut depth, mut arg_start) = (0i64, i + 1);
    let mut line = 0;
    let mut j = i + 1;
    let close = loop {
        let c = *bytes.get(j)?;
        match c {
            b'"' => {
                j = skip_string(bytes, j, &mut line).0;
                continue;
            }
            b'`' => {
                j = skip_raw_string(bytes, j, &mut line);
                continue;
            }
            b'#' => return None,
            b'(' | b'[' | b'{' => depth += 1,
            b')' if depth == 0 => {
                args.push((arg_start, j));
                break j;
            }
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                args.push((arg_start, j));
                arg_start = j + 1;
            }
            _ => {}
        }
        j += 1;
    };
    // Nothing but the end of the statement after the call.
    let mut k = close + 1;
    while k < bytes.len() && matches!(bytes[k], b' ' | b'\t' | b'\r') {
        k += 1;
    }
    if !(k >= bytes.len() || matches!(bytes[k], b'\n' | b';' | b'}' | b'#' | b']')) {
        return None;
    }
    let plain = |arg: &str| {
        let arg = arg.trim();
        arg.is_empty()
            || arg.bytes().all(|c| c == b'_' || c.is_ascii_alphanumeric())
            || arg.len() >= 2
                && arg.starts_with('"')
                && arg.ends_with('"')
                && !arg[1..arg.len() - 1].contains('"')
            || arg.parse::<f64>().is_ok()
            || arg.starts_with('-') && arg[1..].trim().parse::<f64>().is_ok()
    };
    if args.iter().all(|(a, b)| plain(&text[*a..*b])) {
        return None;
    }
    let mut hoisted = String::new();
    let mut call = format!("not {name}(");
    for (n, (a, b)) in args.iter().enumerate() {
        let arg = &text[*a..*b];
        if n > 0 {
            call.push(',');
        }
        if plain(arg) {
            call.push_str(arg);
        } else {
            *counter += 1;
            let var = format!("__celer_not_{counter}");
            hoisted.push_str(&format!("{var} :={arg}; "));
            call.push_str(&var);
        }
    }
    call.push(')');
    Some((close + 1, format!("{hoisted}{call}")))
}

/// Skips the raw string starting at `bytes[start] == '`'`: the index after it.
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
    fn arguments_of_negated_calls_are_written_out_before_the_negation() {
        let text = "package p\nr[m] {\n  not f(input.missing)\n  not startswith(input.a, \"b\") # x\n  not input.missing == 1\n  not f(-1)\n  not f(x)\n  m := [y | not g(y.a, 2)]\n}\n";
        let out = hoist_negated_call_arguments(text);
        assert_eq!(
            out.as_deref(),
            Some(
                "package p\nr[m] {\n  __celer_not_1 :=input.missing; not f(__celer_not_1)\n  __celer_not_2 :=input.a; not startswith(__celer_not_2, \"b\") # x\n  not input.missing == 1\n  not f(-1)\n  not f(x)\n  m := [y | __celer_not_3 :=y.a; not g(__celer_not_3, 2)]\n}\n"
            )
        );
        assert_eq!(out.map(|o| o.lines().count()), Some(text.lines().count()));
        // With `with`, or an operator after the call, the statement is left as written.
        assert_eq!(
            hoist_negated_call_arguments("r { not f(input.a) with input as {} }\n"),
            None
        );
        assert_eq!(
            hoist_negated_call_arguments("r { not f(input.a) == 1 }\n"),
            None
        );
        assert_eq!(
            hoist_negated_call_arguments("r { x := \"not f(input.a)\" }\n"),
            None
        );
    }

    #[test]
    fn multi_body_rules_are_written_as_one_definition_per_body() {
        let text = "package p\n\nf(obj) = spec {\n  obj.kind == \"Pod\"\n  spec := 1\n} {\n  obj.kind == \"Job\" # a } here\n  spec := \"}{\"\n}\n{ spec := 3 }\n\ng(x) = 1 { x } else = 2 { true }\n";
        let split = split_multi_body_rules(text);
        assert_eq!(
            split.as_deref(),
            Some(
                "package p\n\nf(obj) = spec {\n  obj.kind == \"Pod\"\n  spec := 1\n} f(obj) = spec {\n  obj.kind == \"Job\" # a } here\n  spec := \"}{\"\n}\nf(obj) = spec { spec := 3 }\n\ng(x) = 1 { x } else = 2 { true }\n"
            )
        );
        // Line numbers stay as written.
        assert_eq!(split.map(|s| s.lines().count()), Some(text.lines().count()));
        assert_eq!(
            split_multi_body_rules("package p\n\nr { true }\ns { false }\n"),
            None
        );
        // An object as the head's value is not a body.
        assert_eq!(
            split_multi_body_rules("package p\nf(c) = {\"a\": c} {\n  c > 1\n}\nf(c) = {\"a\": 0} { c < 1 } { c == 1 }\n").as_deref(),
            Some("package p\nf(c) = {\"a\": c} {\n  c > 1\n}\nf(c) = {\"a\": 0} { c < 1 } f(c) = {\"a\": 0} { c == 1 }\n")
        );
        // A head over several lines is left alone.
        assert_eq!(
            split_multi_body_rules(
                "package p\nv[{\"msg\": m,\n  \"d\": 1}] = x { m := 1 } { m := 2 }\n"
            ),
            None
        );
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
            let negated = format!("not f({text})");
            for t in [&text, &negated] {
                if let Some(out) = hoist_negated_call_arguments(t) {
                    proptest::prop_assert_eq!(out.lines().count(), t.lines().count());
                }
            }
        }
        #[test]
        fn negations_scan_without_panicking(text in "[a-z(){}\\[\\]., \n\"#=;|]{0,120}") {
            let with_not = format!("not {text}");
            for t in [&text, &with_not] {
                if let Some(out) = hoist_negated_call_arguments(t) {
                    proptest::prop_assert_eq!(out.lines().count(), t.lines().count());
                }
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
