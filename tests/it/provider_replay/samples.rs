//! A test a recorded sample, and UTF-8 sequences cut across writes.

use std::collections::BTreeSet;

use super::stream::read_body;
use super::*;

rein_test_support::replay_tests! {
    openai_text_usage => "openai-text-usage",
    openai_tool_then_text => "openai-tool-then-text",
    openai_tool_then_text_bytes7 => "openai-tool-then-text-bytes7",
    openai_parallel_tools_then_text => "openai-parallel-tools-then-text",
    openai_parallel_tools_interleaved => "openai-parallel-tools-interleaved",
    openai_gpt5_tool_then_text => "openai-gpt5-tool-then-text",
    openai_refusal => "openai-refusal",
    openai_finish_length => "openai-finish-length",
    openai_n3_choices => "openai-n3-choices",
    azure_tool_then_text => "azure-tool-then-text",
    azure_model_router => "azure-model-router",
    openrouter_gemini3_tool_reasoning_details => "openrouter-gemini3-tool-reasoning-details",
    openrouter_claude_thinking_tool => "openrouter-claude-thinking-tool",
    openrouter_kimi_k2_5_tool => "openrouter-kimi-k2.5-tool",
    openrouter_openai_tool => "openrouter-openai-tool",
    openrouter_error_in_200_stream => "openrouter-error-in-200-stream",
    openrouter_keepalive_comments => "openrouter-keepalive-comments",
    openrouter_reasoning_stream => "openrouter-reasoning-stream",
    openrouter_429_then_ok => "openrouter-429-then-ok",
    vllm_tool_call => "vllm-tool-call",
    vllm_crusoe_text => "vllm-crusoe-text",
    vllm_gemma3_roles_must_alternate => "vllm-gemma3-roles-must-alternate",
    ollama_parallel_tools_then_text => "ollama-parallel-tools-then-text",
    llamacpp_gpt_oss_reasoning_tool => "llamacpp-gpt-oss-reasoning-tool",
    llamacpp_live_tool_then_text => "llamacpp-live-tool-then-text",
    llamacpp_live_text_usage => "llamacpp-live-text-usage",
    llamacpp_live_context_400 => "llamacpp-live-context-400",
    groq_gptoss_tool_then_text => "groq-gptoss-tool-then-text",
    groq_error_event_midstream => "groq-error-event-midstream",
    groq_kimi_k2_tool_then_text => "groq-kimi-k2-tool-then-text",
    groq_404_model_not_found => "groq-404-model-not-found",
    deepseek_reasoner_stream => "deepseek-reasoner-stream",
    deepseek_thinking_tool_followup => "deepseek-thinking-tool-followup",
    mistral_magistral_thinking_parts => "mistral-magistral-thinking-parts",
    mistral_tool_call_followup => "mistral-tool-call-followup",
    mistral_text => "mistral-text",
    together_via_hf_router => "together-via-hf-router",
    gemini_tool_no_index_then_400 => "gemini-tool-no-index-then-400",
    vercel_gateway_gemini3_tool => "vercel-gateway-gemini3-tool",
    xai_grok_code_fast_reasoning_tool => "xai-grok-code-fast-reasoning-tool",
    zai_glm_reasoning_tool => "zai-glm-reasoning-tool",
    hf_router_kimi_tool => "hf-router-kimi-tool",
    kimi_thinking_tool_followup_400 => "kimi-thinking-tool-followup-400",
    openai_401_bad_key => "openai-401-bad-key",
    openai_400_unsupported_value => "openai-400-unsupported-value",
    openai_500_then_ok => "openai-500-then-ok",
    openai_429_retry_after_then_ok => "openai-429-retry-after-then-ok",
    proxy_503_html => "proxy-503-html",
}

/// The bytes:7 sample has only ASCII, so its cuts never fall inside a UTF-8 sequence: this
/// replays a sample whose text has `’` and `°` in pieces that cut one in two.
#[tokio::test]
async fn utf8_sequences_cut_across_writes() {
    const NAME: &str = "openai-gpt5-tool-then-text";
    const PIECE: usize = 7;
    let cuts_a_sequence = sample(NAME).responses.iter().any(|r| {
        let body = read_body(&r.file);
        (PIECE..body.len())
            .step_by(PIECE)
            .any(|at| (0x80..0xC0).contains(&body[at]))
    });
    assert!(
        cuts_a_sequence,
        "no {PIECE}-byte cut of {NAME} falls inside a UTF-8 sequence"
    );
    replay_in(NAME, Some(&format!("bytes:{PIECE}"))).await;
}

#[test]
fn every_sample_has_a_test() {
    let samples: BTreeSet<&str> = index().samples.iter().map(|s| s.name.as_str()).collect();
    let tested: BTreeSet<&str> = TESTED.iter().copied().collect();
    assert_eq!(TESTED.len(), tested.len(), "a sample is listed twice");
    let untested: Vec<_> = samples.difference(&tested).collect();
    let unknown: Vec<_> = tested.difference(&samples).collect();
    assert!(
        untested.is_empty() && unknown.is_empty(),
        "samples without a test: {untested:?}; tests without a sample: {unknown:?}"
    );
}
