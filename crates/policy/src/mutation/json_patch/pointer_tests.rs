//! Escaping and unescaping of JSON Pointer keys, `~` and `/` included.

use super::*;

#[test]
fn escape_and_unescape() {
    assert_eq!(escape_key("k8s.io/x~y"), "k8s.io~1x~0y");
    assert_eq!(escape_key("plain"), "plain");
    assert_eq!(unescape_key("k8s.io~1x~0y"), "k8s.io/x~y");
    assert_eq!(unescape_key("~01"), "~1");
    assert_eq!(unescape_key("~~1~"), "~/~");
}
