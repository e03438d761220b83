//! The demo's replayed session: `crates/core/assets/demo/script.json` turned into server replies.
//!
//! In: the compiled-in JSON, an array of model replies, each with optional `reasoning`,
//! `text` (Markdown) and `tool_calls` (`{"name", "arguments": {...}}`), the usage to report
//! (`prompt_tokens`, `completion_tokens`) and its pace (`first_token_ms` before the first
//! chunk, `chunk_delay_ms` between chunks). Out: one streamed [`Reply`] per entry, shaped
//! like OpenAI's chunks: the role, the reasoning and the text word by word, the tool calls
//! (a header delta, then the arguments in pieces), the finish reason, a usage chunk and
//! `[DONE]`. A pace factor scales every pause; 0 removes them, so tests run at full speed.

use std::io;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use super::reply::{chunk, split_words, usage_chunk, Reply, Step};

/// The replayed session, compiled in.
pub(super) const SCRIPT: &str = include_str!("../../assets/demo/script.json");

/// Characters of tool-call arguments per streamed piece.
const ARGUMENT_PIECE_CHARS: usize = 24;
/// Largest pace factor honoured: slower than this is surely a mistake.
const MAX_PACE: f64 = 100.0;

/// One model reply of the script.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScriptedReply {
    #[serde(default)]
    pub reasoning: String,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub tool_calls: Vec<ScriptedCall>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Pause before the first chunk: the "thinking" the status line shows.
    #[serde(default)]
    pub first_token_ms: u64,
    /// Pause between two chunks.
    #[serde(default)]
    pub chunk_delay_ms: u64,
}

/// One tool call of a scripted reply.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScriptedCall {
    pub name: String,
    pub arguments: Value,
}

/// Parses a script; the error names what is wrong with it.
pub(super) fn parse(json: &str) -> io::Result<Vec<ScriptedReply>> {
    let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidData, message);
    let replies: Vec<ScriptedReply> = serde_json::from_str(json)
        .map_err(|e| invalid(format!("the demo script is not valid: {e}")))?;
    if replies.is_empty() {
        return Err(invalid("the demo script has no replies".to_string()));
    }
    for (i, reply) in replies.iter().enumerate() {
        if reply.text.is_empty() && reply.tool_calls.is_empty() {
            return Err(invalid(format!(
                "demo script reply {}: it has neither text nor tool calls",
                i + 1
            )));
        }
        if let Some(call) = reply.tool_calls.iter().find(|c| !c.arguments.is_object()) {
            return Err(invalid(format!(
                "demo script reply {}: the arguments of `{}` are not a JSON object",
                i + 1,
                call.name
            )));
        }
    }
    Ok(replies)
}

/// The server replies for `script` at `pace` (1.0 as scripted, 0.0 without pauses; a
/// negative or non-finite factor counts as 0).
pub(super) fn build(script: &[ScriptedReply], pace: f64) -> Vec<Reply> {
    let pace = if pace.is_finite() {
        pace.clamp(0.0, MAX_PACE)
    } else {
        0.0
    };
    script
        .iter()
        .enumerate()
        .map(|(number, reply)| build_reply(number + 1, reply, pace))
        .collect()
}

/// Reply `number` (from 1) of the script; the number keeps tool-call ids unique.
fn build_reply(number: usize, reply: &ScriptedReply, pace: f64) -> Reply {
    let pause = |ms: u64| {
        Duration::try_from_secs_f64(ms as f64 * pace / 1000.0)
            .ok()
            .filter(|d| !d.is_zero())
            .map(Step::Sleep)
    };
    let gap = pause(reply.chunk_delay_ms);
    let mut data = Vec::new();
    data.push(chunk(json!({ "role": "assistant", "content": "" }), None));
    for piece in split_words(&reply.reasoning) {
        data.push(chunk(json!({ "reasoning_content": piece }), None));
    }
    for piece in split_words(&reply.text) {
        data.push(chunk(json!({ "content": piece }), None));
    }
    for (index, call) in reply.tool_calls.iter().enumerate() {
        data.push(chunk(
            json!({ "tool_calls": [{
                "index": index,
                "id": format!("call_demo_{number}_{index}"),
                "type": "function",
                "function": { "name": call.name, "arguments": "" },
            }] }),
            None,
        ));
        // A `Value` always serialises; its `Display` is the compact JSON text.
        let arguments = call.arguments.to_string();
        for piece in pieces(&arguments, ARGUMENT_PIECE_CHARS) {
            data.push(chunk(
                json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] }),
                None,
            ));
        }
    }
    let finish = if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    data.push(chunk(json!({}), Some(finish)));

    let mut steps: Vec<Step> = pause(reply.first_token_ms).into_iter().collect();
    let last = data.len() - 1;
    for (i, value) in data.into_iter().enumerate() {
        steps.push(Step::Data(value));
        // No pause after the role chunk (nothing visible yet) or after the finish.
        if i > 0 && i < last {
            steps.extend(gap.clone());
        }
    }
    steps.push(Step::Data(usage_chunk(
        reply.prompt_tokens,
        reply.completion_tokens,
    )));
    steps.push(Step::Done);
    Reply::sse(steps)
}

