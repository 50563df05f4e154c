//! Statistics of repeated trials of an eval: an eval run `n` times (trials), `c` of them passed.
//!
//! Pure functions over counts, no state and no I/O:
//! - [`wilson_interval`]: the 95% Wilson score interval of the pass rate `c / n`;
//! - [`pass_at_k`] and [`pass_hat_k`]: the unbiased estimators of pass@k (at least one of `k`
//!   trials passes) and pass^k (all `k` trials pass);
//! - [`fisher_exact`]: the two-sided p-value of Fisher's exact test comparing a baseline's
//!   trials with a treatment's;
//! - [`most_extreme_p`] and [`trials_needed`]: how many trials a comparison needs before it can
//!   say anything;
//! - [`cohen_kappa`]: the agreement of two raters (a judge and a person's labels) on pass/fail,
//!   beyond the agreement chance alone would give.
//!
//! Every rate, probability and p-value is an `f64` fraction in [0, 1] (not a percentage).

/// The two-sided critical value of the standard normal distribution for 95% confidence
/// (the 0.975 quantile).
const Z_95: f64 = 1.959963984540054;

/// The relative tolerance under which a table's probability counts as equal to the observed
/// table's in [`fisher_exact`] (R's `fisher.test` uses the same, `1 + 1e-7`).
const FISHER_RELATIVE_TOLERANCE: f64 = 1e-7;

/// The significance level [`most_extreme_p`] and [`trials_needed`] are read against.
const ALPHA: f64 = 0.05;

/// The largest number of trials per side [`trials_needed`] searches.
const MAX_TRIALS_SEARCHED: u64 = 10_000;

/// The rate `hits / runs` with its 95% Wilson score interval (`[low, high]` fractions);
/// `(None, None)` for no runs.
pub fn rate_with_interval(hits: u32, runs: u32) -> (Option<f64>, Option<[f64; 2]>) {
    if runs == 0 {
        return (None, None);
    }
    let (low, high) = wilson_interval(u64::from(hits), u64::from(runs));
    (Some(f64::from(hits) / f64::from(runs)), Some([low, high]))
}

/// The 95% Wilson score interval of a binomial proportion: `passes` successes out of `trials`.
///
/// Returns `(low, high)`, both fractions in [0, 1] with `low <= high`, clamped to [0, 1]. The
/// interval is `(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)` with `p = passes / trials`,
/// `n = trials` and `z = 1.959963984540054`. When `passes == 0` the low end is exactly 0, and
/// when `passes == trials` the high end is exactly 1 (as the formula gives in exact arithmetic).
///
/// With `trials == 0` nothing is known and the interval is `(0.0, 1.0)`. A `passes` greater
/// than `trials` is not a valid count; it is treated as `trials` (every trial passed). Never
/// panics.
pub fn wilson_interval(passes: u64, trials: u64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let passes = passes.min(trials);
    let n = trials as f64;
    let p = passes as f64 / n;
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denominator;
    let half_width = Z_95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    let low = if passes == 0 {
        0.0
    } else {
        (center - half_width).clamp(0.0, 1.0)
    };
    let high = if passes == trials {
        1.0
    } else {
        (center + half_width).clamp(0.0, 1.0)
    };
    (low, high)
}

/// The unbiased estimator of pass@k: the probability that at least one of `k` trials, drawn
/// without replacement from `trials` trials of which `passes` passed, passes.
///
/// The value is `1 - C(n - c, k) / C(n, k)` with `n = trials` and `c = passes`, a fraction in
/// [0, 1]. It is computed as the product `1 - prod_{i = n-c+1}^{n} (1 - k / i)`, which stays
/// accurate for `n` in the thousands (no binomial coefficient is formed). When fewer than `k`
/// trials failed (`n - c < k`), every draw of `k` contains a pass and the value is exactly 1.0.
/// With `k == 1` it is the pass rate `c / n`.
///
/// Returns `None` when `k == 0`, when `k > trials` (in particular when `trials == 0`), or when
/// `passes > trials` (not a valid count).
pub fn pass_at_k(trials: u64, passes: u64, k: u64) -> Option<f64> {
    if k == 0 || k > trials || passes > trials {
        return None;
    }
    let failures = trials - passes;
    if failures < k {
        return Some(1.0);
    }
    let k_f = k as f64;
    let all_fail: f64 = (failures + 1..=trials)
        .map(|i| 1.0 - k_f / i as f64)
        .product();
    Some((1.0 - all_fail).clamp(0.0, 1.0))
}

