//! Legends: an entry's swatch and label, set in a column on the right of a chart or in
//! rows across its top.
use super::{Area, Drawn, SIDE, TEXT, line_height, text_style};
use crate::report::text;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// What a legend entry shows before its name.
pub(super) enum Swatch {
    Dot(RGBColor),
    Dots(Vec<RGBColor>),
    Line {
        color: RGBColor,
        width: u32,
        dashed: bool,
        marker: bool,
    },
}

impl Swatch {
    /// A line without a marker.
    pub(super) fn rule(color: RGBColor, width: u32, dashed: bool) -> Swatch {
        Swatch::Line {
            color,
            width,
            dashed,
            marker: false,
        }
    }
}

pub(super) struct Entry {
    swatch: Swatch,
    label: String,
}

/// The plotters size of legend labels.
const LEGEND_SIZE: u32 = 15;
/// Pixels from an entry's left end to its label.
const SWATCH: i32 = 30;

impl Entry {
    const HEIGHT: i32 = 22;

    pub(super) fn new(swatch: Swatch, label: impl Into<String>) -> Entry {
        Entry {
            swatch,
            label: label.into(),
        }
    }

    /// Pixels from the entry's left end to its label: room for its swatch.
    fn swatch_width(&self) -> i32 {
        match &self.swatch {
            Swatch::Dots(colors) => SWATCH.max(8 * colors.len() as i32 + 6),
            _ => SWATCH,
        }
    }

    /// The entry's width in pixels, its label on one line.
    fn width(&self) -> i32 {
        self.swatch_width() + text::width(&self.label, text::px(LEGEND_SIZE)).ceil() as i32 + 4
    }

    /// Its label's lines when the entry may be at most `width` pixels wide.
    fn lines(&self, width: i32) -> Vec<String> {
        let room = f64::from(width - self.swatch_width() - 4);
        text::wrap(&self.label, text::px(LEGEND_SIZE), room)
    }

    /// Draws the entry with its swatch's left end at `(x, y)`, its label wrapped to `width`.
    fn draw(&self, area: &Area<'_>, (x, y): (i32, i32), width: i32) -> Drawn {
        match &self.swatch {
            Swatch::Dot(color) => area.draw(&Circle::new((x + 12, y), 5, color.filled()))?,
            Swatch::Dots(colors) => {
                for (i, color) in (0..).zip(colors) {
                    area.draw(&Circle::new((x + 4 + 8 * i, y), 4, color.filled()))?;
                }
            }
            Swatch::Line {
                color,
                width,
                dashed,
                marker,
            } => {
                let style = color.stroke_width(*width);
                if *dashed {
                    for x in [x, x + 9, x + 18] {
                        area.draw(&PathElement::new([(x, y), (x + 6, y)], style))?;
                    }
                } else {
                    area.draw(&PathElement::new([(x, y), (x + 24, y)], style))?;
                }
                if *marker {
                    // Hollow, so that the filled circles of a colour are its markers.
                    area.draw(&Circle::new((x + 12, y), 3, color.stroke_width(2)))?;
                }
            }
        }
        let style = text_style(LEGEND_SIZE, &TEXT, HPos::Left, VPos::Center);
        for (i, line) in (0..).zip(self.lines(width)) {
            let at = (x + self.swatch_width(), y + i * line_height(LEGEND_SIZE));
            area.draw_text(&line, &style, at)?;
        }
        Ok(())
    }
}

/// Draws `entries` in a column on the right of `area` and returns the rest of it.
pub(super) fn legend_right<'a>(area: &Area<'a>, entries: &[Entry]) -> Drawn<Area<'a>> {
    if entries.is_empty() {
        return Ok(area.clone());
    }
    let w = area.dim_in_pixel().0 as i32;
    let width = (entries.iter().map(Entry::width).max().unwrap_or(0) + 4 + SIDE)
        .max(120)
        .min(w / 3);
    let (rest, legend) = area.split_horizontally(w - width);
    let room = width - 4 - SIDE;
    let mut y = 40;
    for entry in entries {
        entry.draw(&legend, (4, y), room)?;
        y += Entry::HEIGHT + line_height(LEGEND_SIZE) * (entry.lines(room).len() as i32 - 1);
    }
    Ok(rest)
}

/// Draws `entries` in rows across the top of `area` and returns the rest of it.
pub(super) fn legend_top<'a>(area: &Area<'a>, entries: &[Entry]) -> Drawn<Area<'a>> {
    if entries.is_empty() {
        return Ok(area.clone());
    }
    let w = area.dim_in_pixel().0 as i32;
    let (left, gap) = (60, 18);
    let (mut x, mut y) = (left, Entry::HEIGHT / 2);
    let mut places = Vec::with_capacity(entries.len());
    for entry in entries {
        if x > left && x + entry.width() > w {
            (x, y) = (left, y + Entry::HEIGHT);
        }
        places.push((x, y));
        x += entry.width() + gap;
    }
    let (legend, rest) = area.split_vertically(y + Entry::HEIGHT / 2 + 4);
    for (entry, &place) in entries.iter().zip(&places) {
        // An entry's row was chosen to hold it on one line: it wraps only where no row
        // can, at the canvas' edge.
        entry.draw(&legend, place, (w - place.0 - SIDE).max(entry.width()))?;
    }
    Ok(rest)
}
