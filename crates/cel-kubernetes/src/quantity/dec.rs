//! Arbitrary-precision decimals for quantities that do not fit Kubernetes' int64 fast path,
//! behaving like the `inf.Dec` values `resource.Quantity` falls back to: an unscaled
//! integer and a scale counting digits after the decimal point (`value = unscaled * 10^-scale`).
//!
//! Magnitudes are little-endian limbs in base 10^9, which makes the decimal work (parsing,
//! shifting by powers of ten, rounding to a scale) cheap. Nothing here grows without bound:
//! a result with more than [`MAX_DIGITS`] digits is refused with [`TooLarge`], where
//! Kubernetes would go on to allocate and compute with it.

use std::cmp::Ordering;

const BASE: u32 = 1_000_000_000;
const BASE_DIGITS: usize = 9;

/// The most decimal digits an unscaled value may have.
pub const MAX_DIGITS: usize = 10_000;

/// A result would need more than [`MAX_DIGITS`] digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TooLarge;

const POW10: [u32; 10] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

/// A magnitude: base-10^9 limbs, least significant first, no high zero limbs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Mag(Vec<u32>);

impl Mag {
    fn zero() -> Mag {
        Mag(Vec::new())
    }

    fn from_u64(mut v: u64) -> Mag {
        let mut limbs = Vec::new();
        while v > 0 {
            limbs.push((v % u64::from(BASE)) as u32);
            v /= u64::from(BASE);
        }
        Mag(limbs)
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    /// Parses ASCII decimal digits (the caller has checked them).
    fn from_digits(digits: &[u8]) -> Mag {
        let mut limbs = Vec::with_capacity(digits.len() / BASE_DIGITS + 1);
        let mut end = digits.len();
        while end > 0 {
            let start = end.saturating_sub(BASE_DIGITS);
            let limb = digits
                .get(start..end)
                .unwrap_or_default()
                .iter()
                .fold(0u32, |acc, d| acc * 10 + u32::from(d.wrapping_sub(b'0')));
            limbs.push(limb);
            end = start;
        }
        let mut m = Mag(limbs);
        m.trim();
        m
    }

    fn digits(&self) -> usize {
        match self.0.last() {
            None => 0,
            Some(&top) => {
                let mut n = 1;
                while n < 10 && top >= POW10.get(n).copied().unwrap_or(u32::MAX) {
                    n += 1;
                }
                (self.0.len() - 1) * BASE_DIGITS + n
            }
        }
    }

    fn cmp(&self, other: &Mag) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    fn add(&self, other: &Mag) -> Mag {
        let n = self.0.len().max(other.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u32;
        for i in 0..n {
            let s =
                self.0.get(i).copied().unwrap_or(0) + other.0.get(i).copied().unwrap_or(0) + carry;
            carry = u32::from(s >= BASE);
            out.push(if s >= BASE { s - BASE } else { s });
        }
        if carry > 0 {
            out.push(carry);
        }
        Mag(out)
    }

    /// `self - other`, for `self >= other`.
    fn sub(&self, other: &Mag) -> Mag {
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0u32;
        for (i, &a) in self.0.iter().enumerate() {
            let b = other.0.get(i).copied().unwrap_or(0) + borrow;
            if a >= b {
                out.push(a - b);
                borrow = 0;
            } else {
                out.push(a + BASE - b);
                borrow = 1;
            }
        }
        let mut m = Mag(out);
        m.trim();
        m
    }

    fn mul_small(&self, k: u32) -> Mag {
        if k == 0 || self.is_zero() {
            return Mag::zero();
        }
        let mut out = Vec::with_capacity(self.0.len() + 1);
        let mut carry = 0u64;
        for &a in &self.0 {
            let p = u64::from(a) * u64::from(k) + carry;
            out.push((p % u64::from(BASE)) as u32);
            carry = p / u64::from(BASE);
        }
        while carry > 0 {
            out.push((carry % u64::from(BASE)) as u32);
            carry /= u64::from(BASE);
        }
        Mag(out)
    }

    /// `self * 10^k`.
    fn mul_pow10(&self, k: usize) -> Result<Mag, TooLarge> {
        if self.is_zero() {
            return Ok(Mag::zero());
        }
        if self.digits().saturating_add(k) > MAX_DIGITS {
            return Err(TooLarge);
        }
        let mut limbs = vec![0u32; k / BASE_DIGITS];
        limbs.extend_from_slice(&self.0);
        let m = Mag(limbs);
        Ok(m.mul_small(POW10.get(k % BASE_DIGITS).copied().unwrap_or(1)))
    }

    /// `self * 2^k`.
    fn mul_pow2(&self, mut k: u32) -> Mag {
        let mut m = self.clone();
        while k > 0 {
            let step = k.min(29);
            m = m.mul_small(1 << step);
            k -= step;
        }
        m
    }

    /// `self / 10^k` truncated, and whether the remainder is zero.
    fn div_pow10(&self, k: usize) -> (Mag, bool) {
        let drop = k / BASE_DIGITS;
        if drop >= self.0.len() {
            return (Mag::zero(), self.is_zero());
        }
        let mut exact = self.0.iter().take(drop).all(|&l| l == 0);
        let d = POW10.get(k % BASE_DIGITS).copied().unwrap_or(1);
        let mut out = vec![0u32; self.0.len() - drop];
        let mut rem = 0u64;
        for (i, &a) in self.0.iter().enumerate().skip(drop).rev() {
            let cur = rem * u64::from(BASE) + u64::from(a);
            if let Some(slot) = out.get_mut(i - drop) {
                *slot = (cur / u64::from(d)) as u32;
            }
            rem = cur % u64::from(d);
        }
        exact &= rem == 0;
        let mut m = Mag(out);
        m.trim();
        (m, exact)
    }

    /// `self / k` truncated, and the remainder.
    fn div_small(&self, k: u32) -> (Mag, u32) {
        let mut out = vec![0u32; self.0.len()];
        let mut rem = 0u64;
        for (i, &a) in self.0.iter().enumerate().rev() {
            let cur = rem * u64::from(BASE) + u64::from(a);
            if let Some(slot) = out.get_mut(i) {
                *slot = (cur / u64::from(k)) as u32;
            }
            rem = cur % u64::from(k);
        }
        let mut m = Mag(out);
        m.trim();
        (m, rem as u32)
    }

    fn to_decimal_string(&self) -> String {
        let mut s = String::with_capacity(self.0.len() * BASE_DIGITS);
        let mut limbs = self.0.iter().rev();
        match limbs.next() {
            None => s.push('0'),
            Some(top) => s.push_str(&top.to_string()),
        }
        for l in limbs {
            s.push_str(&format!("{l:09}"));
        }
        s
    }
}

/// A signed arbitrary-precision integer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BigInt {
    negative: bool,
    mag: Mag,
}

impl BigInt {
    pub fn zero() -> BigInt {
        BigInt::default()
    }

