//! Inclusive integer ranges given on the command line as `N` or `START..=END`, the
//! "shmoo" ranges of the CUDA Handbook's programs.
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// `start..=end`, never empty (`start <= end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "(i64, i64)", into = "(i64, i64)")]
pub struct IntRange {
    start: i64,
    end: i64,
}

impl IntRange {
    /// `start..=end`, or an error naming the problem when it is empty.
    pub fn new(start: i64, end: i64) -> Result<IntRange, String> {
        if start > end {
            return Err(format!(
                "the range {start}..={end} is empty: the start must not exceed the end"
            ));
        }
        Ok(IntRange { start, end })
    }

    pub fn single(value: i64) -> IntRange {
        IntRange {
            start: value,
            end: value,
        }
    }

    pub fn start(&self) -> i64 {
        self.start
    }

    pub fn end(&self) -> i64 {
        self.end
    }

    /// The values `start, start + step, …` up to and including `end`.
    pub fn values(&self, step: i64) -> impl Iterator<Item = i64> + use<> {
        let (start, end) = (self.start, self.end);
        (0..)
            .map(move |k| start + k * step.max(1))
            .take_while(move |v| *v <= end)
    }
}

impl FromStr for IntRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let number = |part: &str| {
            part.trim()
                .parse::<i64>()
                .map_err(|_| format!("`{s}` is not a number or a range like 4..=256"))
        };
        match s.split_once("..=") {
            Some((start, end)) => IntRange::new(number(start)?, number(end)?),
            None if s.contains("..") => {
                Err(format!("`{s}`: write an inclusive range as START..=END"))
            }
            None => Ok(IntRange::single(number(s)?)),
        }
    }
}

impl fmt::Display for IntRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}..={}", self.start, self.end)
        }
    }
}

impl TryFrom<(i64, i64)> for IntRange {
    type Error = String;
    fn try_from((start, end): (i64, i64)) -> Result<Self, Self::Error> {
        IntRange::new(start, end)
    }
}

impl From<IntRange> for (i64, i64) {
    fn from(range: IntRange) -> Self {
        (range.start, range.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_single_values_and_inclusive_ranges_and_refuses_the_rest() {
        assert_eq!("8".parse::<IntRange>().unwrap(), IntRange::single(8));
        let r: IntRange = "0..=4096".parse().unwrap();
        assert_eq!((r.start(), r.end()), (0, 4096));
        let values: Vec<i64> = r.values(64).collect();
        assert_eq!((values.len(), values.last()), (65, Some(&4096)));
        let r: IntRange = "4..=10".parse().unwrap();
        assert_eq!(r.values(4).collect::<Vec<_>>(), [4, 8]);
        // Empty and malformed ranges are refused.
        let refused = |s: &str| s.parse::<IntRange>().unwrap_err();
        assert!(refused("9..=3").contains("empty"));
        assert!(refused("3..9").contains("START..=END"));
        assert!(refused("x").contains("not a number"));
        assert!(serde_json::from_str::<IntRange>("[5, 1]").is_err());
        let read: IntRange = serde_json::from_str("[1, 5]").unwrap();
        assert_eq!(read.to_string(), "1..=5");
    }
}