/// Pieces of at most `size` chars, cut on char boundaries, that concatenate back to `text`.
fn pieces(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (count, (i, _)) in text.char_indices().enumerate() {
        if count > 0 && count % size == 0 {
            out.push(&text[start..i]);
            start = i;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The total pause of `script` at pace 1.0: how long the replay takes without the tools
/// and the user.
#[cfg(test)]
fn scripted_duration(script: &[ScriptedReply]) -> Duration {
    build(script, 1.0)
        .iter()
        .flat_map(|reply| match &reply.body {
            super::reply::Body::Sse(steps) => steps.clone(),
            _ => Vec::new(),
        })
        .filter_map(|step| match step {
            Step::Sleep(d) => Some(d),
            _ => None,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::reply::Body;

    fn script() -> Vec<ScriptedReply> {
        parse(SCRIPT).expect("the compiled-in demo script parses")
    }

    fn data_of(reply: &Reply) -> Vec<Value> {
        match &reply.body {
            Body::Sse(steps) => steps
                .iter()
                .filter_map(|s| match s {
                    Step::Data(v) => Some(v.clone()),
                    _ => None,
                })
                .collect(),
            other => panic!("not a stream: {other:?}"),
        }
    }

    /// The concatenation of every delta field `field` in `reply`.
    fn joined(reply: &Reply, field: &str) -> String {
        data_of(reply)
            .iter()
            .filter_map(|v| v["choices"][0]["delta"][field].as_str().map(String::from))
            .collect()
    }

    /// (name, arguments) of each tool call, reassembled from its deltas.
    fn calls(reply: &Reply) -> Vec<(String, Value)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for v in data_of(reply) {
            for call in v["choices"][0]["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let index = call["index"].as_u64().unwrap() as usize;
                if let Some(name) = call["function"]["name"].as_str() {
                    assert_eq!(index, out.len());
                    out.push((name.to_string(), String::new()));
                }
                out[index].1 += call["function"]["arguments"].as_str().unwrap();
            }
        }
        out.into_iter()
            .map(|(name, args)| (name, serde_json::from_str(&args).unwrap()))
            .collect()
    }

    #[test]
    fn the_compiled_in_script_parses_and_tells_the_whole_story() {
        let script = script();
        let names: Vec<Vec<&str>> = script
            .iter()
            .map(|r| r.tool_calls.iter().map(|c| c.name.as_str()).collect())
            .collect();
        let all: Vec<&str> = names.iter().flatten().copied().collect();
        assert_eq!(all.first(), Some(&"write_todos"), "{names:?}");
        for tool in ["read_file", "bash", "str_replace"] {
            assert!(all.contains(&tool), "{tool} missing: {names:?}");
        }
        let runs = script
            .iter()
            .flat_map(|r| &r.tool_calls)
            .filter(|c| c.name == "bash" && c.arguments["command"] == "sh test_calc.sh")
            .count();
        assert_eq!(runs, 2, "the tests run before and after the fix");
        let last = script.last().unwrap();
        assert!(last.tool_calls.is_empty());
        for part in ["## ", "\n- ", "```sh"] {
            assert!(last.text.contains(part), "summary lacks {part:?}");
        }
        // The final todo list is all done.
        let final_todos = script
            .iter()
            .flat_map(|r| &r.tool_calls)
            .rfind(|c| c.name == "write_todos")
            .unwrap();
        let todos = final_todos.arguments["todos"].as_array().unwrap();
        assert_eq!(todos.len(), 3);
        assert!(todos.iter().all(|t| t["status"] == "completed"));
    }

    #[test]
    fn every_todo_list_passes_the_tools_validation() {
        for call in script().iter().flat_map(|r| &r.tool_calls) {
            if call.name == crate::tools::write_todos::NAME {
                let items = call.arguments["todos"].as_array().unwrap();
                crate::tools::write_todos::validate(items).unwrap();
            }
        }
    }

    #[test]
    fn usage_grows_and_fills_three_quarters_of_the_demo_window() {
        let script = script();
        let totals: Vec<u64> = script
            .iter()
            .map(|r| r.prompt_tokens + r.completion_tokens)
            .collect();
        assert!(totals.windows(2).all(|w| w[0] < w[1]), "{totals:?}");
        let last = *totals.last().unwrap() as f64 / super::super::CONTEXT_WINDOW as f64;
        assert!((0.70..=0.80).contains(&last), "ends at {last:.2}");
    }

    #[test]
    fn the_replay_takes_a_few_seconds_not_minutes() {
        let d = scripted_duration(&script());
        assert!(
            (Duration::from_secs(5)..Duration::from_secs(30)).contains(&d),
            "{d:?}"
        );
    }

    #[test]
    fn replies_carry_the_script_word_by_word_with_usage_and_done() {
        let script = script();
        let replies = build(&script, 1.0);
        assert_eq!(replies.len(), script.len());
        for (reply, scripted) in replies.iter().zip(&script) {
            assert_eq!(reply.status, 200);
            assert_eq!(joined(reply, "content"), scripted.text);
            assert_eq!(joined(reply, "reasoning_content"), scripted.reasoning);
            let expected: Vec<(String, Value)> = scripted
                .tool_calls
                .iter()
                .map(|c| (c.name.clone(), c.arguments.clone()))
                .collect();
            assert_eq!(calls(reply), expected);
            let data = data_of(reply);
            let usage = &data.last().unwrap()["usage"];
            assert_eq!(usage["prompt_tokens"], scripted.prompt_tokens);
            assert_eq!(usage["completion_tokens"], scripted.completion_tokens);
            let finish = &data[data.len() - 2]["choices"][0]["finish_reason"];
            let want = if scripted.tool_calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            };
            assert_eq!(finish, want);
            let Body::Sse(steps) = &reply.body else {
                unreachable!()
            };
            assert!(matches!(steps.last(), Some(Step::Done)));
            assert!(steps.iter().any(|s| matches!(s, Step::Sleep(_))));
        }
    }

    #[test]
    fn pace_zero_has_no_pauses_and_the_same_data() {
        let script = script();
        let fast = build(&script, 0.0);
        let slow = build(&script, 1.0);
        for (f, s) in fast.iter().zip(&slow) {
            let Body::Sse(steps) = &f.body else {
                unreachable!()
            };
            assert!(!steps.iter().any(|s| matches!(s, Step::Sleep(_))));
            assert_eq!(data_of(f), data_of(s));
        }
        // Nonsense factors mean no pauses rather than a panic.
        for pace in [f64::NAN, -1.0, f64::NEG_INFINITY, f64::INFINITY] {
            assert_eq!(build(&script, pace).len(), script.len());
        }
    }

    #[test]
    fn tool_call_ids_are_unique_across_the_session() {
        let mut ids = Vec::new();
        for reply in build(&script(), 0.0) {
            for v in data_of(&reply) {
                if let Some(id) = v["choices"][0]["delta"]["tool_calls"][0]["id"].as_str() {
                    ids.push(id.to_string());
                }
            }
        }
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(ids.len(), unique.len(), "{ids:?}");
    }

    #[test]
    fn a_broken_script_is_an_error_not_a_panic() {
        for (json, needle) in [
            ("not json", "not valid"),
            ("[]", "no replies"),
            (
                r#"[{"prompt_tokens": 1, "completion_tokens": 1}]"#,
                "neither",
            ),
            (
                r#"[{"text": "x", "prompt_tokens": 1, "completion_tokens": 1, "colour": 3}]"#,
                "colour",
            ),
            (
                r#"[{"tool_calls": [{"name": "bash", "arguments": "ls"}], "prompt_tokens": 1, "completion_tokens": 1}]"#,
                "not a JSON object",
            ),
        ] {
            let err = parse(json).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
            assert!(err.to_string().contains(needle), "{json}: {err}");
        }
    }

    #[test]
    fn pieces_concatenate_back() {
        for text in ["", "a", "abc", "héllo wörld, ünïcode", &"x".repeat(100)] {
            let p = pieces(text, 7);
            assert_eq!(p.concat(), text);
            assert!(p.iter().all(|s| !s.is_empty() && s.chars().count() <= 7));
        }
    }
}
