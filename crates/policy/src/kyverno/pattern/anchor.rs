//! Kyverno's anchors: a pattern key written `(key)` (conditional), `=(key)` (equality),
//! `^(key)` (existence), `X(key)` (negation), `<(key)` (global) or `+(key)` (add if not
//! present, a mutate anchor that validate refuses). The key is what the parentheses hold;
//! surrounding whitespace is ignored (`anchor.Parse`).

/// The kind of an anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnchorKind {
    /// `(key)`: if the key is there and its value matches, the rest of the map must match;
    /// otherwise the rule does not apply (skip).
    Condition,
    /// `<(key)`: like a condition, but a mismatch skips the whole rule wherever it is.
    Global,
    /// `X(key)`: the key must not be there.
    Negation,
    /// `+(key)`: mutate only.
    AddIfNotPresent,
    /// `=(key)`: if the key is there, its value must match.
    Equality,
    /// `^(key)`: each pattern in the list must match at least one element of the list.
    Existence,
}

impl AnchorKind {
    /// The modifier written before the parenthesis.
    pub fn modifier(self) -> &'static str {
        match self {
            AnchorKind::Condition => "",
            AnchorKind::Global => "<",
            AnchorKind::Negation => "X",
            AnchorKind::AddIfNotPresent => "+",
            AnchorKind::Equality => "=",
            AnchorKind::Existence => "^",
        }
    }

    /// Whether validate evaluates this anchor before the other keys of its map
    /// (`GetAnchorsResourcesFromMap`).
    pub fn is_first_phase(self) -> bool {
        matches!(
            self,
            AnchorKind::Condition
                | AnchorKind::Existence
                | AnchorKind::Equality
                | AnchorKind::Negation
        )
    }
}

/// A parsed anchor key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    pub kind: AnchorKind,
    pub key: String,
}

impl Anchor {
    /// `anchor.Parse`: `None` when `text` is not an anchor.
    pub fn parse(text: &str) -> Option<Anchor> {
        let s = text.trim();
        let (kind, rest) = match s.as_bytes().first()? {
            b'<' => (AnchorKind::Global, s.get(1..)?),
            b'X' => (AnchorKind::Negation, s.get(1..)?),
            b'+' => (AnchorKind::AddIfNotPresent, s.get(1..)?),
            b'=' => (AnchorKind::Equality, s.get(1..)?),
            b'^' => (AnchorKind::Existence, s.get(1..)?),
            _ => (AnchorKind::Condition, s),
        };
        let key = rest.strip_prefix('(')?.strip_suffix(')')?;
        // `.+`: at least one character, and no line break.
        if key.is_empty() || key.contains('\n') {
            return None;
        }
        Some(Anchor {
            kind,
            key: key.to_string(),
        })
    }

    /// `anchor.String`: the key written back with this anchor's modifier.
    pub fn render(kind: AnchorKind, key: &str) -> String {
        format!("{}({key})", kind.modifier())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_kind() {
        let p = |s: &str| Anchor::parse(s).map(|a| (a.kind, a.key));
        assert_eq!(p("(name)"), Some((AnchorKind::Condition, "name".into())));
        assert_eq!(p("=(name)"), Some((AnchorKind::Equality, "name".into())));
        assert_eq!(p("^(name)"), Some((AnchorKind::Existence, "name".into())));
        assert_eq!(p("X(name)"), Some((AnchorKind::Negation, "name".into())));
        assert_eq!(p("<(name)"), Some((AnchorKind::Global, "name".into())));
        assert_eq!(
            p("+(name)"),
            Some((AnchorKind::AddIfNotPresent, "name".into()))
        );
        assert_eq!(p("  (name) "), Some((AnchorKind::Condition, "name".into())));
        assert_eq!(p("((a))"), Some((AnchorKind::Condition, "(a)".into())));
        assert_eq!(p("=(a)(b)"), Some((AnchorKind::Equality, "a)(b".into())));
        assert_eq!(p("name"), None);
        assert_eq!(p("()"), None);
        assert_eq!(p("=()"), None);
        assert_eq!(p("Y(name)"), None);
        assert_eq!(p("(name"), None);
        assert_eq!(p("(a\nb)"), None);
        assert_eq!(p(""), None);
        assert_eq!(Anchor::render(AnchorKind::Equality, "app"), "=(app)");
        assert_eq!(Anchor::render(AnchorKind::Condition, "app"), "(app)");
    }
}
