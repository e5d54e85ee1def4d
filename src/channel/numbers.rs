//! Number spelling on the fd-3 wire (docs/protocol.md#numbers-on-the-wire): ECMAScript
//! `Number::toString`, except that an integral double beyond ±(2^53−1) is written as its exact
//! integer digits.

use crate::ledger::byte_meter::number_to_string;

/// 2^53 − 1.
pub const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// The exact decimal digits of |v| for an integral, finite double (no sign).
pub fn exact_integer_digits(v: f64) -> String {
    let v = v.abs();
    if v < 18_446_744_073_709_551_616.0 {
        return format!("{}", v as u64);
    }
    // v = mantissa × 2^exp with a 53-bit mantissa; multiply out in base 10^9 limbs (little endian).
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let mantissa = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let mut limbs: Vec<u64> = vec![mantissa % 1_000_000_000, (mantissa / 1_000_000_000) % 1_000_000_000];
    limbs.push(mantissa / 1_000_000_000_000_000_000);
    let mut left = exp; // positive: v ≥ 2^64 implies exp > 0
    while left > 0 {
        let shift = left.min(29);
        left -= shift;
        let mut carry = 0u64;
        for limb in limbs.iter_mut() {
            let x = (*limb << shift) + carry;
            *limb = x % 1_000_000_000;
            carry = x / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    while limbs.len() > 1 && *limbs.last().unwrap() == 0 {
        limbs.pop();
    }
    let mut out = format!("{}", limbs.last().unwrap());
    for limb in limbs.iter().rev().skip(1) {
        out.push_str(&format!("{limb:09}"));
    }
    out
}

/// Whether an integral double is spelled with exact digits rather than `Number::toString`.
fn spelled_exactly(v: f64) -> bool {
    v.fract() == 0.0 && v.abs() > MAX_SAFE
}

/// The wire spelling of a finite number.
pub fn wire_number(v: f64) -> String {
    if spelled_exactly(v) {
        let digits = exact_integer_digits(v);
        return if v < 0.0 { format!("-{digits}") } else { digits };
    }
    number_to_string(v)
}

/// Bytes of a number as the host would encode it: non-finite numbers as `null` (4), `-0` as `0`.
pub fn wire_number_len(v: f64) -> usize {
    if !v.is_finite() {
        return 4;
    }
    if spelled_exactly(v) {
        return exact_integer_digits(v).len() + usize::from(v < 0.0);
    }
    number_to_string(v).len()
}

/// Bytes of a number as ECMAScript's `String(n)` (and `JSON.stringify`) spell it: non-finite
/// numbers as `null` (4).
pub fn js_number_len(v: f64) -> usize {
    if !v.is_finite() {
        return 4;
    }
    number_to_string(v).len()
}

/// Whether a number survives a JSON round trip: finite and not `-0`.
pub fn is_lossless_number(v: f64) -> bool {
    v.is_finite() && !(v == 0.0 && v.is_sign_negative())
}

/// Whether the digits of a plain integer token (no sign, no fraction, no exponent) name exactly the
/// double they parse to (docs/protocol.md#reading-hostile-frames, step 3). `2**53` and `2**60`
/// pass; `9007199254740993` does not.
pub fn integer_token_round_trips(digits: &str) -> bool {
    if digits.len() <= 15 {
        return true;
    }
    match digits.parse::<f64>() {
        Ok(v) if v.is_finite() => exact_integer_digits(v) == digits,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_digits() {
        assert_eq!(exact_integer_digits(2f64.powi(60)), "1152921504606846976");
        assert_eq!(exact_integer_digits(2f64.powi(53)), "9007199254740992");
        assert_eq!(exact_integer_digits(2f64.powi(64)), "18446744073709551616");
        assert_eq!(exact_integer_digits(1e21), "1000000000000000000000");
        assert_eq!(exact_integer_digits(2f64.powi(100)), "1267650600228229401496703205376");
        let max = exact_integer_digits(f64::MAX);
        assert_eq!(max.len(), 309);
        assert!(max.starts_with("17976931348623157"));
        assert!(max.ends_with("858368"));
    }

    #[test]
    fn spelling() {
        assert_eq!(wire_number(2f64.powi(60)), "1152921504606846976");
        assert_eq!(wire_number(-(2f64.powi(60))), "-1152921504606846976");
        assert_eq!(wire_number(1e21), "1000000000000000000000");
        assert_eq!(wire_number(1.5), "1.5");
        assert_eq!(wire_number(1e-7), "1e-7");
        assert_eq!(wire_number(MAX_SAFE), "9007199254740991");
        assert_eq!(wire_number_len(2f64.powi(60)), 19);
        assert_eq!(wire_number_len(-(2f64.powi(60))), 20);
        assert_eq!(wire_number_len(f64::INFINITY), 4);
        assert_eq!(wire_number_len(-0.0), 1);
        assert_eq!(wire_number_len(1e300), 301);
        assert_eq!(js_number_len(1e308), "1e+308".len());
        assert_eq!(js_number_len(-1e21), "-1e+21".len());
        assert_eq!(js_number_len(2f64.powi(60)), "1152921504606847000".len());
        assert_eq!(js_number_len(5e-324), "5e-324".len());
        assert_eq!(js_number_len(f64::NAN), 4);
    }

    #[test]
    fn integer_tokens() {
        assert!(integer_token_round_trips("9007199254740992"));
        assert!(integer_token_round_trips("1152921504606846976"));
        assert!(integer_token_round_trips("9007199254740991"));
        assert!(!integer_token_round_trips("9007199254740993"));
        assert!(!integer_token_round_trips("1152921504606846977"));
        assert!(!integer_token_round_trips(&"9".repeat(400)));
        assert!(integer_token_round_trips("123"));
    }

    #[test]
    fn lossless_numbers() {
        assert!(is_lossless_number(0.0));
        assert!(!is_lossless_number(-0.0));
        assert!(!is_lossless_number(f64::NAN));
        assert!(!is_lossless_number(f64::NEG_INFINITY));
        assert!(is_lossless_number(-1.0));
    }
}