    pub fn from_i64(v: i64) -> BigInt {
        BigInt {
            negative: v < 0,
            mag: Mag::from_u64(v.unsigned_abs()),
        }
    }

    fn new(negative: bool, mag: Mag) -> BigInt {
        BigInt {
            negative: negative && !mag.is_zero(),
            mag,
        }
    }

    pub fn sign(&self) -> i64 {
        if self.mag.is_zero() {
            0
        } else if self.negative {
            -1
        } else {
            1
        }
    }

    pub fn is_zero(&self) -> bool {
        self.mag.is_zero()
    }

    pub fn neg(&self) -> BigInt {
        BigInt::new(!self.negative, self.mag.clone())
    }

    /// Decimal digits of the magnitude (0 for zero).
    pub fn digits(&self) -> usize {
        self.mag.digits()
    }

    pub fn add(&self, other: &BigInt) -> BigInt {
        if self.negative == other.negative {
            return BigInt::new(self.negative, self.mag.add(&other.mag));
        }
        match self.mag.cmp(&other.mag) {
            Ordering::Less => BigInt::new(other.negative, other.mag.sub(&self.mag)),
            _ => BigInt::new(self.negative, self.mag.sub(&other.mag)),
        }
    }

    pub fn cmp(&self, other: &BigInt) -> Ordering {
        match (self.sign(), other.sign()) {
            (a, b) if a != b => a.cmp(&b),
            (0, _) => Ordering::Equal,
            (1, _) => self.mag.cmp(&other.mag),
            _ => other.mag.cmp(&self.mag),
        }
    }

    pub fn mul_pow10(&self, k: usize) -> Result<BigInt, TooLarge> {
        Ok(BigInt::new(self.negative, self.mag.mul_pow10(k)?))
    }

    pub fn mul_pow2(&self, k: u32) -> BigInt {
        BigInt::new(self.negative, self.mag.mul_pow2(k))
    }

    /// Divides out every factor `k` (> 1): `self == result * k^times`; zero stays zero.
    pub fn remove_factors(&self, k: u32) -> (BigInt, i32) {
        let mut mag = self.mag.clone();
        let mut times = 0i32;
        while !mag.is_zero() {
            let (q, r) = mag.div_small(k);
            if r != 0 {
                break;
            }
            mag = q;
            times = times.wrapping_add(1);
        }
        (BigInt::new(self.negative, mag), times)
    }

