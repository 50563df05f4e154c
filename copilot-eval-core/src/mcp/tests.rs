use serde_json::json;

use super::tool::huge_text;
use super::*;

#[test]
fn a_huge_output_is_exactly_the_bytes_asked_in_lines() {
    let text = huge_text(1050);
    assert_eq!(text.len(), 1050);
    assert!(text.lines().all(|l| l.len() <= 99), "lines of 99 x");
}

#[test]
fn replies_convert_from_text_and_json() {
    assert_eq!(Reply::from("a"), Reply::text("a"));
    let json = Reply::from(json!({"t": 1}));
    assert_eq!(json.structured, Some(json!({"t": 1})));
    assert_eq!(json.text, r#"{"t":1}"#);
    assert!(Reply::error("no").is_error);
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct City {
    /// The city's name.
    city: String,
}

#[test]
fn a_typed_tool_has_its_types_schema_and_refuses_other_arguments() {
    let tool = MockTool::typed("lookup", "d", |input: City| async move { input.city });
    assert_eq!(tool.schema["properties"]["city"]["type"], "string");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let ok = rt.block_on((tool.handler)(json!({"city": "Paris"})));
    assert_eq!(ok, Reply::text("Paris"));
    let bad = rt.block_on((tool.handler)(json!({"town": "Paris"})));
    assert!(bad.is_error && bad.text.contains("city"), "{bad:?}");
}

#[test]
fn a_mock_serves_on_loopback_and_stops_when_dropped() {
    let mock = McpMock::new("m").tool(MockTool::new("t", "d", json!({})).returns("x"));
    let url = mock.url().unwrap();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    assert_eq!(mock.url().unwrap(), url, "one server per mock");
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp");
    let addr = format!("127.0.0.1:{port}");
    assert!(std::net::TcpStream::connect(&addr).is_ok(), "serving");
    drop(mock);
    assert!(
        std::net::TcpStream::connect(&addr).is_err(),
        "stopped with the last clone"
    );
}