/// The unbiased estimator of pass^k: the probability that all of `k` trials, drawn without
/// replacement from `trials` trials of which `passes` passed, pass.
///
/// The value is `C(c, k) / C(n, k)` with `n = trials` and `c = passes`, a fraction in [0, 1],
/// computed as the product `prod_{j = 0}^{k-1} (c - j) / (n - j)` (no binomial coefficient is
/// formed, so `n` in the thousands is fine). It is exactly 0.0 when `k > passes`, and exactly
/// 1.0 when every trial passed. With `k == 1` it is the pass rate `c / n`.
///
/// Returns `None` when `k == 0`, when `k > trials` (in particular when `trials == 0`), or when
/// `passes > trials` (not a valid count).
pub fn pass_hat_k(trials: u64, passes: u64, k: u64) -> Option<f64> {
    if k == 0 || k > trials || passes > trials {
        return None;
    }
    if k > passes {
        return Some(0.0);
    }
    if passes == trials {
        return Some(1.0);
    }
    let all_pass: f64 = (0..k)
        .map(|j| (passes - j) as f64 / (trials - j) as f64)
        .product();
    Some(all_pass.clamp(0.0, 1.0))
}

/// The two-sided p-value of Fisher's exact test for the 2x2 table `[[a, b], [c, d]]`.
///
/// Rows are the two arms, columns the outcomes: `a` baseline passes, `b` baseline fails, `c`
/// treatment passes, `d` treatment fails. Among all tables with the same row and column sums,
/// the function sums the hypergeometric probabilities of those at most as probable as the
/// observed one; a table counts as "at most as probable" when its probability is `<=` the
/// observed probability times `1 + 1e-7` (the relative tolerance of R's `fisher.test`, so that
/// mirror-image tables are not lost to rounding). The result is a fraction in [0, 1], clamped;
/// a small value means the two pass rates differ.
///
/// The probabilities are computed in log space from a table of `ln(i!)` (sums of `ln(i)`), so
/// totals `a + b + c + d` of a few thousand are fine; time and memory are linear in that total.
/// A table whose p-value is below about `1e-308` gives 0.0. An empty table, or any table with
/// an empty row or column (only one table has those margins), gives 1.0.
///
/// # Panics
///
/// When `a + b + c + d` overflows `u64` or the `ln(i!)` table for that total cannot be
/// allocated; counts of trials never come near.
pub fn fisher_exact(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let total = [a, b, c, d]
        .into_iter()
        .try_fold(0u64, u64::checked_add)
        .expect("fisher_exact: a + b + c + d overflows u64");
    let log_factorials = log_factorial_table(total);
    fisher_exact_with(&log_factorials, a, b, c, d)
}

/// The smallest two-sided Fisher p-value ([`fisher_exact`]) that any outcome of a comparison
/// with `baseline_trials` baseline trials and `treatment_trials` treatment trials can give.
///
/// That is the p-value of the most extreme table, every baseline trial passing and every
/// treatment trial failing: `fisher_exact(baseline_trials, 0, 0, treatment_trials)`, a fraction
/// in [0, 1] (the mirror table, all baseline trials failing and all treatment trials passing,
/// gives the same value). A comparison whose most extreme outcome cannot reach p < 0.05 is
/// *underpowered*: no result of those trials can show a difference, so running it says nothing.
/// For example 3 trials against 3 give at best 0.1 (underpowered), 5 against 5 give at best
/// 2/252, about 0.0079. With either count 0 the value is 1.0. Panics only as [`fisher_exact`]
/// does.
pub fn most_extreme_p(baseline_trials: u64, treatment_trials: u64) -> f64 {
    fisher_exact(baseline_trials, 0, 0, treatment_trials)
}

