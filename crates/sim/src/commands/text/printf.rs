//! toybox `printf FORMAT [ARG...]`: escapes, `%s %b %c %d %i %u %o %x %X %e %f %g %%` with
//! flags, width and precision (`*` too); the format repeats while arguments remain. Widths and
//! precisions come from the client: nothing is allocated from them, and output past
//! `WRITER_BYTES` waits like a blocked writer, as `yes` does.

use super::WRITER_BYTES;
use crate::shell::Output;

/// Digits past which a double's exact decimal expansion is all zeros (at most 1074 fraction
/// digits, 767 significant): formatted up to here, zeros after. Rust's precision stops at 65535.
const EXACT_DIGITS: usize = 1100;

pub fn printf(args: &[&str]) -> Output {
    let Some((format, mut rest)) = args.split_first() else {
        return Output::err(1, "printf: Needs 1 argument (see \"printf --help\")\n");
    };
    let mut out = Output::default();
    let fmt: Vec<char> = format.chars().collect();
    loop {
        let used_before = rest.len();
        let mut i = 0;
        while i < fmt.len() {
            if blocked(&mut out) {
                return out;
            }
            let c = fmt[i];
            i += 1;
            if c == '\\' {
                i = escape(&fmt, i, &mut out.stdout);
                continue;
            }
            if c != '%' {
                push_char(&mut out.stdout, c);
                continue;
            }
            let start = i - 1;
            let mut spec = String::from("%");
            while let Some(&f) = fmt.get(i).filter(|f| "-+ 0#".contains(**f)) {
                spec.push(f);
                i += 1;
            }
            for _ in 0..2 {
                if fmt.get(i) == Some(&'*') {
                    let (value, tail) = rest.split_first().map_or(("0", rest), |(v, t)| (*v, t));
                    rest = tail;
                    spec.push_str(&value.parse::<i64>().unwrap_or(0).to_string());
                    i += 1;
                }
                while let Some(&d) = fmt.get(i).filter(|d| d.is_ascii_digit()) {
                    spec.push(d);
                    i += 1;
                }
                if fmt.get(i) == Some(&'.') && !spec.contains('.') {
                    spec.push('.');
                    i += 1;
                } else {
                    break;
                }
            }
            let Some(&conv) = fmt.get(i) else {
                out.stderr
                    .extend_from_slice(format!("printf: bad {}\n", fmt[start..].iter().collect::<String>()).as_bytes());
                out.code = 1;
                return out;
            };
            i += 1;
            if conv == '%' {
                out.stdout.push(b'%');
                continue;
            }
            let (arg, tail) = rest.split_first().map_or((None, rest), |(v, t)| (Some(*v), t));
            rest = tail;
            // One byte past the cap: a conversion cut short shows as over it.
            let room = (WRITER_BYTES + 1).saturating_sub(out.stdout.len());
            match render(&spec, conv, arg, room) {
                Ok(text) => out.stdout.extend_from_slice(&text),
                Err(Bad::Number) => {
                    out.stdout
                        .extend_from_slice(&render(&spec, conv, Some("0"), room).unwrap_or_default());
                    let arg = arg.unwrap_or_default();
                    out.stderr
                        .extend_from_slice(format!("printf: bad %{conv} {arg}\n").as_bytes());
                    out.code = 1;
                }
                Err(Bad::Conversion) => {
                    let at = start + 2;
                    out.stderr
                        .extend_from_slice(format!("printf: bad %{conv}@{at}\n").as_bytes());
                    out.code = 1;
                    return out;
                }
            }
        }
        if blocked(&mut out) || rest.is_empty() || rest.len() == used_before {
            return out;
        }
    }
}

/// Output past `WRITER_BYTES` is cut there and the command keeps running, as a writer blocked on
/// its reader does.
fn blocked(out: &mut Output) -> bool {
    if out.stdout.len() <= WRITER_BYTES {
        return false;
    }
    out.stdout.truncate(WRITER_BYTES);
    out.keeps_running = true;
    true
}

/// `n` zeros, at most `room` of them.
fn zeros(n: usize, room: usize) -> String {
    "0".repeat(n.min(room))
}

enum Bad {
    Number,
    Conversion,
}

