//! `NetworkApprovalContext` and `NetworkApprovalProtocol` (reference `protocol.md` §8).

use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::NetworkApprovalProtocol;
use pretty_assertions::assert_eq;

use crate::support::assert_reads_as;
use crate::support::assert_rejected;
use crate::support::assert_round_trip;

#[test]
fn context_round_trips() {
    assert_eq!(
        assert_round_trip::<NetworkApprovalContext>(r#"{"host":"example.com","protocol":"https"}"#),
        NetworkApprovalContext {
            host: "example.com".to_owned(),
            protocol: NetworkApprovalProtocol::Https,
        }
    );
}

#[test]
fn every_protocol_round_trips() {
    let cases = [
        (r#""http""#, NetworkApprovalProtocol::Http),
        (r#""https""#, NetworkApprovalProtocol::Https),
        (r#""socks5_tcp""#, NetworkApprovalProtocol::Socks5Tcp),
        (r#""socks5_udp""#, NetworkApprovalProtocol::Socks5Udp),
    ];
    for (json, expected) in cases {
        assert_eq!(assert_round_trip::<NetworkApprovalProtocol>(json), expected);
    }
}

#[test]
fn connect_spellings_are_input_aliases_of_https() {
    assert_reads_as::<NetworkApprovalProtocol>(r#""https_connect""#, r#""https""#);
    assert_reads_as::<NetworkApprovalProtocol>(r#""http-connect""#, r#""https""#);
    assert_reads_as::<NetworkApprovalContext>(
        r#"{"host":"h","protocol":"https_connect"}"#,
        r#"{"host":"h","protocol":"https"}"#,
    );
}

#[test]
fn rejects_invalid_inputs() {
    for bad in [
        r#""socks5""#,
        r#""socks5Tcp""#,
        r#""HTTP""#,
        r#""http_connect""#,
        r#""websocket""#,
        "null",
    ] {
        assert_rejected::<NetworkApprovalProtocol>(bad);
    }
    for bad in [
        r#"{"host":"h"}"#,
        r#"{"protocol":"http"}"#,
        r#"{"host":"h","protocol":"ftp"}"#,
        r#""h""#,
    ] {
        assert_rejected::<NetworkApprovalContext>(bad);
    }
}
