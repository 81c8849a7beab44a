//! Runtime cost accounting shared by the evaluator and the libraries, following cel-go's
//! `interpreter/runtimecost.go` and the constants of `common/cost.go`.

use crate::value::Value;

/// Reading a variable or selecting a field.
pub const SELECT_AND_IDENT: u64 = 1;
/// Building a list literal.
pub const LIST_CREATE_BASE: u64 = 10;
/// Building a map literal.
pub const MAP_CREATE_BASE: u64 = 30;
/// Building a message.
pub const STRUCT_CREATE_BASE: u64 = 40;
/// Multiplied by a string's length for one traversal.
pub const STRING_TRAVERSAL_FACTOR: f64 = 0.1;
/// Multiplied by a regex pattern's length for its cost per character matched.
pub const REGEX_LENGTH_FACTOR: f64 = 0.25;

/// The error cel-go reports when an evaluation exceeds its cost limit.
pub const LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

/// The most a regex search may be estimated to cost before it runs: a call's cost is charged
/// after it returns, and a search of a long text with a long pattern could otherwise run for
/// minutes. The per-call limit of the policy environments built on this core is the same.
pub const MAX_SEARCH_COST: u64 = 1_000_000;

/// cel-go's `actualSize`: code points of a string, length of bytes, lists and maps; 1 for
/// anything else.
#[inline]
pub fn actual_size(v: &Value<'_>) -> u64 {
    let n = match v {
        // Policy data is mostly ASCII, where code points are bytes; checking is cheaper than
        // counting.
        Value::String(s) if s.is_ascii() => s.len(),
        Value::String(s) => s.chars().count(),
        Value::Bytes(b) => b.len(),
        Value::List(l) => l.len(),
        Value::Map(m) => m.len(),
        _ => 1,
    };
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// `ceil(size * factor)`, as cel-go rounds every fractional cost.
pub fn scaled(size: u64, factor: f64) -> u64 {
    let c = (size as f64 * factor).ceil();
    if c >= u64::MAX as f64 {
        u64::MAX
    } else {
        c as u64
    }
}

/// One traversal of a string of `size` code points.
pub fn traversal(size: u64) -> u64 {
    scaled(size, STRING_TRAVERSAL_FACTOR)
}

/// Equality, ordering of strings and bytes: a traversal of the shorter operand. Scalars
/// have size 1, so comparing them costs 1.
pub fn compare(a: &Value<'_>, b: &Value<'_>) -> u64 {
    // Strings up to 10 bytes cost at most 1 whatever their code points: skip counting.
    if let (Value::String(x), Value::String(y)) = (a, b) {
        let shortest = x.len().min(y.len());
        if shortest <= 10 {
            return u64::from(shortest > 0);
        }
    }
    traversal(actual_size(a).min(actual_size(b)))
}

/// `s.matches(re)`: string traversal (plus one) times the pattern's weight.
pub fn matches(subject: &Value<'_>, pattern_len: u64) -> u64 {
    let s = scaled(
        actual_size(subject).saturating_add(1),
        STRING_TRAVERSAL_FACTOR,
    );
    s.saturating_mul(scaled(pattern_len, REGEX_LENGTH_FACTOR))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_cost_a_traversal_of_the_shorter_operand() {
        assert_eq!(compare(&Value::Int(1), &Value::Int(2)), 1);
        assert_eq!(compare(&Value::string(""), &Value::string("abc")), 0);
        let a = Value::string("12345678901234567890");
        let b = Value::string("123456789012345678901234567890");
        assert_eq!(compare(&a, &b), 2);
        let wide = Value::string("ééééééééééé"); // 11 code points, 22 bytes
        assert_eq!(compare(&wide, &wide), 2);
    }

    #[test]
    fn matches_multiplies_subject_and_pattern() {
        // cel-go charges 2 for '123'.matches('[0-9]'): ceil(0.4) * ceil(1.25).
        assert_eq!(matches(&Value::string("123"), 5), 2);
    }
}
