//! Kyverno's document paths (`pkg/utils/jsonpointer`): the `/`-separated paths its JSON
//! traversal builds (a `/` inside a key written `\/`), read back with `ParsePath` and turned
//! into the JMESPath that `{{@}}` stands for.

/// `jsonpointer.ParsePath`: components split on unquoted `/`; `\` escapes the next
/// character, `"` toggles quoting (the quotes themselves are dropped).
pub(crate) fn parse_path(raw: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let (mut escaped, mut quoted) = (false, false);
    let flush = |current: &mut String, out: &mut Vec<String>| {
        if !current.is_empty() {
            out.push(std::mem::take(current));
        }
    };
    for c in raw.chars() {
        if escaped {
            current.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '"' {
            quoted = !quoted;
        } else if c == '/' && !quoted {
            flush(&mut current, &mut out);
        } else {
            current.push(c);
        }
    }
    if escaped {
        // Go decodes the end of the string as U+FFFD and writes it.
        current.push('\u{fffd}');
    }
    flush(&mut current, &mut out);
    out
}

fn unquoted_first(c: char) -> bool {
    c == '(' || c == '_' || c.is_ascii_alphabetic()
}

fn unquoted_rest(c: char) -> bool {
    c == ')' || c == '_' || c.is_ascii_alphanumeric()
}

/// `Pointer.JMESPath()`: numeric components as `[n]`, identifiers bare, anything else as a
/// quoted identifier.
pub(crate) fn to_jmespath(components: &[String]) -> String {
    let mut out = String::new();
    for component in components {
        if !component.is_empty()
            && component.bytes().all(|b| b.is_ascii_digit())
            && component.parse::<u64>().is_ok()
        {
            out.push('[');
            out.push_str(component);
            out.push(']');
            continue;
        }
        if !out.is_empty() {
            out.push('.');
        }
        let bare = component.chars().next().is_some_and(unquoted_first)
            && component.chars().all(unquoted_rest);
        if bare {
            out.push_str(component);
            continue;
        }
        out.push('"');
        for c in component.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out
}

/// The JMESPath `{{@}}` means at `path`: the path past any `foreach`, less its first two
/// components (`validate`/`pattern`, `mutate`/`patchStrategicMerge`), under `prefix`
/// (`target` for mutate-existing targets, `request.object` otherwise).
pub(crate) fn at_expression(path: &str, prefix: &str) -> String {
    let mut components = parse_path(path);
    if let Some(i) = components.iter().position(|c| c == "foreach") {
        components.drain(..=i);
    }
    // SkipN(2): everything when fewer than three components remain.
    let rest: Vec<String> = if components.len() > 2 {
        components.split_off(2)
    } else {
        Vec::new()
    };
    let mut all: Vec<String> = prefix.split('.').map(str::to_owned).collect();
    all.extend(rest);
    to_jmespath(&all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_to_jmespath() {
        assert_eq!(
            parse_path(r#"/a/b\/c/"d/e"/0"#),
            vec!["a", "b/c", "d/e", "0"]
        );
        assert_eq!(
            at_expression(
                "/mutate/patchStrategicMerge/spec/containers/0/image",
                "request.object"
            ),
            "request.object.spec.containers[0].image"
        );
        assert_eq!(
            at_expression(
                "/validate/foreach/0/pattern/x/metadata/labels/app.kubernetes.io\\/name",
                "target"
            ),
            r#"target.x.metadata.labels."app.kubernetes.io/name""#
        );
        assert_eq!(at_expression("/a", "request.object"), "request.object");
        assert_eq!(
            to_jmespath(&["a b".into(), "(x)".into(), "_y)".into()]),
            r#""a b"."(x)"._y)"#
        );
    }
}
