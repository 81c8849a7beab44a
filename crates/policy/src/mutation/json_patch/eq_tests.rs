//! The word-wise string comparison against `==`, for every length around the word sizes.

use super::*;

#[test]
fn str_eq_agrees_with_eq() {
    for len in 0..40 {
        let base: String = (0..len)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        assert!(str_eq(&base, &base.clone()), "{len}");
        for at in 0..len {
            let mut other = base.clone().into_bytes();
            other[at] = b'#';
            let other = String::from_utf8(other).unwrap();
            assert!(!str_eq(&base, &other), "{len} {at}");
        }
        assert!(!str_eq(&base, &format!("{base}x")));
    }
    assert!(str_eq("é", "é"));
    assert!(!str_eq("é", "è"));
}
