//! Token usage: one model call's ([`Usage`]), a run's totals with the prompt-cache hit
//! rate ([`UsageTotals`]), and what it cost at a model's prices ([`Prices`]).
//!
//! Servers report the cached part of the prompt in different places (see
//! [`super::stream`]); `cached_tokens` is `None` where a server says nothing, so "the cache
//! never hit" (0 %) and "the server does not say" (no figure) look different.

use serde::Serialize;

/// Token usage of one model call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// Of the prompt tokens, those the server read from its prompt cache; `None` when it
    /// does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Of the prompt tokens, those written to the prompt cache (Anthropic's
    /// `cache_creation_input_tokens`, billed at their own price); `None` when the server
    /// does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// True when the server sent no usage and these are rein's own estimate.
    pub estimated: bool,
}

impl Usage {
    /// Add another call's usage to a running total.
    pub fn add(&mut self, other: &Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        };
        self.cached_tokens = sum(self.cached_tokens, other.cached_tokens);
        self.cache_write_tokens = sum(self.cache_write_tokens, other.cache_write_tokens);
        self.estimated |= other.estimated;
    }

    /// The share of the prompt read from the cache, when the server said.
    pub fn hit_rate(&self) -> Option<f64> {
        let cached = self.cached_tokens?;
        (self.prompt_tokens > 0).then(|| cached as f64 / self.prompt_tokens as f64)
    }
}

/// A model's prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Prices {
    pub input: f64,
    /// Cached prompt tokens; the input price where the provider gives none.
    pub cached_input: Option<f64>,
    /// Prompt tokens written to the cache; the input price where the provider gives none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    pub output: f64,
}

impl Prices {
    /// What `usage` cost: prompt tokens read from the cache at the cached price, those
    /// written to it at the cache-write price, the rest at the input price, completion
    /// tokens at the output price.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_tokens.unwrap_or(0).min(usage.prompt_tokens);
        let written = usage
            .cache_write_tokens
            .unwrap_or(0)
            .min(usage.prompt_tokens - cached);
        let uncached = usage.prompt_tokens - cached - written;
        (uncached as f64 * self.input
            + cached as f64 * self.cached_input.unwrap_or(self.input)
            + written as f64 * self.cache_write.unwrap_or(self.input)
            + usage.completion_tokens as f64 * self.output)
            / 1e6
    }
}

/// The main agent's usage over a run: the last call, the sum, how many calls.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageTotals {
    pub last: Option<Usage>,
    pub session: Usage,
    pub calls: u64,
}

impl UsageTotals {
    pub fn record(&mut self, usage: Usage) {
        self.last = Some(usage);
        self.session.add(&usage);
        self.calls += 1;
    }

    /// Forget everything (a new conversation).
    pub fn clear(&mut self) {
        *self = UsageTotals::default();
    }

    /// `12 model calls, 310422 prompt (291840 cached, 94%) + 4120 completion tokens`, with
    /// the cached part only where the server said, and a note when rein estimated.
    pub fn tokens_line(&self) -> String {
        let s = &self.session;
        let cached = match s.cached_tokens {
            Some(cached) => format!(
                " ({cached} cached, {:.0}%)",
                s.hit_rate().unwrap_or(0.0) * 100.0
            ),
            None => String::new(),
        };
        format!(
            "{} model call{}, {} prompt{cached} + {} completion tokens{}",
            self.calls,
            if self.calls == 1 { "" } else { "s" },
            s.prompt_tokens,
            s.completion_tokens,
            if s.estimated {
                " (estimated: the server sent no usage)"
            } else {
                ""
            }
        )
    }

