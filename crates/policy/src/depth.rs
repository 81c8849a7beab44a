//! The byte scan that runs on every request body before sonic-rs (which parses recursively)
//! sees it, 64 bytes at a time: it bounds nesting and finds keys that appear twice in one
//! object.
//!
//! **Nesting.** [`scan`] answers [`Scan::TooDeep`] exactly when
//! `document::json_depth_bytes(text) > limit`: the same string and escape rules, the same
//! saturating count of closing brackets. The byte loop of `json_depth_bytes` costs about as
//! much as parsing the body; here a 64-byte block without backslashes is done with bit masks:
//! - one bit per byte for `"`, `[`/`{`, `]`/`}` and `:` (compares the compiler vectorises, bits
//!   gathered by multiplication);
//! - the bytes inside strings are the prefix XOR of the quote bits (a quote toggles the state),
//!   continued from the previous block;
//! - brackets and colons outside strings are then visited in order, lowest bit first.
//!
//! A block with a backslash, or one that starts right after a backslash inside a string, has
//! the quotes its backslashes escape taken out of the quote mask first (one step per escaping
//! backslash) and then goes the same way; only a block with a backslash outside strings (not
//! JSON) is run through the byte loop, whose answer is the exact one. Escapes are common in
//! what the API server sends: managed fields' keys (`k:{\"type\":\"Ready\"}`) are full of
//! them. One pass over the body first says whether it has any backslash at all.
//!
//! **Duplicate keys** (see [`crate::duplicates`] for why they are refused). In valid JSON the
//! key of a member is the last string closed before its `:`, so the scan keeps the positions
//! of the last opening and closing quotes and, at each colon outside strings, records the raw
//! bytes between them on a stack of the open objects' keys (16 bytes per object and per key:
//! a fingerprint and an offset; nothing is copied; an empty `{}`, which managed fields are full
//! of, takes no entry). When an object closes, its keys are
//! compared: pairwise up to
//! [`PAIRWISE`] keys (most Kubernetes objects have fewer), by a sort of their fingerprints
//! beyond. Keys are compared as written, which is exact for keys whose only escapes are `\"`
//! and `\\` (those two characters cannot appear unescaped, so such a key has one spelling);
//! a key with any other escape (`"a"` and `"\u0061"` are the same key) is respelt that way
//! first, and one the respelling does not take (a lone surrogate, which sonic-rs may read its
//! own way) makes the answer [`Scan::MaybeDuplicate`]. The masks say where such escapes are,
//! so no key is read twice. That answer sends the caller to [`crate::duplicates::find`], the
//! tree walk over the parse, which names the duplicate exactly as before: the scan only says
//! whether the walk is needed, and for texts sonic-rs accepts it says so exactly when the walk
//! finds a duplicate (`tests/duplicate_scan.rs` checks it against the walk on random JSON).
//! For text that is not JSON the key answer means nothing, and the parse refuses it anyway.

const BLOCK: usize = 64;

/// Objects with at most this many keys are checked pairwise when they close; larger ones by
/// sorting their keys' fingerprints.
const PAIRWISE: usize = 16;

/// What [`scan`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// `[` and `{` outside strings nest deeper than the limit.
    TooDeep,
    /// Within the limit, and (if the text is JSON) no object has a key twice.
    Clean,
    /// Within the limit, and some object has a key twice, or may have (a key the scan does not
    /// decode): [`crate::duplicates::find`] on the parsed text names it.
    MaybeDuplicate,
}

/// Scans `text` once: whether it nests deeper than `limit` (exactly
/// `json_depth_bytes(text) > limit`) and, if not, whether some object has a key twice.
pub fn scan(text: &[u8], limit: usize) -> Scan {
    let mut scanner = Scanner::new(text, limit);
    match scanner.run() {
        Err(TooDeep) => Scan::TooDeep,
        Ok(()) if scanner.keys.maybe_duplicate => Scan::MaybeDuplicate,
        Ok(()) => Scan::Clean,
    }
}

/// The nesting passed the limit.
struct TooDeep;

struct Scanner<'t> {
    text: &'t [u8],
    limit: usize,
    depth: usize,
    in_string: bool,
    /// Inside a string, the previous byte was an unescaped backslash.
    escaped: bool,
    /// Where the last string opened and closed (the quotes' offsets); a key is the last string
    /// closed before its colon.
    open_quote: usize,
    close_quote: usize,
    /// Where the last escape other than `\"` and `\\` is (the byte after its backslash; 0 for
    /// none): a key after whose opening quote one lies has more than one spelling and is
    /// decoded before it is compared.
    odd_escape: usize,
    any_backslash: bool,
    keys: Keys,
}

