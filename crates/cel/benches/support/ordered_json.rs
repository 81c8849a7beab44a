//! A tiny JSON tree that keeps object keys in the order written, so the generated Pods are the
//! same bytes on every run. (Objects built with sonic-rs's `json!` are hash maps with a random
//! seed: their key order, and so the bytes, would change from run to run.)

/// A JSON value whose objects keep their insertion order.
#[derive(Debug, Clone)]
pub enum J {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

/// Builds a `J` with JSON-like syntax. Values are single tokens: literals, identifiers,
/// nested `{...}` / `[...]`, or any expression in parentheses.
macro_rules! j {
    ({ $($k:literal : $v:tt),* $(,)? }) => {
        $crate::support::ordered_json::J::Obj(vec![$(($k.to_string(), j!($v))),*])
    };
    ([ $($v:tt),* $(,)? ]) => {
        $crate::support::ordered_json::J::Arr(vec![$(j!($v)),*])
    };
    ($e:expr) => {
        $crate::support::ordered_json::J::from($e)
    };
}
pub(crate) use j;

impl From<bool> for J {
    fn from(b: bool) -> J {
        J::Bool(b)
    }
}

impl From<i32> for J {
    fn from(i: i32) -> J {
        J::Int(i64::from(i))
    }
}

impl From<i64> for J {
    fn from(i: i64) -> J {
        J::Int(i)
    }
}

impl From<usize> for J {
    fn from(i: usize) -> J {
        J::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}

impl From<&str> for J {
    fn from(s: &str) -> J {
        J::Str(s.to_string())
    }
}

impl From<String> for J {
    fn from(s: String) -> J {
        J::Str(s)
    }
}

impl From<&[&str]> for J {
    fn from(items: &[&str]) -> J {
        J::Arr(items.iter().map(|s| J::from(*s)).collect())
    }
}

impl From<Vec<J>> for J {
    fn from(items: Vec<J>) -> J {
        J::Arr(items)
    }
}

impl J {
    /// Appends a key to an object (no effect on other kinds).
    pub fn push(&mut self, key: &str, value: J) {
        if let J::Obj(entries) = self {
            entries.push((key.to_string(), value));
        }
    }

    /// Compact JSON text.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = String::new();
        self.write(&mut out);
        out.into_bytes()
    }

    fn write(&self, out: &mut String) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Int(i) => out.push_str(&i.to_string()),
            J::Str(s) => write_str(s, out),
            J::Arr(items) => {
                out.push('[');
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            J::Obj(entries) => {
                out.push('{');
                for (n, (k, v)) in entries.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    write_str(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}