/// The smallest number of trials `n`, the same on both sides, for which the *expected* outcome
/// of a baseline with pass rate `p_baseline` and a treatment with pass rate `p_treatment` is
/// significant.
///
/// The rates are fractions in [0, 1] (values outside are clamped to it). For each `n` from 1 to
/// 10 000 the function builds the table of expected counts rounded to the nearest integer,
/// `round(n * p_baseline)` passes out of `n` against `round(n * p_treatment)` passes out of `n`,
/// and returns the first `n` whose two-sided [`fisher_exact`] p-value is below 0.05. Because of
/// the rounding, a larger `n` is not guaranteed to be significant too.
///
/// This is the number of trials at which the expected table reaches significance, **not** a
/// power calculation: with that many trials an actual run is significant only about half the
/// time (a test with 80% power needs more trials).
///
/// Returns 0 when the two rates are equal, when either is NaN, or when no `n` up to 10 000
/// reaches p < 0.05 (rates too close). A search that runs to the end (rates too close) computes
/// millions of table probabilities: a fraction of a second (about 0.15 s optimised, 0.5 s in a
/// debug build, on one core).
pub fn trials_needed(p_baseline: f64, p_treatment: f64) -> u64 {
    if p_baseline.is_nan() || p_treatment.is_nan() {
        return 0;
    }
    let (p_baseline, p_treatment) = (p_baseline.clamp(0.0, 1.0), p_treatment.clamp(0.0, 1.0));
    if p_baseline == p_treatment {
        return 0;
    }
    let log_factorials = log_factorial_table(2 * MAX_TRIALS_SEARCHED);
    let expected = |n: u64, p: f64| ((n as f64 * p).round() as u64).min(n);
    (1..=MAX_TRIALS_SEARCHED)
        .find(|&n| {
            let baseline = expected(n, p_baseline);
            let treatment = expected(n, p_treatment);
            fisher_exact_with(
                &log_factorials,
                baseline,
                n - baseline,
                treatment,
                n - treatment,
            ) < ALPHA
        })
        .unwrap_or(0)
}

/// Cohen's kappa of two raters on pass/fail items, from the 2x2 table of their ratings:
/// `both_pass` items both rated pass, `first_only` items only the first rater passed,
/// `second_only` items only the second passed, `both_fail` items both failed; n is their sum.
///
/// - observed agreement: p_o = (both_pass + both_fail) / n
/// - chance agreement: p_e = p1 * p2 + (1 - p1) * (1 - p2), where p1 = (both_pass +
///   first_only) / n and p2 = (both_pass + second_only) / n are each rater's pass rate
/// - kappa = (p_o - p_e) / (1 - p_e)
///
/// 1 is perfect agreement, 0 what chance gives, below 0 worse than chance. `None` when n is 0
/// or p_e is 1 (both raters gave every item the same one rating: kappa is 0/0, undefined).
pub fn cohen_kappa(
    both_pass: u64,
    first_only: u64,
    second_only: u64,
    both_fail: u64,
) -> Option<f64> {
    let n = (both_pass + first_only + second_only + both_fail) as f64;
    if n == 0.0 {
        return None;
    }
    let p_o = (both_pass + both_fail) as f64 / n;
    let p1 = (both_pass + first_only) as f64 / n;
    let p2 = (both_pass + second_only) as f64 / n;
    let p_e = p1 * p2 + (1.0 - p1) * (1.0 - p2);
    if (1.0 - p_e).abs() < f64::EPSILON {
        return None;
    }
    Some((p_o - p_e) / (1.0 - p_e))
}