impl<'t> Scanner<'t> {
    fn new(text: &'t [u8], limit: usize) -> Scanner<'t> {
        Scanner {
            text,
            limit,
            depth: 0,
            in_string: false,
            escaped: false,
            open_quote: 0,
            close_quote: 0,
            odd_escape: 0,
            // Most bodies have no backslash at all: one vectorised pass says so.
            any_backslash: text.iter().fold(0u8, |acc, &b| acc | u8::from(b == b'\\')) != 0,
            keys: Keys::new(text),
        }
    }

    fn run(&mut self) -> Result<(), TooDeep> {
        let text = self.text;
        let mut blocks = text.chunks_exact(BLOCK);
        let mut at = 0;
        for block in blocks.by_ref() {
            let Ok(block) = <&[u8; BLOCK]>::try_from(block) else {
                continue;
            };
            self.dispatch(block, at)?;
            at += BLOCK;
        }
        // The last partial block, padded with spaces (which change nothing), goes the same
        // way: the byte loop costs about as much per byte as the masks per block.
        let rest = blocks.remainder();
        if rest.is_empty() {
            return Ok(());
        }
        let mut padded = [b' '; BLOCK];
        if let Some(head) = padded.get_mut(..rest.len()) {
            head.copy_from_slice(rest);
        }
        self.dispatch(&padded, at)
    }

    #[inline(always)]
    fn dispatch(&mut self, block: &[u8; BLOCK], at: usize) -> Result<(), TooDeep> {
        if self.any_backslash {
            let backslashes = mask(block, |b| b == b'\\');
            if backslashes != 0 || self.escaped {
                return self.escaped_block(block, at, backslashes);
            }
        }
        self.block(block, at, mask(block, |b| b == b'"'), 0)
    }

    /// A block with backslashes (or starting right after one): the quotes they escape are
    /// taken out of the quote mask and the block goes through the bit masks like any other,
    /// when every backslash is inside a string (always, in JSON: managed fields' keys such as
    /// `k:{\"type\":\"Ready\"}` are full of them). A backslash outside strings (not JSON)
    /// sends the block to the byte loop, whose answer is the exact one.
    fn escaped_block(
        &mut self,
        block: &[u8; BLOCK],
        at: usize,
        backslashes: u64,
    ) -> Result<(), TooDeep> {
        let escaped = escapes(backslashes, self.escaped);
        let all_quotes = mask(block, |b| b == b'"');
        let quotes = all_quotes & !escaped;
        let carry = if self.in_string { u64::MAX } else { 0 };
        let inside = prefix_xor(quotes) ^ carry;
        if backslashes & !inside != 0 {
            return self.bytes(block, at);
        }
        // A last byte that is an unescaped backslash escapes the next block's first byte.
        self.escaped = (backslashes & !escaped) >> 63 == 1;
        // Escaped bytes other than `"` and `\\`: `\n`, `\/`, `\u0061`... name a character
        // that has another spelling.
        let odd = escaped & !(all_quotes | backslashes);
        self.block(block, at, quotes, odd)
    }

    /// One block whose unescaped quotes are `quotes` and whose escapes other than `\"` and
    /// `\\` are `odd`, starting at offset `at`, by bit masks.
    #[inline(always)]
    fn block(
        &mut self,
        block: &[u8; BLOCK],
        at: usize,
        quotes: u64,
        odd: u64,
    ) -> Result<(), TooDeep> {
        // `[` and `{` differ only in bit 5, as do `]` and `}`; no other byte maps onto them.
        // One mask for the brackets and colons: the byte itself then says which it is.
        let structural = mask(block, |b| {
            let folded = b | 0x20;
            folded == b'{' || folded == b'}' || b == b':'
        });
        let carry = if self.in_string { u64::MAX } else { 0 };
        let inside = prefix_xor(quotes) ^ carry;
        // A quote that opens a string is inside it; one that closes it is not.
        let open_quotes = quotes & inside;
        let close_quotes = quotes & !inside;
        let mut events = structural & !inside;
        self.in_string = inside >> 63 == 1;
        while events != 0 {
            let bit = events & events.wrapping_neg();
            let offset = bit.trailing_zeros() as usize;
            match block.get(offset).copied().unwrap_or_default() {
                b':' => {
                    let before = bit - 1;
                    let open = last(open_quotes & before, at).unwrap_or(self.open_quote);
                    let close = last(close_quotes & before, at).unwrap_or(self.close_quote);
                    let odd = last(odd & before, at).unwrap_or(self.odd_escape);
                    self.colon(open, close, odd > open);
                }
                // `{}` (every leaf of managed fields' `fieldsV1`): nesting only, no keys to
                // compare; its `}` is not visited.
                b'{' if block.get(offset + 1) == Some(&b'}') => {
                    if self.depth >= self.limit {
                        return Err(TooDeep);
                    }
                    events &= !(bit << 1);
                }
                b'{' => self.open(true)?,
                b'[' => self.open(false)?,
                b => self.close(b == b'}'),
            }
            events ^= bit;
        }
        if let Some(q) = last(open_quotes, at) {
            self.open_quote = q;
        }
        if let Some(q) = last(close_quotes, at) {
            self.close_quote = q;
        }
        if let Some(e) = last(odd, at) {
            self.odd_escape = e;
        }
        Ok(())
    }

    /// The byte loop of `json_depth_bytes`, plus the colons; `text` starts at offset `at`.
    fn bytes(&mut self, text: &[u8], at: usize) -> Result<(), TooDeep> {
        for (i, &b) in text.iter().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    if b != b'"' && b != b'\\' {
                        self.odd_escape = at + i;
                    }
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    self.close_quote = at + i;
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    self.open_quote = at + i;
                }
                b'[' | b'{' => self.open(b == b'{')?,
                b']' | b'}' => self.close(b == b'}'),
                b':' => self.colon(
                    self.open_quote,
                    self.close_quote,
                    self.odd_escape > self.open_quote,
                ),
                _ => {}
            }
        }
        Ok(())
    }

    /// `[` or `{`; only objects have keys, so only `{` opens a frame of the key stack.
    #[inline(always)]
    fn open(&mut self, object: bool) -> Result<(), TooDeep> {
        self.depth += 1;
        if self.depth > self.limit {
            return Err(TooDeep);
        }
        if object {
            self.keys.open();
        }
        Ok(())
    }

    /// `]` or `}`.
    #[inline(always)]
    fn close(&mut self, object: bool) {
        self.depth = self.depth.saturating_sub(1);
        if object {
            self.keys.close(self.text);
        }
    }

    /// A colon outside strings: the key is the string between the quotes at `open` and
    /// `close` (in valid JSON; otherwise whatever it is, or nothing); `odd` when it holds an
    /// escape other than `\"` and `\\`.
    #[inline(always)]
    fn colon(&mut self, open: usize, close: usize, odd: bool) {
        if open < close
            && let Some(key) = self.text.get(open + 1..close)
        {
            self.keys.key(key, open + 1, odd);
        }
    }
}

