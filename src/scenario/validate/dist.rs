//! Checks on a distribution (`service_time`, `think_time`, `latency`, a `slow` fault's
//! `service_time`): which keys each shape takes, their ranges, the quantile keys' spelling and
//! order, the histogram's buckets, and reading an `empirical` distribution's `file` (a regular
//! file of at most [`MAX_SAMPLE_BYTES`], relative to the folder of the file that writes the key,
//! read through [`crate::config::inputs`]). The shapes themselves are
//! [`crate::scenario::dist`]'s.

use std::path::Path;
use std::sync::Arc;

use super::Validator;
use crate::scenario::dist::{Empirical, Histogram, QuantileCurve, quantile_of_key};
use crate::scenario::raw::{BucketBound, DistKindRaw, DistRaw};
use crate::scenario::{Dist, Shape};

/// Largest `scale` (and `slowdown`) accepted.
pub(super) const MAX_SCALE: f64 = 1e6;
/// Most samples an `empirical` distribution holds.
pub(super) const MAX_SAMPLES: usize = 10_000_000;
/// Largest samples file read, in bytes.
pub(super) const MAX_SAMPLE_BYTES: u64 = 256 << 20;

impl Validator<'_> {
    /// The distribution at `key`, every problem of it reported.
    pub(super) fn dist(&mut self, key: &str, d: &DistRaw) -> Option<Dist> {
        let scale = match d.scale {
            None => 1.0,
            Some(k) if k.is_finite() && k > 0.0 && k <= MAX_SCALE => k,
            Some(_) => {
                self.problem(
                    &format!("{key}.scale"),
                    format!("must be a number in (0, {MAX_SCALE}]"),
                );
                return None;
            }
        };
        let shape = match d.dist {
            None => self.quantiles(key, d),
            Some(kind) => self.shape(key, kind, d),
        }?;
        Some(Dist { shape, scale })
    }

    /// Reports every key given that the shape does not take (`optional` ones may be absent).
    fn only_keys(&mut self, key: &str, what: &str, takes: &[&str], d: &DistRaw) -> bool {
        let given = [
            ("mean", d.mean.is_some()),
            ("value", d.value.is_some()),
            ("min", d.min.is_some()),
            ("max", d.max.is_some()),
            ("sigma", d.sigma.is_some()),
            ("alpha", d.alpha.is_some()),
            ("samples", d.samples.is_some()),
            ("file", d.file.is_some()),
            ("column", d.column.is_some()),
            ("buckets", d.buckets.is_some()),
        ];
        let mut ok = true;
        for (param, present) in given {
            if present && !takes.contains(&param) {
                self.problem(
                    &format!("{key}.{param}"),
                    format!(
                        "is not a parameter of {what} (it takes {}, and `scale`)",
                        super::list(takes)
                    ),
                );
                ok = false;
            }
        }
        if d.dist.is_some() {
            for (q, _) in &d.quantiles {
                self.problem(
                    &format!("{key}.{q}"),
                    format!(
                        "is a quantile: quantiles make a distribution of their own, without \
                         `dist`; remove `dist` or `{q}`"
                    ),
                );
                ok = false;
            }
        }
        ok
    }

    /// `{p50: 20ms, p99: 180ms}`, optional `min`, `max`.
    fn quantiles(&mut self, key: &str, d: &DistRaw) -> Option<Shape> {
        if d.quantiles.is_empty() {
            self.problem(
                key,
                "needs `dist` (`exponential`, `constant`, `uniform`, `lognormal`, `pareto`, \
                 `empirical` or `histogram`) or quantiles like `{p50: 20ms, p99: 180ms}`",
            );
            return None;
        }
        if !self.only_keys(key, "quantiles", &["min", "max"], d) {
            return None;
        }
        let mut points: Vec<(f64, f64, &str)> = Vec::new();
        let mut ok = true;
        for (k, t) in &d.quantiles {
            match quantile_of_key(k) {
                Some(Ok(p)) => {
                    if t.0.is_zero() {
                        self.problem(
                            &format!("{key}.{k}"),
                            "must be longer than 0s (quantiles are interpolated in log-time; \
                             give `min: 0s` for draws down to 0)",
                        );
                        ok = false;
                    }
                    points.push((p, t.0.0 as f64, k.as_str()));
                }
                Some(Err(message)) => {
                    self.problem(&format!("{key}.{k}"), message);
                    ok = false;
                }
                None => unreachable!("raw keeps only quantile keys"),
            }
        }
        if !ok {
            return None;
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in points.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            if lo.0 == hi.0 {
                self.problem(
                    &format!("{key}.{}", hi.2),
                    format!("names the same quantile as `{}`", lo.2),
                );
                ok = false;
            } else if hi.1 < lo.1 {
                self.problem(
                    &format!("{key}.{}", hi.2),
                    format!(
                        "is below `{}`: quantiles cannot decrease as the quantile rises",
                        lo.2
                    ),
                );
                ok = false;
            }
        }
        if points.len() < 2 {
            self.problem(
                key,
                "one quantile does not fix a distribution: give at least two, like `p50` and `p99`",
            );
            ok = false;
        }
        let (first, last) = (points.first()?, points.last()?);
        if let Some(min) = d.min
            && (min.0.0 as f64) > first.1
        {
            self.problem(
                &format!("{key}.min"),
                format!(
                    "is above `{}`; the smallest draw must not exceed a quantile",
                    first.2
                ),
            );
            ok = false;
        }
        if let Some(max) = d.max
            && (max.0.0 as f64) < last.1
        {
            self.problem(
                &format!("{key}.max"),
                format!(
                    "is below `{}`; the largest draw must not be under a quantile",
                    last.2
                ),
            );
            ok = false;
        }
        if !ok {
            return None;
        }
        let pts: Vec<(f64, f64)> = points.iter().map(|&(p, t, _)| (p, t)).collect();
        Some(Shape::Quantiles(Arc::new(QuantileCurve::new(
            &pts,
            d.min.map(|m| m.0.0 as f64),
            d.max.map(|m| m.0.0 as f64),
        ))))
    }

    fn shape(&mut self, key: &str, kind: DistKindRaw, d: &DistRaw) -> Option<Shape> {
        let name = format!("`{}`", format!("{kind:?}").to_lowercase());
        let needs: &[&str] = match kind {
            DistKindRaw::Exponential => &["mean"],
            DistKindRaw::Constant => &["value"],
            DistKindRaw::Uniform => &["min", "max"],
            DistKindRaw::Lognormal => &["mean", "sigma"],
            DistKindRaw::Pareto => &["min", "alpha"],
            DistKindRaw::Empirical => return self.empirical(key, d),
            DistKindRaw::Histogram => return self.histogram(key, d),
        };
        if !self.only_keys(key, &name, needs, d) {
            return None;
        }
        let given = |p: &str| match p {
            "mean" => d.mean.is_some(),
            "value" => d.value.is_some(),
            "min" => d.min.is_some(),
            "max" => d.max.is_some(),
            "sigma" => d.sigma.is_some(),
            _ => d.alpha.is_some(),
        };
        let mut ok = true;
        for p in needs {
            if !given(p) {
                self.problem(
                    key,
                    format!("{name} needs `{p}` (it takes {})", super::list(needs)),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        let shape = match kind {
            DistKindRaw::Exponential => Shape::Exponential { mean: d.mean?.0 },
            DistKindRaw::Constant => Shape::Constant { value: d.value?.0 },
            DistKindRaw::Uniform => {
                let (min, max) = (d.min?.0, d.max?.0);
                if max < min {
                    self.problem(&format!("{key}.max"), "must be at least `min`");
                    return None;
                }
                Shape::Uniform { min, max }
            }
            DistKindRaw::Pareto => {
                let alpha = d.alpha?;
                if !(alpha.is_finite() && (0.1..=100.0).contains(&alpha)) {
                    self.problem(&format!("{key}.alpha"), "must be a number in [0.1, 100]");
                    return None;
                }
                if d.min?.0.is_zero() {
                    self.problem(&format!("{key}.min"), "must be longer than 0s");
                    return None;
                }
                Shape::Pareto {
                    min: d.min?.0,
                    alpha,
                }
            }
            DistKindRaw::Lognormal => {
                let sigma = d.sigma?;
                if !(sigma.is_finite() && (0.0..=10.0).contains(&sigma)) {
                    self.problem(&format!("{key}.sigma"), "must be a number in [0, 10]");
                    return None;
                }
                Shape::LogNormal {
                    mean: d.mean?.0,
                    sigma,
                }
            }
            DistKindRaw::Empirical | DistKindRaw::Histogram => return None,
        };
        if let Shape::Exponential { mean } | Shape::LogNormal { mean, .. } = shape
            && mean.is_zero()
        {
            self.problem(&format!("{key}.mean"), "must be longer than 0s");
            return None;
        }
        Some(shape)
    }

    /// `{dist: empirical, samples: […]}` or `{dist: empirical, file: F, column: C}`.
    fn empirical(&mut self, key: &str, d: &DistRaw) -> Option<Shape> {
        if !self.only_keys(key, "`empirical`", &["samples", "file", "column"], d) {
            return None;
        }
        let samples: Vec<f64> = match (&d.samples, &d.file) {
            (Some(s), None) => {
                if let Some(_c) = &d.column {
                    self.problem(
                        &format!("{key}.column"),
                        "names a column of `file`; with `samples` remove it",
                    );
                    return None;
                }
                if s.is_empty() {
                    self.problem(
                        &format!("{key}.samples"),
                        "is empty: give at least one duration",
                    );
                    return None;
                }
                if s.len() > MAX_SAMPLES {
                    self.problem(
                        &format!("{key}.samples"),
                        format!(
                            "holds {} samples; loadsim takes at most {MAX_SAMPLES}",
                            s.len()
                        ),
                    );
                    return None;
                }
                s.iter().map(|t| t.0.0 as f64).collect()
            }
            (None, Some(file)) => {
                let path = self.doc.folder_of(&format!("{key}.file")).join(file);
                match self.doc.inputs.read(
                    SAMPLES,
                    &path,
                    d.column.clone().unwrap_or_default(),
                    |text| parse_samples(&path, text, d.column.as_deref()),
                    |s: &Vec<f64>| (s.len() * std::mem::size_of::<f64>()) as u64,
                ) {
                    Ok(s) => s.as_ref().clone(),
                    Err(e) => {
                        self.problem(&format!("{key}.file"), e);
                        return None;
                    }
                }
            }
            (Some(_), Some(_)) => {
                self.problem(
                    &format!("{key}.file"),
                    "give `samples` (a list) or `file` (a file of them), not both",
                );
                return None;
            }
            (None, None) => {
                self.problem(
                    key,
                    "`empirical` needs `samples` (a list of durations, like `[12ms, 15ms]`) or \
                     `file` (a file of them, one per line)",
                );
                return None;
            }
        };
        Some(Shape::Empirical(Arc::new(Empirical::new(samples))))
    }

    /// `{dist: histogram, buckets: [{le: 5ms, count: 120}, …, {le: +Inf, count: N}]}`.
    fn histogram(&mut self, key: &str, d: &DistRaw) -> Option<Shape> {
        if !self.only_keys(key, "`histogram`", &["buckets"], d) {
            return None;
        }
        let Some(buckets) = &d.buckets else {
            self.problem(
                key,
                "`histogram` needs `buckets` (cumulative, like `[{le: 5ms, count: 120}, {le: \
                 +Inf, count: 130}]`)",
            );
            return None;
        };
        let bkey = format!("{key}.buckets");
        let mut finite: Vec<(f64, f64)> = Vec::new();
        let mut total: Option<f64> = None;
        let mut ok = true;
        for (i, b) in buckets.iter().enumerate() {
            let here = format!("{bkey}[{i}]");
            if total.is_some() {
                self.problem(
                    &format!("{here}.le"),
                    "follows the `+Inf` bucket, which must be the last",
                );
                ok = false;
                break;
            }
            let count = b.count as f64;
            if let Some(&(le_prev, c_prev)) = finite.last()
                && count < c_prev
            {
                self.problem(
                    &format!("{here}.count"),
                    format!(
                        "is below the count of the bucket before ({c_prev}): buckets are \
                         cumulative, as Prometheus exposes them, so counts never decrease \
                         (le {} ns)",
                        le_prev
                    ),
                );
                ok = false;
            }
            match b.le {
                BucketBound::Inf => total = Some(count),
                BucketBound::At(le) => {
                    let le = le.0 as f64;
                    if let Some(&(prev, _)) = finite.last()
                        && le <= prev
                    {
                        self.problem(
                            &format!("{here}.le"),
                            "must be above the `le` of the bucket before: list buckets by \
                             increasing `le`, each once",
                        );
                        ok = false;
                    }
                    finite.push((le, count));
                }
            }
        }
        if finite.is_empty() && ok {
            self.problem(
                &bkey,
                "needs at least one bucket with a finite `le` (a duration)",
            );
            ok = false;
        }
        if !ok {
            return None;
        }
        let last = finite.last().map_or(0.0, |&(_, c)| c);
        let total = total.unwrap_or(last);
        if total == 0.0 {
            self.problem(&bkey, "counts no observation: the histogram is empty");
            return None;
        }
        Some(Shape::Histogram(Arc::new(Histogram::new(&finite, total))))
    }
}

/// The kind of file an `empirical` distribution's `file:` is, for [`crate::config::inputs`]:
/// read safely (a regular file only), at most [`MAX_SAMPLE_BYTES`] bytes, once per command, and
/// recorded as an input of the output plan and of a journal's identity.
pub(super) const SAMPLES: crate::config::inputs::Kind = crate::config::inputs::Kind {
    what: "samples",
    max_bytes: MAX_SAMPLE_BYTES,
};

/// The durations of an `empirical` distribution's file at `path` (for messages), from its
/// `text`: one per line (blank lines and `#` comments skipped), or with `column` a CSV whose
/// header names the column; the error names the file and line.
pub(super) fn parse_samples(
    path: &Path,
    text: &str,
    column: Option<&str>,
) -> Result<Vec<f64>, String> {
    let shown = path.display();
    let parse = |text: &str, line: u64| {
        crate::config::duration::parse_duration(text)
            .map(|d| d.0 as f64)
            .map_err(|e| format!("{shown}:{line}: {e}"))
    };
    let mut samples = Vec::new();
    match column {
        None => {
            for (i, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                samples.push(parse(line, i as u64 + 1)?);
                if samples.len() > MAX_SAMPLES {
                    return Err(format!("{shown} holds more than {MAX_SAMPLES} samples"));
                }
            }
        }
        Some(name) => {
            let mut reader = csv::ReaderBuilder::new()
                .trim(csv::Trim::All)
                .comment(Some(b'#'))
                .from_reader(text.as_bytes());
            let headers = reader
                .headers()
                .map_err(|e| format!("{shown}: {e}"))?
                .clone();
            let Some(at) = headers.iter().position(|h| h == name) else {
                let names: Vec<&str> = headers.iter().collect();
                return Err(format!(
                    "{shown}:1: no column `{name}` in the header (it has {})",
                    super::list(&names)
                ));
            };
            for record in reader.records() {
                let record = record.map_err(|e| format!("{shown}: {e}"))?;
                let line = record.position().map_or(0, |p| p.line());
                let field = record
                    .get(at)
                    .ok_or_else(|| format!("{shown}:{line}: the row has no column `{name}`"))?;
                samples.push(parse(field, line)?);
                if samples.len() > MAX_SAMPLES {
                    return Err(format!("{shown} holds more than {MAX_SAMPLES} samples"));
                }
            }
        }
    }
    if samples.is_empty() {
        return Err(format!("{shown} holds no duration"));
    }
    Ok(samples)
}
