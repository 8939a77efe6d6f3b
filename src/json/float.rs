//! Python's `repr(float)`: the shortest digits that round-trip (Rust's `{:e}` gives the same
//! digits), laid out as CPython does: fixed notation when the decimal point position is in
//! `-3..=16`, else `d[.ddd]e±XX` with at least two exponent digits; fixed notation always
//! has a fraction (`1.0`).

/// Formats a finite `f64` exactly as Python's `repr` does.
pub fn python_repr(value: f64) -> String {
    let sign = if value.is_sign_negative() { "-" } else { "" };
    if value == 0.0 {
        return format!("{sign}0.0");
    }
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let decpt = exponent + 1;
    let ndigits = digits.len() as i32;
    let body = if decpt <= -4 || decpt > 16 {
        let (head, tail) = digits.split_at(1);
        let dot = if tail.is_empty() {
            String::new()
        } else {
            format!(".{tail}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{head}{dot}e{exp_sign}{:02}", exponent.abs())
    } else if decpt <= 0 {
        format!("0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt >= ndigits {
        format!("{digits}{}.0", "0".repeat((decpt - ndigits) as usize))
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::python_repr;

    #[test]
    fn matches_cpython_layout() {
        let cases = [
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.5e16, "1.5e+16"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.2345e-7, "1.2345e-07"),
            (123.456, "123.456"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (1e100, "1e+100"),
        ];
        for (value, expected) in cases {
            assert_eq!(python_repr(value), expected, "{value:e}");
        }
    }
}