/// The bytes of a block that a backslash escapes, given its backslashes and whether its first
/// byte is escaped by the previous block's last: each unescaped backslash escapes the byte
/// after it (a backslash it escapes escapes nothing). One step per escaping backslash.
#[inline(always)]
fn escapes(backslashes: u64, first_escaped: bool) -> u64 {
    let mut escaped = u64::from(first_escaped);
    let mut rest = backslashes & !escaped;
    while rest != 0 {
        let bit = rest & rest.wrapping_neg();
        let next = bit << 1;
        escaped |= next;
        rest &= !(bit | next);
    }
    escaped
}

/// The offset of the highest set bit of `bits` in the block at `at`.
#[inline(always)]
fn last(bits: u64, at: usize) -> Option<usize> {
    if bits == 0 {
        None
    } else {
        Some(at + 63 - bits.leading_zeros() as usize)
    }
}

/// One entry of the key stack (16 bytes): an object, or one of its keys.
#[derive(Clone, Copy)]
struct Entry {
    fingerprint: u64,
    /// For an object, the index of the enclosing object's entry (or `NONE`); for a key, where
    /// its bytes start: in the text, or in `decoded` when `len` has [`DECODED`] set.
    start: u32,
    /// [`OBJECT`] for an object; a key's length, with [`DECODED`] for a decoded key.
    len: u32,
}

const OBJECT: u32 = u32::MAX;
const DECODED: u32 = 1 << 31;
const NONE: u32 = u32::MAX;

/// The keys of the open objects, innermost last.
struct Keys {
    stack: Vec<Entry>,
    /// The index of the innermost open object's entry, or `NONE`.
    top: u32,
    decoded: Vec<u8>,
    maybe_duplicate: bool,
}

