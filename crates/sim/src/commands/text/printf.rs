//! toybox `printf FORMAT [ARG...]`: escapes, `%s %b %c %d %i %u %o %x %X %e %f %g %%` with
//! flags, width and precision (`*` too); the format repeats while arguments remain.

use crate::shell::Output;

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
                    .extend_from_slice(format!("printf: bad %{}\n", &format[start..]).as_bytes());
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
            match render(&spec, conv, arg) {
                Ok(text) => out.stdout.extend_from_slice(&text),
                Err(Bad::Number) => {
                    out.stdout
                        .extend_from_slice(&render(&spec, conv, Some("0")).unwrap_or_default());
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
        if rest.is_empty() || rest.len() == used_before {
            return out;
        }
    }
}

enum Bad {
    Number,
    Conversion,
}

fn render(spec: &str, conv: char, arg: Option<&str>) -> Result<Vec<u8>, Bad> {
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
                Some(p) if digits.len() < p => format!("{}{digits}", "0".repeat(p - digits.len())),
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
            ));
        }
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
            let x: f64 = arg.unwrap_or("0").trim().parse().map_err(|_| Bad::Number)?;
            let p = precision.unwrap_or(6);
            let s = match conv {
                'f' | 'F' => format!("{:.*}", p, x.abs()),
                'e' | 'E' => c_exponent(x.abs(), p, conv == 'E'),
                _ => c_general(x.abs(), p.max(1), conv == 'G'),
            };
            let sign = if x.is_sign_negative() {
                "-"
            } else if flags.contains('+') {
                "+"
            } else {
                ""
            };
            return Ok(pad(sign, &s, width, left, zero));
        }
        _ => return Err(Bad::Conversion),
    };
    Ok(pad("", &body, width, left, false))
}

fn pad(sign: &str, body: &str, width: usize, left: bool, zero: bool) -> Vec<u8> {
    let len = sign.len() + body.chars().count();
    let fill = width.saturating_sub(len);
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

fn c_exponent(x: f64, p: usize, upper: bool) -> String {
    let s = format!("{:.*e}", p, x);
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let e = if upper { 'E' } else { 'e' };
    format!("{mantissa}{e}{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

fn c_general(x: f64, p: usize, upper: bool) -> String {
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
        let s = c_exponent(x, p - 1, upper);
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
