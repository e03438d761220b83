//! Unit tests of the chat client: the output cap, the endpoint, the retry delays and
//! `Retry-After`, what is retried.

use super::*;

#[test]
fn the_default_output_cap_is_what_is_left_of_a_known_window() {
    let mut config = ClientConfig::new("http://x/v1", "", "m");
    config.auto_output_cap = true;
    assert_eq!(output_cap(&config, Some(8_000), 5_000), Some(2_500));
    assert_eq!(
        output_cap(&config, Some(200_000), 5_000),
        Some(AUTO_OUTPUT_TOKENS)
    );
    // However full the window, a reply gets room to say something.
    assert_eq!(
        output_cap(&config, Some(8_000), 7_900),
        Some(MIN_AUTO_OUTPUT_TOKENS)
    );
    assert_eq!(output_cap(&config, None, 5_000), None);
    config.max_output_tokens = Some(100);
    assert_eq!(output_cap(&config, Some(8_000), 5_000), Some(100));
    config.max_output_tokens = None;
    config.auto_output_cap = false;
    assert_eq!(output_cap(&config, Some(8_000), 5_000), None);
}

#[test]
fn the_endpoint_goes_before_the_query_and_odd_urls_are_refused() {
    assert_eq!(
        endpoint("https://api.openai.com/v1/", Api::Chat).unwrap(),
        "https://api.openai.com/v1/chat/completions"
    );
    assert_eq!(
        endpoint(
            "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21",
            Api::Chat
        )
        .unwrap(),
        "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(
        endpoint("http://127.0.0.1:8080", Api::Chat).unwrap(),
        "http://127.0.0.1:8080/chat/completions"
    );
    assert!(endpoint("localhost:8080/v1", Api::Chat)
        .unwrap_err()
        .to_string()
        .contains("http"));
    assert!(endpoint("ftp://host/v1", Api::Chat)
        .unwrap_err()
        .to_string()
        .contains("http"));
    assert!(endpoint("not a url", Api::Chat).is_err());
    // The native APIs' paths, before the query too.
    assert_eq!(
        endpoint("https://api.openai.com/v1", Api::Responses).unwrap(),
        "https://api.openai.com/v1/responses"
    );
    assert_eq!(
        endpoint("https://api.anthropic.com/v1/", Api::Anthropic).unwrap(),
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(
        endpoint(
            "https://x.azure.com/openai/v1?api-version=preview",
            Api::Responses
        )
        .unwrap(),
        "https://x.azure.com/openai/v1/responses?api-version=preview"
    );
}

#[test]
fn a_request_never_asks_more_than_the_model_gives() {
    let mut c = ClientConfig::new("http://x", "", "m");
    assert_eq!(sent_max_tokens(&c, None), None);
    assert_eq!(sent_max_tokens(&c, Some(40_000)), Some(40_000));
    c.output_limit = Some(32_000);
    assert_eq!(sent_max_tokens(&c, Some(40_000)), Some(32_000));
    assert_eq!(sent_max_tokens(&c, Some(1_000)), Some(1_000));
    assert_eq!(
        sent_max_tokens(&c, None),
        None,
        "chat: nothing asked, nothing sent"
    );
    c.api = Api::Anthropic;
    assert_eq!(sent_max_tokens(&c, None), Some(32_000));
}

#[test]
fn backoff_doubles_and_caps() {
    let mut c = ClientConfig::new("http://x", "", "m");
    c.base_backoff = Duration::from_millis(500);
    c.max_backoff = Duration::from_secs(3);
    assert_eq!(backoff(&c, 1), Duration::from_millis(500));
    assert_eq!(backoff(&c, 2), Duration::from_secs(1));
    assert_eq!(backoff(&c, 3), Duration::from_secs(2));
    assert_eq!(backoff(&c, 4), Duration::from_secs(3));
    assert_eq!(backoff(&c, 40), Duration::from_secs(3));
}

#[test]
fn retry_after_header_forms() {
    let mut h = reqwest::header::HeaderMap::new();
    assert_eq!(retry_after(&h), None);
    h.insert("retry-after", "2".parse().unwrap());
    assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
    h.insert(
        "retry-after",
        "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
    );
    assert_eq!(retry_after(&h), None);
    h.insert("retry-after-ms", "250".parse().unwrap());
    assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
    h.insert("retry-after-ms", "1e30".parse().unwrap());
    assert_eq!(
        retry_after(&h),
        None,
        "absurd values are ignored, not a panic"
    );
    h.insert("retry-after-ms", "NaN".parse().unwrap());
    assert_eq!(retry_after(&h), None);
    h.insert("retry-after-ms", "-5".parse().unwrap());
    assert_eq!(retry_after(&h), None);
}

#[test]
fn what_is_retried() {
    let http = |status| ClientError::Http {
        status,
        message: String::new(),
    };
    assert!(http(429).retryable());
    assert!(http(503).retryable());
    assert!(!http(401).retryable());
    assert!(!http(400).retryable());
    assert!(!ClientError::Server("x".into()).retryable());
}
