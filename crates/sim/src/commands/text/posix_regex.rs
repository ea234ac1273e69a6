//! POSIX regular expressions (basic and extended, as grep and sed take them) translated to the
//! `regex` crate's syntax. Back-references have no translation: they are refused, not ignored.

/// A basic (BRE, the default of grep and sed) or extended (ERE, `-E`) expression.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Flavor {
    Basic,
    Extended,
}

/// Why a pattern cannot be used, worded as toybox words it after `bad regex 'P': `.
pub fn translate(pattern: &str, flavor: Flavor) -> Result<String, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    // Where `*` is literal in a BRE: at the start, after `\(`, after `^` or `\|`.
    let mut at_start = true;
    let mut depth = 0usize;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        let was_start = at_start;
        at_start = false;
        match c {
            '[' => i = bracket(&chars, i, &mut out)?,
            '\\' => {
                let Some(&next) = chars.get(i) else {
                    return Err("Trailing backslash".into());
                };
                i += 1;
                match (flavor, next) {
                    (Flavor::Basic, '(') => {
                        depth += 1;
                        out.push('(');
                        at_start = true;
                    }
                    (Flavor::Basic, ')') => {
                        depth = depth.checked_sub(1).ok_or("Unmatched ) or \\)")?;
                        out.push(')');
                    }
                    (Flavor::Basic, '{' | '}' | '+' | '?') => out.push(next),
                    (Flavor::Basic, '|') => {
                        out.push('|');
                        at_start = true;
                    }
                    (_, '1'..='9') => return Err("back-references are not supported by the simulator".into()),
                    (_, '<' | '>') => out.push_str("\\b"),
                    (_, 'w' | 'W' | 's' | 'S' | 'b' | 'B') => {
                        out.push('\\');
                        out.push(next);
                    }
                    (_, 'n') => out.push_str("\\n"),
                    (_, 't') => out.push_str("\\t"),
                    _ => out.push_str(&regex::escape(&next.to_string())),
                }
            }
            '*' if was_start && flavor == Flavor::Basic => out.push_str("\\*"),
            '*' if was_start => return Err("Invalid preceding regular expression".into()),
            '^' if was_start || flavor == Flavor::Extended => {
                out.push('^');
                at_start = true;
            }
            '^' => out.push_str("\\^"),
            '$' if flavor == Flavor::Extended || i == chars.len() || ends_group(&chars, i) => out.push('$'),
            '$' => out.push_str("\\$"),
            '(' | ')' | '{' | '}' | '+' | '?' | '|' if flavor == Flavor::Basic => {
                out.push('\\');
                out.push(c);
            }
            '(' if flavor == Flavor::Extended => {
                depth += 1;
                out.push('(');
                at_start = true;
            }
            ')' if flavor == Flavor::Extended => {
                depth = depth.checked_sub(1).ok_or("Unmatched ) or \\)")?;
                out.push(')');
            }
            '|' => {
                out.push('|');
                at_start = true;
            }
            '{' if !chars.get(i).is_some_and(char::is_ascii_digit) => out.push_str("\\{"),
            '.' | '*' | '+' | '?' | '{' | '}' => out.push(c),
            c => out.push_str(&regex::escape(&c.to_string())),
        }
    }
    if depth > 0 {
        return Err("Unmatched ( or \\(".into());
    }
    Ok(out)
}

/// Whether position `i` closes a BRE group (`$` before `\)` is an anchor).
fn ends_group(chars: &[char], i: usize) -> bool {
    chars.get(i) == Some(&'\\') && chars.get(i + 1) == Some(&')')
}

/// Copies a bracket expression starting after its `[`; returns the index after its `]`.
/// Inside brackets a backslash is an ordinary character in POSIX.
fn bracket(chars: &[char], mut i: usize, out: &mut String) -> Result<usize, String> {
    out.push('[');
    if chars.get(i) == Some(&'^') {
        out.push('^');
        i += 1;
    }
    let mut first = true;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err("Unmatched [, [^, [:, [., or [=".into());
        };
        i += 1;
        match c {
            ']' if !first => break,
            '[' if matches!(chars.get(i), Some(':' | '.' | '=')) => {
                let kind = chars[i];
                let end = (i + 1..chars.len().saturating_sub(1))
                    .find(|&j| chars[j] == kind && chars[j + 1] == ']')
                    .ok_or("Unmatched [, [^, [:, [., or [=")?;
                let name: String = chars[i + 1..end].iter().collect();
                match kind {
                    ':' => {
                        out.push_str(&format!("[:{name}:]"));
                    }
                    _ => out.push_str(&regex::escape(&name)),
                }
                i = end + 2;
            }
            '-' => out.push('-'),
            c if c.is_alphanumeric() => out.push(c),
            c => {
                out.push('\\');
                out.push(c);
            }
        }
        first = false;
    }
    out.push(']');
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, flavor: Flavor, text: &str) -> bool {
        regex::Regex::new(&translate(pattern, flavor).unwrap())
            .unwrap()
            .is_match(text)
    }

    #[test]
    fn basic_and_extended_differ_where_posix_says() {
        assert!(matches("a\\(l\\|e\\)", Flavor::Basic, "ale"));
        assert!(matches("ph+", Flavor::Basic, "ph+"));
        assert!(!matches("ph+", Flavor::Basic, "phh"));
        assert!(matches("ph+", Flavor::Extended, "phh"));
        assert!(matches("a\\{2\\}", Flavor::Basic, "baab"));
        assert!(matches("*a", Flavor::Basic, "*a"));
        assert!(matches("[[:upper:]]x", Flavor::Extended, "Ax"));
        assert!(matches("[\\]", Flavor::Basic, "\\"));
        assert!(matches("[]a]", Flavor::Basic, "]"));
        assert!(matches("a$b", Flavor::Basic, "a$b"));
    }

    #[test]
    fn what_cannot_be_translated_is_refused() {
        assert!(translate("\\(a\\)\\1", Flavor::Basic).is_err());
        assert!(translate("a(", Flavor::Extended).is_err());
        assert!(translate("[a", Flavor::Basic).is_err());
    }
}
