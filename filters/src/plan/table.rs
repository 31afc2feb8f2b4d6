//! The planner's answer as a markdown table: `Display` for [`Ranking`]
//! (what the `amq-plan` binary prints).

use core::fmt;

use super::{Budget, Priority, Ranking};
use crate::math;

impl fmt::Display for Ranking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.planner;
        write!(f, "{} keys", Thousands(p.keys as u64))?;
        if p.prefixes > 0 {
            write!(f, " + {} prefixes", Thousands(p.prefixes as u64))?;
        }
        if let Some(fpr) = p.fpr {
            write!(f, ", target FPR {}", Percent(fpr))?;
        }
        match p.budget {
            Some(Budget::Bits(b)) => write!(f, ", budget {} bits", Thousands(b))?,
            Some(Budget::BitsPerKey(b)) => write!(f, ", budget {b} bits/key")?,
            None => {}
        }
        let needs = [
            (!p.keys_known_up_front, "keys arrive one by one"),
            (!p.count_known, "key count unknown"),
            (p.inserts_after_build, "inserts after build"),
            (p.deletes, "deletes"),
            (p.concurrent_inserts, "concurrent inserts"),
        ];
        let mut any = false;
        for (_, need) in needs.iter().filter(|(wanted, _)| *wanted) {
            f.write_str(if any { ", " } else { "; " })?;
            f.write_str(need)?;
            any = true;
        }
        if !any {
            f.write_str("; a static set")?;
        }
        let first = match (p.priority, p.fpr) {
            (Priority::Speed, _) => "query cost first",
            (Priority::Space, Some(_)) => "fewest bits first",
            (Priority::Space, None) => "lowest FPR first",
        };
        writeln!(f, "; {first}. log2(1/FPR) is the space limit.\n")?;
        writeln!(
            f,
            "| # | filter | parameters | bits/key | over log2(1/FPR) | FPR | query cost | why |"
        )?;
        writeln!(
            f,
            "|--:|--------|------------|---------:|-----------------:|----:|------------|-----|"
        )?;
        for (i, plan) in self.plans.iter().enumerate() {
            let name = if plan.concurrent {
                " as AtomicBlockedBloom"
            } else {
                ""
            };
            let over = plan.bits_per_key / math::min_bits_per_key(plan.fpr) - 1.0;
            writeln!(
                f,
                "| {} | {:?}{name} | {} | {:.2} | {:+.1}% | {} | {} | {} |",
                i + 1,
                plan.kind,
                plan.params,
                plan.bits_per_key,
                100.0 * over,
                Percent(plan.fpr),
                plan.cost.name(),
                plan.reason
            )?;
        }
        if self.plans.is_empty() {
            writeln!(f, "| - | (none) | | | | | | no kind meets every requirement |")?;
        }
        if !self.excluded.is_empty() {
            writeln!(f, "\nLeft out:\n")?;
            for e in &self.excluded {
                writeln!(f, "- {:?}: {}", e.kind, e.why)?;
            }
        }
        Ok(())
    }
}

/// A probability as a percentage with three significant digits.
struct Percent(f64);

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = 100.0 * self.0;
        if pct == 0.0 {
            f.write_str("0%")
        } else if pct >= 1e-3 {
            let digits = (2.0 - libm::floor(libm::log10(pct))).max(0.0) as usize;
            write!(f, "{pct:.digits$}%")
        } else {
            write!(f, "{pct:.2e}%")
        }
    }
}

/// An integer with thousands separators.
struct Thousands(u64);

impl fmt::Display for Thousands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut groups = [0u16; 7];
        let (mut rest, mut count) = (self.0, 0);
        loop {
            groups[count] = (rest % 1000) as u16;
            count += 1;
            rest /= 1000;
            if rest == 0 {
                break;
            }
        }
        write!(f, "{}", groups[count - 1])?;
        for g in groups[..count - 1].iter().rev() {
            write!(f, ",{g:03}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn percentages_and_thousands_print_readably() {
        let p = |x: f64| Percent(x).to_string();
        assert_eq!(p(0.01), "1.00%");
        assert_eq!(p(0.0294), "2.94%");
        assert_eq!(p(0.25), "25.0%");
        assert_eq!(p(0.001854), "0.185%");
        assert_eq!(p(0.000116), "0.0116%");
        assert_eq!(p(2.3283e-10), "2.33e-8%");
        assert_eq!(Thousands(1_000_000).to_string(), "1,000,000");
        assert_eq!(Thousands(999).to_string(), "999");
    }
}