impl Keys {
    fn new(text: &[u8]) -> Keys {
        Keys {
            // Enough for the open objects' keys of most Kubernetes objects: one allocation.
            stack: Vec::with_capacity(128),
            top: NONE,
            decoded: Vec::new(),
            // Offsets are kept as 31 bits; a longer text (far beyond any body limit) is left
            // to the tree walk.
            maybe_duplicate: text.len() >= DECODED as usize,
        }
    }

    #[inline(always)]
    fn open(&mut self) {
        if self.maybe_duplicate {
            return;
        }
        let index = self.stack.len() as u32;
        self.stack.push(Entry {
            fingerprint: 0,
            start: self.top,
            len: OBJECT,
        });
        self.top = index;
    }

    /// A key as it is written (between its quotes); `odd` when it holds an escape other than
    /// `\"` and `\\`. Written with only those two escapes, a key has one spelling (`"` and `\\`
    /// cannot appear unescaped), so such keys compare as written, escaped quotes included
    /// (managed fields' `k:{\"name\":\"app\"}`); an odd one is first rewritten to that
    /// spelling.
    #[inline(always)]
    fn key(&mut self, raw: &[u8], start: usize, odd: bool) {
        if self.maybe_duplicate || self.top == NONE {
            return;
        }
        if odd {
            let from = self.decoded.len();
            if respell(raw, &mut self.decoded).is_none() || self.decoded.len() >= DECODED as usize {
                self.maybe_duplicate = true;
                return;
            }
            let decoded = self.decoded.get(from..).unwrap_or_default();
            self.stack.push(Entry {
                fingerprint: fingerprint(decoded),
                start: from as u32,
                len: decoded.len() as u32 | DECODED,
            });
            return;
        }
        self.stack.push(Entry {
            fingerprint: fingerprint(raw),
            start: start as u32,
            len: raw.len() as u32,
        });
    }

    /// The innermost object closes: are any of its keys equal?
    #[inline(always)]
    fn close(&mut self, text: &[u8]) {
        if self.maybe_duplicate || self.top == NONE {
            return;
        }
        let top = self.top as usize;
        let enclosing = self.stack.get(top).map_or(NONE, |e| e.start);
        if self.stack.len() <= top + 2 {
            // No key or one: nothing to compare.
            self.stack.truncate(top);
            self.top = enclosing;
            return;
        }
        let decoded = &self.decoded;
        let bytes = |e: &Entry| {
            let (from, len) = if e.len & DECODED != 0 {
                (decoded.as_slice(), (e.len & !DECODED) as usize)
            } else {
                (text, e.len as usize)
            };
            let start = e.start as usize;
            from.get(start..start + len).unwrap_or_default()
        };
        let keys = self.stack.get_mut(top + 1..).unwrap_or_default();
        let duplicate = if keys.len() <= PAIRWISE {
            keys.iter().enumerate().any(|(i, a)| {
                keys.get(i + 1..)
                    .unwrap_or_default()
                    .iter()
                    .any(|b| a.fingerprint == b.fingerprint && bytes(a) == bytes(b))
            })
        } else {
            keys.sort_unstable_by_key(|e| e.fingerprint);
            // Equal keys have equal fingerprints, so they end up next to each other; keys with
            // the same fingerprint are compared pairwise (different keys rarely share one).
            let mut duplicate = false;
            let mut run = 0;
            while run < keys.len() && !duplicate {
                let fp = keys.get(run).map_or(0, |e| e.fingerprint);
                let end = keys
                    .get(run..)
                    .unwrap_or_default()
                    .iter()
                    .position(|e| e.fingerprint != fp)
                    .map_or(keys.len(), |n| run + n);
                let group = keys.get(run..end).unwrap_or_default();
                duplicate = group.iter().enumerate().any(|(i, a)| {
                    group
                        .get(i + 1..)
                        .unwrap_or_default()
                        .iter()
                        .any(|b| bytes(a) == bytes(b))
                });
                run = end;
            }
            duplicate
        };
        if duplicate {
            self.maybe_duplicate = true;
            return;
        }
        self.stack.truncate(top);
        self.top = enclosing;
    }
}

