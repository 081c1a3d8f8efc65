//! How wide text is in a chart, so that [`super::plot`] can lay it out without overlap:
//! the advance widths of DejaVu Sans (`rsvg-convert`'s sans-serif on Debian), wider than
//! the sans-serif fonts browsers pick elsewhere, so a layout that fits it fits them;
//! and text escaped for HTML and SVG.

/// The pixel size of a plotters font size: its SVG backend writes `size / 1.24`.
pub fn px(size: u32) -> f64 {
    f64::from(size) / 1.24
}

/// DejaVu Sans' advance width of `c` in font units (2048 to the em); the digits' width
/// for a character not listed.
fn advance(c: char) -> u32 {
    const ASCII: [u32; 95] = [
        651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651, 690, 1303,
        1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 690, 690, 1716, 1716, 1716, 1087,
        2048, 1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604, 604, 1343, 1141, 1767, 1532,
        1612, 1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403, 799, 690, 799,
        1716, 1024, 1024, 1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995,
        1298, 1253, 1300, 1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075, 1303, 690,
        1303, 1716,
    ];
    match c {
        ' '..='~' => ASCII[c as usize - 32],
        '×' | '≥' | '≤' | '→' | '←' | '±' => 1716,
        '–' | '°' => 1024,
        '—' | '…' => 2048,
        '²' | '³' => 821,
        '·' | '’' => 651,
        'µ' => 1303,
        'Δ' => 1401,
        _ => 1303,
    }
}

/// The width in pixels of `text` set at `px` pixels.
pub fn width(text: &str, px: f64) -> f64 {
    px * text.chars().map(advance).sum::<u32>() as f64 / 2048.0
}

/// `text` split at spaces into lines at most `max` pixels wide at `px` pixels.
pub fn wrap(text: &str, px: f64, max: f64) -> Vec<String> {
    let words = text.split_whitespace().map(str::to_owned);
    fill(words, |l| width(l, px) <= max)
}

/// `words` joined by spaces into lines, each taking the next word while `fits` the line.
pub fn fill(words: impl IntoIterator<Item = String>, fits: impl Fn(&str) -> bool) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in words {
        match lines.last_mut() {
            Some(line) if fits(&format!("{line} {word}")) => {
                line.push(' ');
                line.push_str(&word);
            }
            _ => lines.push(word),
        }
    }
    if lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

/// The widest of `lines` at `px` pixels.
pub fn widest(lines: &[String], px: f64) -> f64 {
    lines.iter().map(|l| width(l, px)).fold(0.0, f64::max)
}

/// `text` with `&`, `<`, `>` and `"` escaped for HTML and SVG.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_dejavu_sans_and_text_wraps_to_them() {
        // "0" is 1303/2048 of an em: at 20.48 px, 13.03 px.
        assert!((width("0", 20.48) - 13.03).abs() < 1e-9);
        assert!(width("iiii", 12.0) < width("mmmm", 12.0));
        assert!((px(24) - 19.354_838).abs() < 1e-6);
        assert_eq!(width("", 12.0), 0.0);
        // Text wraps at spaces to the width.
        let lines = wrap("add_kernel cycles 256 tuned", 12.0, 70.0);
        assert_eq!(lines, ["add_kernel", "cycles 256", "tuned"]);
        assert!(widest(&lines, 12.0) <= 70.0);
        assert_eq!(wrap("averyveryverylongword", 12.0, 10.0).len(), 1);
        assert_eq!(wrap("", 12.0, 10.0), [""]);
    }
}
