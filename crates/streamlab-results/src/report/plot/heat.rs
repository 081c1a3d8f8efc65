//! Heat maps: each cell coloured by its value on a two-sided scale, its value written in
//! it, marked cells outlined.
use super::legend::{Entry, Swatch, legend_right};
use super::{
    Area, Axis, CONTOUR, Drawn, FONT, GREEN, LABEL_SIZE, MARGIN, MARK, MISSING, NOTE, RED, TEXT,
    extremes, note, slot, text_style, titled, usable,
};
use crate::report::chart::HeatMap;
use crate::report::text;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// How a heat-map value is written: `unit` is a suffix ("×" → "1.37×") or a format with
/// one `{}` or `{:.N}` placeholder ("{:.1} ms" → "1.4 ms"); 2 decimals by default.
pub(super) fn cell_text(v: f64, unit: &str) -> String {
    if let Some(open) = unit.find('{')
        && let Some(len) = unit[open..].find('}')
    {
        let spec = &unit[open + 1..open + len];
        let decimals = spec.strip_prefix(":.").and_then(|d| d.parse().ok());
        let decimals: usize = decimals.unwrap_or(2).min(12);
        return format!("{}{v:.decimals$}{}", &unit[..open], &unit[open + len + 1..]);
    }
    format!("{v:.2}{unit}")
}

/// The value of cell (row, column) if it has a usable one.
fn cell(h: &HeatMap, row: usize, column: usize) -> Option<f64> {
    let v = (*h.values.get(row)?.get(column)?)?;
    usable(false, v).then_some(v)
}

/// A cell's colour and how strong it is (0 light … 1 strong), given the smallest and
/// largest values of the map.
pub(super) fn heat_color(v: f64, threshold: f64, (lo, hi): (f64, f64)) -> (RGBColor, f64) {
    let (scale, t) = if v >= threshold {
        (GREEN, (v - threshold) / (hi - threshold))
    } else {
        (RED, (threshold - v) / (threshold - lo))
    };
    let t = if t.is_nan() { 0.5 } else { t.clamp(0.0, 1.0) };
    // Blended from the scale's light end (t = 0) to its strong one (t = 1).
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
    let (a, b) = scale;
    (RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2)), t)
}

/// The contour: every edge between a cell at or above the threshold and one below, in
/// the plot's coordinates (column x, row y counted from the bottom).
fn contour(h: &HeatMap) -> Vec<[(f64, f64); 2]> {
    if h.contour.is_none() {
        return Vec::new();
    }
    let (nx, ny) = (h.columns.len(), h.rows.len());
    let above = |r: usize, c: usize| cell(h, r, c).map(|v| v >= h.threshold);
    let mut edges = Vec::new();
    for r in 0..ny {
        for c in 0..nx {
            let Some(here) = above(r, c) else { continue };
            let (x, y) = (c as f64, (ny - 1 - r) as f64);
            if c + 1 < nx && above(r, c + 1).is_some_and(|there| there != here) {
                edges.push([(x + 0.5, y - 0.5), (x + 0.5, y + 0.5)]);
            }
            if r + 1 < ny && above(r + 1, c).is_some_and(|there| there != here) {
                edges.push([(x - 0.5, y - 0.5), (x + 0.5, y - 0.5)]);
            }
        }
    }
    edges
}

/// The map's legend: its two sides of the threshold, its contour where `contoured`, and
/// its marked cells where it has some.
fn legend(h: &HeatMap, contoured: bool) -> Vec<Entry> {
    let thick = |color, width| Swatch::rule(color, width, false);
    let threshold = cell_text(h.threshold, h.unit);
    let mut entries = vec![
        Entry::new(Swatch::Dot(GREEN.1), format!("≥ {threshold}")),
        Entry::new(Swatch::Dot(RED.1), format!("< {threshold}")),
    ];
    if let (Some(name), true) = (h.contour, contoured) {
        entries.push(Entry::new(thick(CONTOUR, 4), name));
    }
    if !h.marked.is_empty() {
        entries.push(Entry::new(thick(MARK, 3), "disagrees"));
    }
    entries
}

pub(super) fn draw_heat_map(root: &Area<'_>, h: &HeatMap) -> Drawn {
    let area = titled(root, &h.title, 24, &TEXT)?;
    let (nx, ny) = (h.columns.len(), h.rows.len());
    let edges = contour(h);
    let plot = legend_right(&area, &legend(h, !edges.is_empty()))?;

    let longest = text::widest(&h.rows, text::px(LABEL_SIZE)).ceil() as i32;
    let mut chart = ChartBuilder::on(&plot)
        .margin(MARGIN)
        .x_label_area_size(if h.x_label.is_empty() { 30 } else { 50 })
        .y_label_area_size((20 + longest).min(220) + if h.y_label.is_empty() { 0 } else { 22 })
        .build_cartesian_2d(-0.5..Axis::slots(nx).hi, -0.5..Axis::slots(ny).hi)?;
    // Row 0 at the top.
    let row_y = |r: usize| (ny - 1 - r) as f64;
    let x_fmt = |x: &f64| (slot(*x, nx).map(|i| h.columns[i].clone())).unwrap_or_default();
    let y_fmt = |y: &f64| (slot(*y, ny).map(|j| h.rows[ny - 1 - j].clone())).unwrap_or_default();
    let mut mesh = chart.configure_mesh();
    mesh.disable_mesh()
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, 16))
        .x_labels(nx.max(1))
        .y_labels(ny.max(1))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt);
    if !h.x_label.is_empty() {
        mesh.x_desc(&h.x_label);
    }
    if !h.y_label.is_empty() {
        mesh.y_desc(&h.y_label);
    }
    mesh.draw()?;
    if nx == 0 || ny == 0 {
        return note(&chart.plotting_area().strip_coord_spec(), "no data");
    }

    let cells: Vec<(usize, usize, Option<f64>)> = (0..ny)
        .flat_map(|r| (0..nx).map(move |c| (r, c, cell(h, r, c))))
        .collect();
    let range = extremes(cells.iter().filter_map(|c| c.2));
    let corners = |r: usize, c: usize| {
        let (x, y) = (c as f64, row_y(r));
        [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)]
    };
    chart.draw_series(cells.iter().map(|&(r, c, v)| {
        let fill = v.map_or(MISSING, |v| heat_color(v, h.threshold, range).0);
        Rectangle::new(corners(r, c), fill.filled())
    }))?;
    chart.draw_series(cells.iter().map(|&(r, c, v)| {
        let (text, color) = match v {
            Some(v) if heat_color(v, h.threshold, range).1 > 0.55 => (cell_text(v, h.unit), WHITE),
            Some(v) => (cell_text(v, h.unit), TEXT),
            None => ("–".to_owned(), NOTE),
        };
        let style = text_style(15, &color, HPos::Center, VPos::Center);
        Text::new(text, (c as f64, row_y(r)), style)
    }))?;

    let contour = CONTOUR.stroke_width(4);
    chart.draw_series(edges.into_iter().map(|e| PathElement::new(e, contour)))?;

    let inset = 0.07;
    let marked = h.marked.iter().filter(|&&(r, c)| r < ny && c < nx);
    chart.draw_series(marked.map(|&(r, c)| {
        let [(x0, y0), (x1, y1)] = corners(r, c);
        let (x0, y0, x1, y1) = (x0 + inset, y0 + inset, x1 - inset, y1 - inset);
        let outline = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)];
        PathElement::new(outline, MARK.stroke_width(3))
    }))?;
    Ok(())
}