    /// What the prompt cache did and what the conversation cost, in sentences (for
    /// `/context` and `/cost`); nothing before the first call.
    pub fn describe(&self, prices: Option<Prices>) -> Vec<String> {
        let mut out = Vec::new();
        let share = |u: &Usage| {
            format!(
                "{:.0}% ({} of {} prompt tokens)",
                u.hit_rate().unwrap_or(0.0) * 100.0,
                u.cached_tokens.unwrap_or(0),
                u.prompt_tokens
            )
        };
        if self.calls == 0 {
            return out;
        }
        match (self.last, self.session.cached_tokens) {
            (_, None) => out.push("prompt cache: the server does not report cached tokens".into()),
            (Some(last), Some(_)) if last.cached_tokens.is_some() => out.push(format!(
                "prompt cache: {} in the last request, {} in this conversation",
                share(&last),
                share(&self.session)
            )),
            _ => out.push(format!(
                "prompt cache: {} in this conversation",
                share(&self.session)
            )),
        }
        if let Some(prices) = prices {
            out.push(format!(
                "cost so far: {} for {} model call{}",
                dollars(prices.cost(&self.session)),
                self.calls,
                if self.calls == 1 { "" } else { "s" }
            ));
        }
        out
    }

    /// `cache 92% · session 85%`, or `None` while no server has said what it cached.
    pub fn cache_summary(&self) -> Option<String> {
        let session = self.session.hit_rate()?;
        let last = self.last.and_then(|u| u.hit_rate());
        let pct = |r: f64| format!("{:.0}%", r * 100.0);
        Some(match last {
            Some(last) => format!("cache {} · session {}", pct(last), pct(session)),
            None => format!("cache session {}", pct(session)),
        })
    }
}

/// Dollars in a few characters: `$0.0042`, `$0.42`, `$12.30`.
pub fn dollars(amount: f64) -> String {
    if amount < 0.01 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt: u64, cached: Option<u64>, completion: u64) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt + completion,
            cached_tokens: cached,
            estimated: false,
            cache_write_tokens: None,
        }
    }

    #[test]
    fn hit_rates_and_summary() {
        let mut t = UsageTotals::default();
        assert_eq!(t.cache_summary(), None);
        t.record(usage(1000, None, 10));
        assert_eq!(t.cache_summary(), None, "the server does not say");
        t.record(usage(1000, Some(900), 10));
        assert_eq!(t.session.cached_tokens, Some(900));
        assert_eq!(
            t.cache_summary().as_deref(),
            Some("cache 90% · session 45%")
        );
        t.record(usage(1000, Some(0), 10));
        assert_eq!(t.cache_summary().as_deref(), Some("cache 0% · session 30%"));
        assert_eq!(t.calls, 3);
        let prices = Prices {
            input: 1.0,
            cached_input: Some(0.1),
            cache_write: None,
            output: 2.0,
        };
        assert_eq!(
            t.describe(Some(prices)),
            [
                "prompt cache: 0% (0 of 1000 prompt tokens) in the last request, 30% (900 of 3000 prompt tokens) in this conversation",
                "cost so far: $0.0022 for 3 model calls"
            ]
        );
    }

    #[test]
    fn cost_counts_cached_tokens_at_their_price() {
        let p = Prices {
            input: 3.0,
            cached_input: Some(0.3),
            cache_write: None,
            output: 15.0,
        };
        let u = usage(1_000_000, Some(800_000), 100_000);
        // 200k × 3 + 800k × 0.3 + 100k × 15, per million.
        assert!((p.cost(&u) - (0.6 + 0.24 + 1.5)).abs() < 1e-9);
        let no_cached_price = Prices {
            cached_input: None,
            ..p
        };
        assert!((no_cached_price.cost(&u) - (3.0 + 1.5)).abs() < 1e-9);
        // A usage that claims more cached tokens than prompt tokens (one not read through
        // the stream, which cuts them) costs the prompt at the cached price, no more.
        let over = usage(1_000_000, Some(1_500_000), 0);
        assert!((p.cost(&over) - 0.3).abs() < 1e-9, "{}", p.cost(&over));
        // Anthropic bills cache writes apart: 100k written at 3.75, the other 100k at 3.
        let anthropic = Prices {
            cache_write: Some(3.75),
            ..p
        };
        let written = Usage {
            cache_write_tokens: Some(100_000),
            ..u
        };
        assert!(
            (anthropic.cost(&written) - (0.3 + 0.375 + 0.24 + 1.5)).abs() < 1e-9,
            "{}",
            anthropic.cost(&written)
        );
        assert_eq!(dollars(0.0042), "$0.0042");
        assert_eq!(dollars(12.3), "$12.30");
    }
}