/// The trials per side a comparison of two pass rates needs to detect a difference of
/// `difference` (a fraction: 0.2 for 20 percentage points) from a side passing at `base_rate`,
/// with a two-sided test at significance `alpha` and the given `power` (0.05 and 0.8 for the
/// usual study). A power calculation, unlike [`trials_needed`]: with this many trials a real
/// difference of that size is found with probability `power`.
///
/// The formula is the normal approximation of the two-proportion test (Fleiss, Statistical
/// Methods for Rates and Proportions, without the continuity correction), with
/// `p1 = base_rate`, `p2 = p1 ± difference`, `p̄ = (p1 + p2) / 2`:
///
/// `n = ceil((z(1 - alpha/2) * sqrt(2 p̄ (1 - p̄)) + z(power) * sqrt(p1 (1 - p1) + p2 (1 - p2)))² / difference²)`
///
/// where `z(q)` is the standard normal quantile (statrs). Both directions (`p1 + difference`
/// and `p1 - difference`) are computed where `p2` stays in [0, 1], and the larger `n` is
/// returned, so that it suffices for a rise and for a fall. At a base rate of 0.5 and a
/// difference of 0.2: `p̄ = 0.6` (or 0.4), `n = (1.95996 * 0.69282 + 0.84162 * 0.67823)² /
/// 0.04 = 92.999...`, so 93.
///
/// `None` when no direction fits in [0, 1], or when an argument is out of range (`base_rate`
/// outside [0, 1], `difference` not in (0, 1], `alpha` or `power` not in (0, 1)).
#[cfg(feature = "runner")]
pub fn trials_to_detect(base_rate: f64, difference: f64, alpha: f64, power: f64) -> Option<u64> {
    use statrs::distribution::{ContinuousCDF, Normal};
    let open = |x: f64| x > 0.0 && x < 1.0;
    let valid = (0.0..=1.0).contains(&base_rate)
        && difference > 0.0
        && difference <= 1.0
        && open(alpha)
        && open(power);
    if !valid {
        return None;
    }
    let normal = Normal::standard();
    let z_alpha = normal.inverse_cdf(1.0 - alpha / 2.0);
    let z_power = normal.inverse_cdf(power);
    let p1 = base_rate;
    [p1 + difference, p1 - difference]
        .into_iter()
        .filter(|p2| (0.0..=1.0).contains(p2))
        .map(|p2| {
            let mean = (p1 + p2) / 2.0;
            let root = z_alpha * (2.0 * mean * (1.0 - mean)).sqrt()
                + z_power * (p1 * (1.0 - p1) + p2 * (1.0 - p2)).sqrt();
            // A hair below an integer (float rounding) is that integer.
            ((root * root) / (difference * difference) - 1e-9).ceil() as u64
        })
        .max()
}

/// `ln(i!)` for `i` in `0..=max`: entry `i` is `ln(1) + ln(2) + ... + ln(i)`.
fn log_factorial_table(max: u64) -> Vec<f64> {
    let max = usize::try_from(max).expect("log_factorial_table: size exceeds usize");
    let mut table = Vec::with_capacity(max + 1);
    let mut sum = 0.0;
    table.push(sum);
    for i in 1..=max {
        sum += (i as f64).ln();
        table.push(sum);
    }
    table
}

