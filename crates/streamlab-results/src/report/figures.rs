//! A figure of the report as data: a chart or a heat map ([`super::chart`]) and the
//! file it is written to, and the helpers experiments build their charts with. Each
//! experiment says what it draws, from its derived numbers and raw samples;
//! [`super::plot`] draws every one.
use super::chart::{BarSeries, Chart, HeatMap, LineSeries, XAxis, YScale};

#[derive(Debug, Clone, PartialEq)]
pub enum Drawing {
    Chart(Chart),
    HeatMap(HeatMap),
}

/// One chart of the report, written to `file`.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureModel {
    pub file: String,
    pub drawing: Drawing,
}

impl FigureModel {
    pub fn chart(file: String, chart: Chart) -> FigureModel {
        FigureModel {
            file,
            drawing: Drawing::Chart(chart),
        }
    }

    pub fn title(&self) -> &str {
        match &self.drawing {
            Drawing::Chart(c) => &c.title,
            Drawing::HeatMap(h) => &h.title,
        }
    }
}

pub fn blank(title: String, x_label: &str, y_label: &str, x: XAxis, y_scale: YScale) -> Chart {
    Chart {
        title,
        x_label: x_label.to_owned(),
        y_label: y_label.to_owned(),
        x,
        y_scale,
        bars: Vec::new(),
        lines: Vec::new(),
        levels: Vec::new(),
        bands: Vec::new(),
    }
}

pub fn line(
    name: impl Into<String>,
    color: &'static str,
    dashed: bool,
    points: Vec<(f64, f64)>,
) -> LineSeries {
    LineSeries {
        name: name.into(),
        color,
        dashed,
        markers: !dashed,
        joined: true,
        points,
    }
}

/// A bar per category of `values`, each with its whisker's low and high ends where given.
pub fn bars(
    name: impl Into<String>,
    color: &'static str,
    values: Vec<f64>,
    whiskers: Option<Vec<(f64, f64)>>,
) -> BarSeries {
    BarSeries {
        name: name.into(),
        color,
        values,
        whiskers,
    }
}

/// Points that are not a series: markers alone, no line between them.
pub fn points(name: impl Into<String>, color: &'static str, points: Vec<(f64, f64)>) -> LineSeries {
    LineSeries {
        joined: false,
        ..line(name, color, false, points)
    }
}