    /// `self * k`.
    pub fn mul_small(&self, k: u32) -> BigInt {
        BigInt::new(self.negative, self.mag.mul_small(k))
    }

    /// The nearest double, ties to even, as Go's `big.Float.SetInt(x).Float64()` at 53 bits
    /// of precision; out of range is an infinity.
    pub fn to_f64(&self) -> f64 {
        let text = self.mag.to_decimal_string();
        let magnitude = text.parse::<f64>().unwrap_or(f64::INFINITY);
        if self.negative { -magnitude } else { magnitude }
    }
}

impl std::fmt::Display for BigInt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        f.write_str(&self.mag.to_decimal_string())
    }
}

/// A decimal as `inf.Dec`: `unscaled * 10^-scale`. The scale is kept as given (it is
/// observable through `asApproximateFloat`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dec {
    pub unscaled: BigInt,
    pub scale: i32,
}

impl Dec {
    pub fn new(unscaled: BigInt, scale: i32) -> Dec {
        Dec { unscaled, scale }
    }

    /// `inf.Dec.SetString`: an optional sign, digits with at most one decimal point, at least
    /// one digit; nothing else (`Ok(None)`). More than [`MAX_DIGITS`] significant digits is
    /// [`TooLarge`].
    pub fn parse(s: &str) -> Result<Option<Dec>, TooLarge> {
        let bytes = s.as_bytes();
        let (negative, rest) = match bytes.first() {
            Some(b'-') => (true, bytes.get(1..).unwrap_or_default()),
            Some(b'+') => (false, bytes.get(1..).unwrap_or_default()),
            _ => (false, bytes),
        };
        let mut digits = Vec::with_capacity(rest.len());
        let mut point: Option<usize> = None;
        for &b in rest {
            match b {
                b'0'..=b'9' => digits.push(b),
                b'.' if point.is_none() => point = Some(digits.len()),
                _ => return Ok(None),
            }
        }
        if digits.is_empty() {
            return Ok(None);
        }
        let scale = point.map_or(0, |p| digits.len() - p);
        let scale = i32::try_from(scale).map_err(|_| TooLarge)?;
        let mag = Mag::from_digits(&digits);
        if mag.digits() > MAX_DIGITS {
            return Err(TooLarge);
        }
        Ok(Some(Dec::new(BigInt::new(negative, mag), scale)))
    }

    pub fn sign(&self) -> i64 {
        self.unscaled.sign()
    }

    pub fn neg(&self) -> Dec {
        Dec::new(self.unscaled.neg(), self.scale)
    }

    /// The unscaled value at a larger scale.
    fn rescaled(&self, scale: i32) -> Result<BigInt, TooLarge> {
        let shift = i64::from(scale) - i64::from(self.scale);
        let shift = usize::try_from(shift).map_err(|_| TooLarge)?;
        self.unscaled.mul_pow10(shift)
    }

    /// `inf.Dec.Add`: the result has the larger of the two scales.
    pub fn add(&self, other: &Dec) -> Result<Dec, TooLarge> {
        let scale = self.scale.max(other.scale);
        Ok(Dec::new(
            self.rescaled(scale)?.add(&other.rescaled(scale)?),
            scale,
        ))
    }

    /// `inf.Dec.Sub`: the result has the larger of the two scales.
    pub fn sub(&self, other: &Dec) -> Result<Dec, TooLarge> {
        self.add(&other.neg())
    }

    /// `inf.Dec.Round(x, scale, inf.RoundUp)`: to `scale` digits after the point, rounding
    /// away from zero.
    pub fn round_up(&self, scale: i32) -> Result<Dec, TooLarge> {
        if self.unscaled.is_zero() {
            return Ok(Dec::new(BigInt::zero(), scale));
        }
        if scale >= self.scale {
            return Ok(Dec::new(self.rescaled(scale)?, scale));
        }
        let drop = i64::from(self.scale) - i64::from(scale);
        let drop = usize::try_from(drop).unwrap_or(usize::MAX);
        let (q, exact) = self.unscaled.mag.div_pow10(drop);
        let q = if exact { q } else { q.add(&Mag::from_u64(1)) };
        Ok(Dec::new(BigInt::new(self.unscaled.negative, q), scale))
    }