/// One conversion; padding and zeros stop at `room` bytes.
fn render(spec: &str, conv: char, arg: Option<&str>, room: usize) -> Result<Vec<u8>, Bad> {
    let flags: String = spec[1..].chars().take_while(|c| "-+ 0#".contains(*c)).collect();
    let rest = &spec[1 + flags.len()..];
    let (width, precision) = match rest.split_once('.') {
        Some((w, p)) => (w.parse().unwrap_or(0), Some(p.parse().unwrap_or(0))),
        None => (rest.parse().unwrap_or(0usize), None),
    };
    let left = flags.contains('-');
    let zero = flags.contains('0') && !left;
    let body: String = match conv {
        's' | 'b' => {
            let mut s = arg.unwrap_or_default().to_string();
            if conv == 'b' {
                let mut bytes = Vec::new();
                let chars: Vec<char> = s.chars().collect();
                let mut i = 0;
                while i < chars.len() {
                    i += 1;
                    if chars[i - 1] == '\\' {
                        i = escape(&chars, i, &mut bytes);
                    } else {
                        push_char(&mut bytes, chars[i - 1]);
                    }
                }
                s = String::from_utf8_lossy(&bytes).into_owned();
            }
            match precision {
                Some(p) => s.chars().take(p).collect(),
                None => s,
            }
        }
        'c' => arg.and_then(|a| a.chars().next()).map(String::from).unwrap_or_default(),
        'd' | 'i' | 'u' | 'o' | 'x' | 'X' => {
            let n = integer(arg.unwrap_or("0")).ok_or(Bad::Number)?;
            let digits = match conv {
                'o' => format!("{:o}", n),
                'x' => format!("{:x}", n),
                'X' => format!("{:X}", n),
                _ => n.unsigned_abs().to_string(),
            };
            let digits = match precision {
                Some(p) if digits.len() < p => format!("{}{digits}", zeros(p - digits.len(), room)),
                _ => digits,
            };
            let sign = if matches!(conv, 'd' | 'i') && n < 0 {
                "-"
            } else if matches!(conv, 'd' | 'i') && flags.contains('+') {
                "+"
            } else if matches!(conv, 'd' | 'i') && flags.contains(' ') {
                " "
            } else {
                ""
            };
            let prefix = match (flags.contains('#'), conv) {
                (true, 'x') if n != 0 => "0x",
                (true, 'X') if n != 0 => "0X",
                (true, 'o') => "0",
                _ => "",
            };
            return Ok(pad(
                sign,
                &format!("{prefix}{digits}"),
                width,
                left,
                zero && precision.is_none(),
                room,
            ));
        }
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
            let x: f64 = arg.unwrap_or("0").trim().parse().map_err(|_| Bad::Number)?;
            let p = precision.unwrap_or(6);
            let upper = conv.is_ascii_uppercase();
            let s = match conv {
                _ if x.is_nan() => if upper { "NAN" } else { "nan" }.to_string(),
                _ if x.is_infinite() => if upper { "INF" } else { "inf" }.to_string(),
                'f' | 'F' => fixed(x.abs(), p, room),
                'e' | 'E' => c_exponent(x.abs(), p, conv == 'E', room),
                _ => c_general(x.abs(), p.max(1), conv == 'G'),
            };
            let sign = if x.is_sign_negative() {
                "-"
            } else if flags.contains('+') {
                "+"
            } else {
                ""
            };
            return Ok(pad(sign, &s, width, left, zero && x.is_finite(), room));
        }
        _ => return Err(Bad::Conversion),
    };
    Ok(pad("", &body, width, left, false, room))
}

fn pad(sign: &str, body: &str, width: usize, left: bool, zero: bool, room: usize) -> Vec<u8> {
    let len = sign.len() + body.chars().count();
    let fill = width.saturating_sub(len).min(room);
    let s = if left {
        format!("{sign}{body}{}", " ".repeat(fill))
    } else if zero {
        format!("{sign}{}{body}", "0".repeat(fill))
    } else {
        format!("{}{sign}{body}", " ".repeat(fill))
    };
    s.into_bytes()
}

/// An integer as C's strtoll reads it for printf: decimal, `0x` hex, `0` octal, `'c` a char.
fn integer(arg: &str) -> Option<i64> {
    let a = arg.trim();
    if let Some(c) = a.strip_prefix('\'').or_else(|| a.strip_prefix('"')) {
        return Some(c.chars().next().map_or(0, |c| c as i64));
    }
    let (neg, digits) = match a.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, a.strip_prefix('+').unwrap_or(a)),
    };
    let n = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse().ok()?
    };
    Some(if neg { -n } else { n })
}

/// `%.Pf`: exact to `EXACT_DIGITS`, zeros after (at most `room`).
fn fixed(x: f64, p: usize, room: usize) -> String {
    let exact = p.min(EXACT_DIGITS);
    let mut s = format!("{:.*}", exact, x);
    if x.is_finite() {
        s.push_str(&zeros(p - exact, room));
    }
    s
}

