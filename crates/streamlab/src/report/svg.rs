//! A small SVG writer: the few elements the charts and timelines draw, with every
//! piece of text escaped. The output carries no ids and no XML declaration, so the same
//! string works as a standalone `.svg` file and inline in the HTML report.
use std::fmt::Write;

/// Font used for every label.
const FONT: &str = "font-family=\"Helvetica, Arial, sans-serif\"";

/// Where a text label is anchored horizontally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn attr(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// The look of a line: colour, width and an optional dash pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stroke {
    pub color: &'static str,
    pub width: f64,
    pub dashed: bool,
}

impl Stroke {
    pub fn solid(color: &'static str, width: f64) -> Stroke {
        Stroke {
            color,
            width,
            dashed: false,
        }
    }

    fn attrs(self) -> String {
        let dash = if self.dashed {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        };
        format!(
            "stroke=\"{}\" stroke-width=\"{}\"{dash} fill=\"none\"",
            self.color, self.width
        )
    }
}

/// An axis-aligned rectangle in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// An SVG document being drawn.
#[derive(Debug, Clone)]
pub struct Svg {
    width: f64,
    height: f64,
    body: String,
}

/// `text` with the five XML special characters escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number as an attribute: two decimals, never NaN or infinite.
fn num(value: f64) -> String {
    if value.is_finite() {
        format!("{value:.2}")
    } else {
        "0".to_owned()
    }
}

impl Svg {
    /// An empty white canvas whose `<title>` is `title`.
    pub fn new(width: f64, height: f64, title: &str) -> Svg {
        let mut svg = Svg {
            width,
            height,
            body: format!("<title>{}</title>\n", escape(title)),
        };
        svg.rect(
            Rect {
                x: 0.0,
                y: 0.0,
                width,
                height,
            },
            "#ffffff",
            "background",
            None,
        );
        svg
    }

    /// A filled rectangle with a CSS class and, for data marks, the value it shows.
    pub fn rect(&mut self, r: Rect, fill: &str, class: &str, value: Option<f64>) {
        let data = value.map_or(String::new(), |v| format!(" data-value=\"{v}\""));
        let _ = writeln!(
            self.body,
            "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"{data}/>",
            num(r.x),
            num(r.y),
            num(r.width.max(0.0)),
            num(r.height.max(0.0)),
        );
    }

    /// A straight line from `(x1, y1)` to `(x2, y2)`.
    pub fn line(
        &mut self,
        (x1, y1): (f64, f64),
        (x2, y2): (f64, f64),
        stroke: Stroke,
        class: &str,
    ) {
        let _ = writeln!(
            self.body,
            "<line class=\"{class}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>",
            num(x1),
            num(y1),
            num(x2),
            num(y2),
            stroke.attrs()
        );
    }

    /// A horizontal line carrying the value it marks.
    pub fn level(&mut self, y: f64, (x1, x2): (f64, f64), stroke: Stroke, class: &str, value: f64) {
        let _ = writeln!(
            self.body,
            "<line class=\"{class}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {} data-value=\"{value}\"/>",
            num(x1),
            num(y),
            num(x2),
            num(y),
            stroke.attrs()
        );
    }

    /// A polyline through `points`.
    pub fn polyline(&mut self, points: &[(f64, f64)], stroke: Stroke, class: &str) {
        let coords: Vec<String> = points
            .iter()
            .map(|&(x, y)| format!("{},{}", num(x), num(y)))
            .collect();
        let _ = writeln!(
            self.body,
            "<polyline class=\"{class}\" points=\"{}\" {}/>",
            coords.join(" "),
            stroke.attrs()
        );
    }

    /// A filled circle of radius `r` centred on `(x, y)`.
    pub fn circle(&mut self, (x, y): (f64, f64), r: f64, fill: &str, class: &str) {
        let _ = writeln!(
            self.body,
            "<circle class=\"{class}\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{fill}\"/>",
            num(x),
            num(y),
            num(r)
        );
    }

    /// A label at `(x, y)` (baseline), `size` pixels high.
    pub fn text(&mut self, (x, y): (f64, f64), text: &str, anchor: Anchor, size: f64) {
        let _ = writeln!(
            self.body,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" font-size=\"{}\" {FONT} fill=\"#222\">{}</text>",
            num(x),
            num(y),
            anchor.attr(),
            num(size),
            escape(text)
        );
    }

    /// A label turned a quarter anticlockwise around `(x, y)`, for a vertical axis.
    pub fn vertical_text(&mut self, (x, y): (f64, f64), text: &str, size: f64) {
        let _ = writeln!(
            self.body,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\" {FONT} fill=\"#222\" transform=\"rotate(-90 {} {})\">{}</text>",
            num(x),
            num(y),
            num(size),
            num(x),
            num(y),
            escape(text)
        );
    }

    /// The finished document.
    pub fn finish(self) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\">\n{}</svg>\n",
            self.body,
            w = num(self.width),
            h = num(self.height),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_numbers_stay_finite() {
        let mut svg = Svg::new(10.0, 10.0, "a < b & \"c\"");
        svg.circle((f64::NAN, 1.0), f64::INFINITY, "#000", "dot");
        let out = svg.finish();
        assert!(out.contains("<title>a &lt; b &amp; &quot;c&quot;</title>"));
        assert!(out.contains("cx=\"0\" cy=\"1.00\" r=\"0\""), "{out}");
        assert!(!out.contains("NaN") && !out.contains("inf"));
    }
}