    /// Exact comparison of the values, without writing out scale differences that the
    /// magnitudes already decide.
    pub fn cmp(&self, other: &Dec) -> Ordering {
        let (sa, sb) = (self.sign(), other.sign());
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        // Position of the leading digit: value in [10^(e-1), 10^e).
        let ea = self.unscaled.digits() as i64 - i64::from(self.scale);
        let eb = other.unscaled.digits() as i64 - i64::from(other.scale);
        let by_magnitude = if ea != eb {
            ea.cmp(&eb)
        } else {
            // Same leading position: aligning adds at most as many digits as either has.
            let scale = self.scale.max(other.scale);
            match (self.rescaled(scale), other.rescaled(scale)) {
                (Ok(a), Ok(b)) => return a.cmp(&b),
                _ => return self.cmp_by_digits(other),
            }
        };
        if sa > 0 {
            by_magnitude
        } else {
            by_magnitude.reverse()
        }
    }

    /// Compares digit strings aligned at their leading digits (same leading position).
    fn cmp_by_digits(&self, other: &Dec) -> Ordering {
        let a = self.unscaled.mag.to_decimal_string();
        let b = other.unscaled.mag.to_decimal_string();
        let n = a.len().max(b.len());
        let pad = |s: &str| {
            let mut s = s.to_string();
            while s.len() < n {
                s.push('0');
            }
            s
        };
        let o = pad(&a).cmp(&pad(&b));
        if self.sign() > 0 { o } else { o.reverse() }
    }

    /// Go's `big.NewFloat(0).SetInt(unscaled).Float64()`.
    pub fn unscaled_f64(&self) -> f64 {
        self.unscaled.to_f64()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Dec {
        Dec::parse(s).unwrap().unwrap()
    }

    #[test]
    fn parses_like_inf_dec() {
        assert_eq!(dec("-1.50"), Dec::new(BigInt::from_i64(-150), 2));
        assert_eq!(dec(".5"), Dec::new(BigInt::from_i64(5), 1));
        assert_eq!(dec("1."), Dec::new(BigInt::from_i64(1), 0));
        assert_eq!(dec("+007"), Dec::new(BigInt::from_i64(7), 0));
        for bad in ["", ".", "-", "+.", "1.2.3", "1e3", " 1"] {
            assert_eq!(Dec::parse(bad), Ok(None), "{bad:?}");
        }
    }

    #[test]
    fn big_arithmetic() {
        let a = dec("999999999999999999999999999999");
        let b = dec("1");
        assert_eq!(
            a.add(&b).unwrap().unscaled.to_string(),
            "1000000000000000000000000000000"
        );
        assert_eq!(
            b.sub(&a).unwrap().unscaled.to_string(),
            "-999999999999999999999999999998"
        );
        assert_eq!(dec("1.5").add(&dec("0.25")).unwrap(), dec("1.75"));
        assert_eq!(
            BigInt::from_i64(3).mul_pow2(61).to_string(),
            "6917529027641081856"
        );
    }

    #[test]
    fn rounds_away_from_zero() {
        assert_eq!(dec("0.0000000001").round_up(9).unwrap(), dec("0.000000001"));
        assert_eq!(dec("-3.0011").round_up(3).unwrap(), dec("-3.002"));
        assert_eq!(dec("3.000").round_up(1).unwrap(), dec("3.0"));
        assert_eq!(dec("12").round_up(2).unwrap(), dec("12.00"));
    }

    #[test]
    fn compares_values() {
        assert_eq!(dec("1.0").cmp(&dec("1")), Ordering::Equal);
        assert_eq!(dec("0.999").cmp(&dec("1")), Ordering::Less);
        assert_eq!(dec("-2").cmp(&dec("-10")), Ordering::Greater);
        let huge = Dec::new(BigInt::from_i64(1), -2_000_000_000);
        assert_eq!(huge.cmp(&dec("5")), Ordering::Greater);
        assert_eq!(huge.neg().cmp(&dec("5")), Ordering::Less);
    }

    #[test]
    fn refuses_unbounded_growth() {
        let long = "1".repeat(MAX_DIGITS + 1);
        assert_eq!(Dec::parse(&long), Err(TooLarge));
        assert!(Dec::parse(&"1".repeat(MAX_DIGITS)).unwrap().is_some());
        assert_eq!(dec("1").round_up(i32::MAX), Err(TooLarge));
        assert_eq!(
            Dec::new(BigInt::from_i64(1), -2_000_000_000).add(&dec("1")),
            Err(TooLarge)
        );
    }

    #[test]
    fn converts_to_double() {
        assert_eq!(
            dec("123456789012345678901234567890").unscaled_f64(),
            1.2345678901234568e29
        );
        assert_eq!(BigInt::from_i64(-5).to_f64(), -5.0);
        let big = Dec::new(BigInt::from_i64(1).mul_pow10(400).unwrap(), 0);
        assert_eq!(big.unscaled_f64(), f64::INFINITY);
    }
}