/// [`fisher_exact`] with a `ln(i!)` table covering at least `0..=a + b + c + d`.
fn fisher_exact_with(log_factorials: &[f64], a: u64, b: u64, c: u64, d: u64) -> f64 {
    let lf = |i: u64| log_factorials[i as usize];
    let (row1, row2, col1) = (a + b, c + d, a + c);
    let total = row1 + row2;
    let col2 = total - col1;
    if row1 == 0 || row2 == 0 || col1 == 0 || col2 == 0 {
        return 1.0;
    }
    // The table with `x` in the top-left cell: [[x, row1 - x], [col1 - x, row2 - col1 + x]].
    let lowest = col1.saturating_sub(row2);
    let highest = row1.min(col1);
    let margins = lf(row1) + lf(row2) + lf(col1) + lf(col2) - lf(total);
    let log_probability =
        |x: u64| margins - lf(x) - lf(row1 - x) - lf(col1 - x) - lf(row2 + x - col1);
    // Weights relative to the most probable table (the hypergeometric mode,
    // floor((row1 + 1)(col1 + 1) / (total + 2))), so that nothing underflows before the
    // normalisation and no weight exceeds 1.
    let mode = (u128::from(row1) + 1) * (u128::from(col1) + 1) / (u128::from(total) + 2);
    let mode = u64::try_from(mode).map_or(highest, |m| m.clamp(lowest, highest));
    let log_max = log_probability(mode);
    let observed = (log_probability(a) - log_max).exp();
    let threshold = observed * (1.0 + FISHER_RELATIVE_TOLERANCE);
    let (mut as_extreme, mut all) = (0.0, 0.0);
    let mut add = |x: u64| {
        let weight = (log_probability(x) - log_max).exp();
        all += weight;
        if weight <= threshold {
            as_extreme += weight;
        }
        weight
    };
    // The probabilities fall away from the mode on both sides (the distribution is unimodal):
    // once a weight underflows to 0, every table further out does too and adds nothing.
    add(mode);
    for x in (lowest..mode).rev() {
        if add(x) == 0.0 {
            break;
        }
    }
    for x in mode + 1..=highest {
        if add(x) == 0.0 {
            break;
        }
    }
    (as_extreme / all).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    /// The textbook case, worked by hand: base rate 50%, a 20-point difference, alpha 0.05
    /// two-sided, power 0.8. z(0.975) = 1.959964, z(0.8) = 0.841621; p̄ = 0.6 (either
    /// direction), sqrt(2 * 0.6 * 0.4) = 0.692820, sqrt(0.25 + 0.21) = 0.678233;
    /// (1.959964 * 0.692820 + 0.841621 * 0.678233)² = (1.357903 + 0.570815)² = 3.719953;
    /// / 0.04 = 92.999: 93 per side. At 10%: only +20 fits (p2 = 0.3, p̄ = 0.2):
    /// (1.959964 * sqrt(0.32) + 0.841621 * sqrt(0.09 + 0.21))² / 0.04
    /// = (1.108723 + 0.460975)² / 0.04 = 2.463951 / 0.04 = 61.599: 62.
    #[test]
    fn trials_to_detect_a_difference_match_the_hand_computed_values() {
        assert_eq!(super::trials_to_detect(0.5, 0.2, 0.05, 0.8), Some(93));
        assert_eq!(super::trials_to_detect(0.1, 0.2, 0.05, 0.8), Some(62));
        assert_eq!(super::trials_to_detect(0.5, 0.0, 0.05, 0.8), None);
        assert_eq!(super::trials_to_detect(1.5, 0.2, 0.05, 0.8), None);
        assert_eq!(super::trials_to_detect(0.5, 0.2, 0.05, 1.0), None);
    }

    use super::*;

    fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
        (actual - expected).abs() <= tolerance
    }

    #[test]
    fn wilson_interval_of_three_of_five() {
        // By hand: p = 0.6, z² = 3.8415, denominator 1 + z²/5 = 1.7683, center
        // (0.6 + 0.38415) / 1.7683 = 0.55655, half width
        // 1.96 · sqrt(0.048 + 0.038415) / 1.7683 = 0.32583: (0.2307, 0.8824).
        let (low, high) = wilson_interval(3, 5);
        assert!(close(low, 0.2307, 5e-5), "low {low}");
        assert!(close(high, 0.8824, 5e-5), "high {high}");
    }

    #[test]
    fn wilson_interval_ends() {
        // No pass: the low end is 0 (center and half width are equal in exact arithmetic).
        let (low, high) = wilson_interval(0, 5);
        assert_eq!(low, 0.0);
        // By hand: 2 · (z²/10) / (1 + z²/5) = 0.76830 / 1.76830 = 0.4345.
        assert!(close(high, 0.4345, 5e-5), "high {high}");
        // Every trial passed: the high end is 1, the low end 1 - 0.4345 (symmetry).
        let (low, high) = wilson_interval(5, 5);
        assert!(close(high, 1.0, 1e-12), "high {high}");
        assert!(close(low, 0.5655, 5e-5), "low {low}");
        // No trial: nothing is known.
        assert_eq!(wilson_interval(0, 0), (0.0, 1.0));
        assert_eq!(wilson_interval(3, 0), (0.0, 1.0));
    }

    #[test]
    fn pass_at_k_values() {
        // k = 1 is the pass rate: 3 / 5.
        assert!(close(pass_at_k(5, 3, 1).unwrap(), 0.6, 1e-12));
        // 1 - C(2, 2) / C(5, 2) = 1 - 1/10.
        assert!(close(pass_at_k(5, 3, 2).unwrap(), 0.9, 1e-12));
        // Only n - c = 2 trials failed, fewer than k = 3: every draw of 3 holds a pass.
        assert_eq!(pass_at_k(5, 3, 3), Some(1.0));
        // No pass at all: 1 - C(5, 2) / C(5, 2) = 0.
        assert!(close(pass_at_k(5, 0, 2).unwrap(), 0.0, 1e-12));
        // 1 - C(7, 3) / C(10, 3) = 1 - 35/120 = 85/120.
        assert!(close(pass_at_k(10, 3, 3).unwrap(), 85.0 / 120.0, 1e-12));
    }

    #[test]
    fn pass_at_k_none() {
        assert_eq!(pass_at_k(5, 3, 6), None);
        assert_eq!(pass_at_k(5, 3, 0), None);
        assert_eq!(pass_at_k(0, 0, 1), None);
        assert_eq!(pass_at_k(5, 6, 1), None);
    }

    #[test]
    fn pass_at_k_large_n_is_stable() {
        // 1 - C(1000, 1) / C(2000, 1) = 1 - 1000/2000 (k = 1 is the pass rate).
        assert!(close(pass_at_k(2000, 1000, 1).unwrap(), 0.5, 1e-12));
        // 1 - C(1999, 2) / C(2000, 2) = 1 - 1998/2000 = 0.001.
        assert!(close(pass_at_k(2000, 1, 2).unwrap(), 0.001, 1e-12));
    }

    #[test]
    fn pass_hat_k_values() {
        // C(3, 2) / C(5, 2) = 3/10.
        assert!(close(pass_hat_k(5, 3, 2).unwrap(), 0.3, 1e-12));
        // C(3, 3) / C(5, 3) = 1/10.
        assert!(close(pass_hat_k(5, 3, 3).unwrap(), 0.1, 1e-12));
        // C(3, 4) = 0: four passes cannot be drawn from three.
        assert_eq!(pass_hat_k(5, 3, 4), Some(0.0));
        // C(5, 5) / C(5, 5).
        assert_eq!(pass_hat_k(5, 5, 5), Some(1.0));
        // k = 1 is the pass rate: 3 / 5.
        assert!(close(pass_hat_k(5, 3, 1).unwrap(), 0.6, 1e-12));
        // C(1999, 2) / C(2000, 2) = 1998/2000.
        assert!(close(pass_hat_k(2000, 1999, 2).unwrap(), 0.999, 1e-12));
    }

    #[test]
    fn pass_hat_k_none() {
        assert_eq!(pass_hat_k(5, 3, 6), None);
        assert_eq!(pass_hat_k(5, 3, 0), None);
        assert_eq!(pass_hat_k(0, 0, 1), None);
        assert_eq!(pass_hat_k(5, 6, 1), None);
    }

    #[test]
    fn fisher_exact_tea_tasting() {
        // Fisher's lady tasting tea: margins 4/4/4, n = 8, C(8, 4) = 70 tables weighted
        // C(4, x) · C(4, 4 - x) = 1, 16, 36, 16, 1; observed x = 3 (16); the tables at most as
        // probable sum to 1 + 16 + 16 + 1 = 34: p = 34/70 = 0.4857142857.
        assert!(close(fisher_exact(3, 1, 1, 3), 34.0 / 70.0, 1e-9));
        assert!(close(fisher_exact(3, 1, 1, 3), 0.4857142857, 1e-9));
    }

    #[test]
    fn fisher_exact_wikipedia_example() {
        // Wikipedia's "Fisher's exact test" example, p ≈ 0.002759. By hand: margins 10/14/12,
        // n = 24, C(24, 12) = 2704156; C(10, x) · C(14, 12 - x) is 91 at x = 0 and 10, 3640 at
        // x = 1 (observed) and 9, larger elsewhere: p = 2 · (91 + 3640) / 2704156 = 0.0027595.
        let p = fisher_exact(1, 9, 11, 3);
        assert!(close(p, 7462.0 / 2704156.0, 1e-12), "p {p}");
        assert!(close(p, 0.002759, 5e-7), "p {p}");
    }

    #[test]
    fn fisher_exact_mid_table() {
        // By hand: margins 10/10/9, n = 20, C(20, 9) = 167960; C(10, x) · C(10, 9 - x) for
        // x = 0..=9 is 10, 450, 5400, 25200, 52920, 52920, 25200, 5400, 450, 10; observed x = 7
        // (5400); the tables at most as probable sum to 2 · (10 + 450 + 5400) = 11720:
        // p = 11720/167960 = 0.0697785.
        let p = fisher_exact(7, 3, 2, 8);
        assert!(close(p, 11720.0 / 167960.0, 1e-12), "p {p}");
        // Swapping the rows, or the columns, gives the same table up to naming: the same p.
        assert!(close(fisher_exact(2, 8, 7, 3), p, 1e-12));
        assert!(close(fisher_exact(3, 7, 8, 2), p, 1e-12));
    }

    #[test]
    fn fisher_exact_extremes() {
        // Only the two extreme tables are as improbable as the observed one, each 1 / C(20, 10):
        // 2 / 184756 = 1.0825088e-05.
        let p = fisher_exact(10, 0, 0, 10);
        assert!(close(p, 1.0825088e-05, 1e-12), "p {p}");
        // Empty table and empty margins: only one table, p = 1.
        assert_eq!(fisher_exact(0, 0, 0, 0), 1.0);
        assert_eq!(fisher_exact(4, 0, 6, 0), 1.0);
        assert_eq!(fisher_exact(0, 0, 3, 7), 1.0);
        // The same rate on both sides: the observed table is the most probable one, p = 1.
        assert!(close(fisher_exact(2, 2, 2, 2), 1.0, 1e-12));
    }

    #[test]
    fn fisher_exact_large_counts() {
        // 2000 trials a side, the same rate: the observed table is the most probable, p = 1.
        assert!(close(fisher_exact(1000, 1000, 1000, 1000), 1.0, 1e-9));
        // 2000 trials a side, all against none: p = 2 / C(4000, 2000), about 1e-1203, which
        // underflows f64.
        assert_eq!(fisher_exact(2000, 0, 0, 2000), 0.0);
    }

    #[test]
    fn most_extreme_p_values() {
        // 2 / C(6, 3) = 2/20: even the best outcome of 3 against 3 misses p < 0.05.
        let p = most_extreme_p(3, 3);
        assert!(close(p, 0.1, 1e-12), "p {p}");
        assert!(p >= 0.05, "3 vs 3 trials are underpowered");
        // 2 / C(10, 5) = 2/252 = 0.0079365.
        let p = most_extreme_p(5, 5);
        assert!(close(p, 2.0 / 252.0, 1e-12), "p {p}");
        assert!(close(p, 0.0079365, 1e-7), "p {p}");
        // No treatment trial: nothing to compare.
        assert_eq!(most_extreme_p(5, 0), 1.0);
    }

    /// Values computed by hand (exact hypergeometric sums), not by this module: 20% against 80%
    /// needs 7 trials a side. At n = 7 the expected table is [[1, 6], [6, 1]]: margins 7/7 and
    /// 7/7, P(x baseline passes) = C(7, x) C(7, 7 - x) / C(14, 7) = (1, 49, 441, 1225, 1225,
    /// 441, 49, 1) / 3432; the tables at most as probable as x = 1 are x = 0, 1, 6, 7: p =
    /// 100/3432 = 25/858 = 0.02914 < 0.05. At n = 6 the table is [[1, 5], [5, 1]]: P(x) =
    /// C(6, x) C(6, 6 - x) / C(12, 6) = (1, 36, 225, 400, 225, 36, 1) / 924, p = 74/924 =
    /// 0.08009, not significant. 50% against 90% needs 14: at n = 14, [[7, 7], [13, 1]] gives
    /// p = 34/1035 = 0.03285; at n = 13, [[7, 6], [12, 1]] gives 0.07304 (exact sums in
    /// Python's `fractions`). Swapping the sides mirrors the table: the same n.
    #[test]
    fn trials_needed_is_the_first_significant_expected_table() {
        assert_eq!(trials_needed(0.2, 0.8), 7);
        assert!(close(fisher_exact(1, 6, 6, 1), 25.0 / 858.0, 1e-12));
        assert!(close(fisher_exact(1, 5, 5, 1), 74.0 / 924.0, 1e-12));
        assert_eq!(trials_needed(0.5, 0.9), 14);
        assert_eq!(trials_needed(0.9, 0.5), 14);
        assert!(close(fisher_exact(7, 7, 13, 1), 34.0 / 1035.0, 1e-12));
        assert!(close(fisher_exact(7, 6, 12, 1), 0.0730435, 1e-6));
    }

    #[test]
    fn trials_needed_never() {
        assert_eq!(trials_needed(0.5, 0.5), 0);
        assert_eq!(trials_needed(f64::NAN, 0.5), 0);
    }

    #[test]
    fn trials_needed_all_against_none() {
        // 1.0 against 0.0: most_extreme_p(3, 3) = 0.1 and most_extreme_p(4, 4) = 2 / C(8, 4)
        // = 2/70 = 0.0286 < 0.05, so n = 4.
        assert_eq!(trials_needed(1.0, 0.0), 4);
    }

    /// Cohen's kappa by hand: 10 items, both pass 4, only the first 1, only the second 1, both
    /// fail 4. p_o = 8/10 = 0.8; p1 = p2 = 5/10, p_e = 0.5*0.5 + 0.5*0.5 = 0.5;
    /// kappa = (0.8 - 0.5) / (1 - 0.5) = 0.6. Perfect agreement is 1, one rating throughout
    /// is undefined, and always disagreeing on a balanced table is -1.
    #[test]
    fn cohen_kappa_is_agreement_beyond_chance() {
        let kappa = cohen_kappa(4, 1, 1, 4).unwrap();
        assert!((kappa - 0.6).abs() < 1e-12, "{kappa}");
        assert_eq!(cohen_kappa(3, 0, 0, 2), Some(1.0));
        assert_eq!(cohen_kappa(5, 0, 0, 0), None);
        assert_eq!(cohen_kappa(0, 0, 0, 0), None);
        assert_eq!(cohen_kappa(0, 2, 2, 0), Some(-1.0));
    }
}