/// A cheap fingerprint of a key: its length and its first and last bytes, read as words
/// (overlapping for short keys; copying a key into a buffer first would cost a
/// store-forwarding stall per key).
#[inline(always)]
fn fingerprint(key: &[u8]) -> u64 {
    let n = key.len();
    let word = if let (Some(head), Some(tail)) = (key.first_chunk::<8>(), key.last_chunk::<8>()) {
        u64::from_le_bytes(*head) ^ u64::from_le_bytes(*tail).rotate_left(29)
    } else if let (Some(head), Some(tail)) = (key.first_chunk::<4>(), key.last_chunk::<4>()) {
        u64::from(u32::from_le_bytes(*head)) | (u64::from(u32::from_le_bytes(*tail)) << 32)
    } else {
        let byte = |i: usize| u64::from(key.get(i).copied().unwrap_or_default());
        byte(0) | (byte(n / 2) << 8) | (byte(n.saturating_sub(1)) << 16)
    };
    (word ^ (n as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Appends the JSON string body `raw` (between its quotes) to `out` in its one spelling that
/// escapes only `"` and `\\`; `None` for an escape this does not take (invalid ones, lone
/// surrogates).
fn respell(raw: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut i = 0;
    while let Some(&b) = raw.get(i) {
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let simple = match raw.get(i + 1)? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => 0,
            _ => return None,
        };
        if raw.get(i + 1) != Some(&b'u') {
            if simple == b'"' || simple == b'\\' {
                out.push(b'\\');
            }
            out.push(simple);
            i += 2;
            continue;
        }
        let high = hex4(raw.get(i + 2..i + 6)?)?;
        i += 6;
        let code = match high {
            0xD800..=0xDBFF => {
                if raw.get(i..i + 2) != Some(b"\\u") {
                    return None;
                }
                let low = hex4(raw.get(i + 2..i + 6)?)?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return None;
                }
                i += 6;
                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            }
            0xDC00..=0xDFFF => return None,
            c => c,
        };
        let c = char::from_u32(code)?;
        if c == '"' || c == '\\' {
            out.push(b'\\');
        }
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
    Some(())
}

fn hex4(digits: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + char::from(d).to_digit(16)?;
    }
    Some(v)
}

/// One bit per byte of the block where `pick` holds. The compares run as vector compares into
/// 0/1 bytes; a multiply then gathers each 8 such bytes into 8 bits (byte `i`'s bit 0 lands on
/// bit 56 + `i`, and no two partial products meet).
#[inline(always)]
fn mask(block: &[u8; BLOCK], pick: impl Fn(u8) -> bool) -> u64 {
    let mut flags = [0u8; BLOCK];
    for (flag, &b) in flags.iter_mut().zip(block.iter()) {
        *flag = u8::from(pick(b));
    }
    let mut m = 0u64;
    for (k, word) in flags.chunks_exact(8).enumerate() {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let gathered = u64::from_le_bytes(bytes).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        m |= gathered << (8 * k);
    }
    m
}

/// Bit `i` of the result is the XOR of bits `0..=i` of `x`.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::document::json_depth_bytes;

    fn exceeds(text: &[u8], limit: usize) -> bool {
        scan(text, limit) == Scan::TooDeep
    }

    /// xorshift64* from `seed`: deterministic random texts, no dependency.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            seed.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
    }

    fn agree(text: &[u8]) {
        let depth = json_depth_bytes(text);
        for limit in [0, 1, 2, depth.saturating_sub(1), depth, depth + 1, 128] {
            assert_eq!(
                exceeds(text, limit),
                depth > limit,
                "limit {limit}, depth {depth}: {:?}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn agrees_with_the_byte_loop_on_chosen_texts() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let long_string = format!("[\"{}\"]", "[{".repeat(100));
        // `{}` inside a block, and split by a block's end (offsets 63 and 64).
        let empty = |n: usize| format!("{}{{}}{}", "[".repeat(n), "]".repeat(n));
        let cases: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"{}".to_vec(),
            br#"{"a":[1,{"b":"]]]}}"}],"c":"\\\"[["}"#.to_vec(),
            deep.into_bytes(),
            "[".repeat(10_000).into_bytes(),
            "]]]]".repeat(40).into_bytes(),
            long_string.into_bytes(),
            empty(3).into_bytes(),
            empty(62).into_bytes(),
            empty(63).into_bytes(),
            empty(64).into_bytes(),
            br#"\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["#
                .to_vec(),
        ];
        for text in cases {
            agree(&text);
        }
    }

    #[test]
    fn agrees_with_the_byte_loop_on_random_texts() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        let alphabets: [&[u8]; 4] = [
            b"[]{}\"\\a ",
            b"[[{{]}\"a,:1",
            b"[{\"\"\"aaaaaaaa]}",
            b"{\"a\":\\u0061,}",
        ];
        for round in 0..3000 {
            let alphabet = alphabets[round % alphabets.len()];
            let len = (next() % 400) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            agree(&text);
        }
    }

    #[test]
    fn escapes_follow_runs_of_backslashes() {
        // Three backslashes: the first escapes the second, the third the byte after it.
        assert_eq!(escapes(0b0111, false), 0b1010);
        // The first byte escaped by the previous block: the run starts one later.
        assert_eq!(escapes(0b0111, true), 0b0101);
        assert_eq!(escapes(1 << 63, false), 0);
        assert_eq!(escapes(0, true), 1);
    }

    #[test]
    fn agrees_with_the_byte_loop_on_strings_full_of_escapes() {
        // JSON-shaped texts whose strings hold escaped quotes and backslashes across block
        // boundaries, so that the blocks go through the bit masks with escapes taken out.
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let inside: [&[u8]; 7] = [b"a", b"\\\"", b"\\\\", b"[", b"{", b":", b"\\n"];
        let outside: [&[u8]; 6] = [b"[", b"]", b"{", b"}", b":", b","];
        for _ in 0..3000 {
            let mut text = Vec::new();
            while text.len() < 300 {
                if next().is_multiple_of(3) {
                    text.push(b'"');
                    for _ in 0..next() % 40 {
                        text.extend_from_slice(inside[(next() % 7) as usize]);
                    }
                    text.push(b'"');
                } else {
                    text.extend_from_slice(outside[(next() % 6) as usize]);
                }
            }
            agree(&text);
        }
        // Managed fields' keys, past the first block: equal ones are found, different ones not.
        let fields = |second: &str| {
            let before: String = (0..9).map(|i| format!("\"f:x{i}\":{{}},")).collect();
            format!(
                "{{{before}\"k:{{\\\"type\\\":\\\"Ready\\\"}}\":{{}},\"k:{{\\\"type\\\":\\\"{second}\\\"}}\":1}}"
            )
        };
        assert_eq!(scan(fields("Ready").as_bytes(), 128), Scan::MaybeDuplicate);
        assert_eq!(scan(fields("Other").as_bytes(), 128), Scan::Clean);
    }

    #[test]
    fn finds_duplicate_keys() {
        let check = |text: &str| scan(text.as_bytes(), 128);
        assert_eq!(
            check(r#"{"a":1,"b":{"c":[{"d":1},{"d":1,"d":2}]}}"#),
            Scan::MaybeDuplicate
        );
        assert_eq!(check(r#"{"a":1,"a":2}"#), Scan::MaybeDuplicate);
        assert_eq!(check(r#"{"a":1,"\u0061":2}"#), Scan::MaybeDuplicate);
        assert_eq!(check(r#"{"a":1,"b":2,"c":[1,2,{"x":{}}]}"#), Scan::Clean);
        assert_eq!(check("[]"), Scan::Clean);
        let many: Vec<String> = (0..400).map(|i| format!("\"k{i}\":{i}")).collect();
        assert_eq!(check(&format!("{{{}}}", many.join(","))), Scan::Clean);
        let dup = format!("{{{},\"k7\":0}}", many.join(","));
        assert_eq!(check(&dup), Scan::MaybeDuplicate);
        // One key spelt two ways, the second with an escape that needs respelling.
        assert_eq!(check(r#"{"a\"b":1,"a\u0022b":2}"#), Scan::MaybeDuplicate);
        assert_eq!(check(r#"{"\\":1,"\u005c":2}"#), Scan::MaybeDuplicate);
        assert_eq!(check(r#"{"a/":1,"a\/":2}"#), Scan::MaybeDuplicate);
        assert_eq!(check(r#"{"a\"b":1,"a\u0022c":2,"a\\b":3}"#), Scan::Clean);
        // An odd escape in a value does not make the next key odd.
        assert_eq!(
            check(r#"{"a":"\n","b\"":1,"b\u0022":2}"#),
            Scan::MaybeDuplicate
        );
        assert_eq!(check(r#"{"a":"\n","b\"":1,"c\"":2}"#), Scan::Clean);
        // A lone surrogate is not decoded: the tree walk decides.
        assert_eq!(check(r#"{"\ud800":1}"#), Scan::MaybeDuplicate);
        // Too deep wins over a duplicate found before the limit is passed.
        let deep = format!(
            "{{\"a\":1,\"a\":2,\"b\":{}{}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(check(&deep), Scan::TooDeep);
    }
}