/// `%.Pe`: as `fixed`, the zeros in the mantissa.
fn c_exponent(x: f64, p: usize, upper: bool, room: usize) -> String {
    let exact = p.min(EXACT_DIGITS);
    let s = format!("{:.*e}", exact, x);
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let more = if x.is_finite() {
        zeros(p - exact, room)
    } else {
        String::new()
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    let e = if upper { 'E' } else { 'e' };
    format!("{mantissa}{more}{e}{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

fn c_general(x: f64, p: usize, upper: bool) -> String {
    // Trailing zeros are dropped and a double's exponent is within ±324, so a precision past
    // `EXACT_DIGITS` prints as that one does.
    let p = p.min(EXACT_DIGITS);
    if x == 0.0 {
        return "0".into();
    }
    let exp = x.log10().floor() as i32;
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if exp < -4 || exp >= p as i32 {
        let s = c_exponent(x, p - 1, upper, 0);
        let (m, e) = s.split_at(s.find(['e', 'E']).unwrap_or(s.len()));
        format!("{}{e}", trim(m.to_string()))
    } else {
        trim(format!("{:.*}", (p as i32 - 1 - exp).max(0) as usize, x))
    }
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// One backslash escape starting after the `\`; returns the index after it.
fn escape(chars: &[char], mut i: usize, out: &mut Vec<u8>) -> usize {
    let Some(&c) = chars.get(i) else {
        out.push(b'\\');
        return i;
    };
    i += 1;
    let byte = match c {
        'n' => b'\n',
        't' => b'\t',
        'r' => b'\r',
        'a' => 7,
        'b' => 8,
        'f' => 12,
        'v' => 11,
        'e' => 27,
        '\\' => b'\\',
        '0'..='7' => {
            let mut value = c as u32 - '0' as u32;
            for _ in 0..2 {
                match chars.get(i).and_then(|d| d.to_digit(8)) {
                    Some(d) => {
                        value = value * 8 + d;
                        i += 1;
                    }
                    None => break,
                }
            }
            value as u8
        }
        'x' => {
            let mut value = 0;
            let mut taken = 0;
            while taken < 2 {
                match chars.get(i).and_then(|d| d.to_digit(16)) {
                    Some(d) => {
                        value = value * 16 + d;
                        i += 1;
                        taken += 1;
                    }
                    None => break,
                }
            }
            value as u8
        }
        other => {
            out.push(b'\\');
            push_char(out, other);
            return i;
        }
    };
    out.push(byte);
    i
}

#[cfg(test)]
mod tests {
    use super::{WRITER_BYTES, printf};

    /// Every conversion with every flag, width (a huge one, one from `*`) and precision (past
    /// Rust's limit and past any memory) and odd arguments: no panic, and output past the cap
    /// is cut there with the command left running, exactly when a width or precision expands.
    #[test]
    fn widths_and_precisions_from_the_client_never_panic_and_stop_at_the_cap() {
        const HUGE: &str = "99999999999999";
        let mut cases = 0;
        for flags in ["", "-", "0", "+ ", "#", "-0#"] {
            for width in ["", "7", HUGE, "*"] {
                for precision in ["", ".0", ".3", ".99999", ".99999999999999"] {
                    for conv in "sbcdiuoxXeEfgG%".chars() {
                        for arg in ["1", "-2.5", "inf", "nan", "abc", "é", ""] {
                            let format = format!("{flags}{width}{precision}{conv}|");
                            let format = format!("%{format}");
                            let mut args = vec![format.as_str()];
                            if width == "*" {
                                args.push("-7");
                            }
                            args.push(arg);
                            let out = printf(&args);
                            let huge_prec = precision.len() > 7
                                && ("diuoxX".contains(conv) || ("eEf".contains(conv) && !matches!(arg, "inf" | "nan")));
                            let expands = (width == HUGE && conv != '%') || huge_prec;
                            assert_eq!(
                                (out.stdout.len() == WRITER_BYTES, out.keeps_running),
                                (expands, expands),
                                "printf {args:?}: {} bytes",
                                out.stdout.len()
                            );
                            assert!(out.stdout.len() <= WRITER_BYTES);
                            cases += 1;
                        }
                    }
                }
            }
        }
        println!("{cases} printf cases: 6 flag sets × 4 widths × 5 precisions × 15 conversions × 7 arguments");
    }
}
