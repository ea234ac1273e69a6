//! The device layer's unit tests against fake adb servers: offline and closed transports, hang-ups named, socket names and route specs checked, what `input text` types never shown.

use super::*;

#[test]
fn what_input_text_types_is_never_shown() {
    let command = r"input tap 5 6 && input text 'hunter'\''2%s!' && input keyevent 66";
    assert_eq!(
        shown(command),
        "input tap 5 6 && input text <10 chars typed> && input keyevent 66"
    );
    // Counted as typed, whatever the quoting.
    for (typed, chars) in [
        ("'a'", 1),
        ("'it'\\''s'", 4),
        ("\"x\\\"y\"", 3),
        ("a%sb", 3),
        ("'%s'", 1),
    ] {
        assert_eq!(
            shown(&format!("input text {typed}")),
            format!("input text <{chars} chars typed>")
        );
    }
    assert!(!abbreviate(command).contains("hunter"));
    assert_eq!(shown("ls -l /sdcard"), "ls -l /sdcard");
}

/// A fake adb server that answers each request on a socket from `script` (request → reply).
async fn fake_server(script: &'static [(&'static str, &'static str)]) -> SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                loop {
                    let mut len = [0u8; 4];
                    if socket.read_exact(&mut len).await.is_err() {
                        return;
                    }
                    // Anything but a request (the shell's close-stdin packet): hang up.
                    let Some(len) = std::str::from_utf8(&len)
                        .ok()
                        .and_then(|l| usize::from_str_radix(l, 16).ok())
                    else {
                        return;
                    };
                    let mut request = vec![0u8; len];
                    socket.read_exact(&mut request).await.unwrap();
                    let request = String::from_utf8(request).unwrap();
                    let reply = script
                        .iter()
                        .find(|(prefix, _)| request.starts_with(prefix))
                        .map_or("FAIL0007unknown", |(_, reply)| reply);
                    socket.write_all(reply.as_bytes()).await.unwrap();
                }
            });
        }
    });
    addr
}

#[tokio::test]
async fn the_only_device_being_offline_is_said_as_offline() {
    let addr = fake_server(&[("host:devices-l", "OKAY0016emulator-5554\toffline\n")]).await;
    let adb = Adb::new(Route::Server(addr), Duration::from_secs(2));
    let e = adb.resolve(None).await.unwrap_err().to_string();
    assert!(e.contains("`emulator-5554` is offline"), "{e}");
}

#[tokio::test]
async fn a_transport_closed_under_a_call_is_said_as_such() {
    let addr = fake_server(&[
        ("host-serial:", "OKAY0008shell_v2"),
        ("host:transport:", "OKAY"),
        ("shell", "FAIL0006closed"),
    ])
    .await;
    let adb = Adb::new(Route::Server(addr), Duration::from_secs(2));
    let e = adb.shell("emulator-5554", "true").await.unwrap_err().to_string();
    assert!(e.contains("dropped the transport to `emulator-5554`"), "{e}");
}

#[tokio::test]
async fn a_server_that_hangs_up_mid_answer_is_named() {
    let addr = fake_server(&[
        ("host-serial:", "OKAY0008shell_v2"),
        ("host:transport:", "OKAY"),
        ("shell", "OKAY\u{1}\u{9}\u{0}\u{0}\u{0}par"),
    ])
    .await;
    let adb = Adb::new(Route::Server(addr), Duration::from_secs(2));
    // Half a stdout packet, then the fake hangs up: no "early eof", the call is named.
    let e = adb.shell("emulator-5554", "true").await.unwrap_err().to_string();
    assert!(
        e.contains("the adb server dropped the connection during `true` on emulator-5554"),
        "{e}"
    );
}

#[tokio::test]
async fn a_socket_name_that_is_not_one_is_refused_before_any_device_is_asked() {
    let adb = Adb::new(Route::Direct("127.0.0.1:9".parse().unwrap()), Duration::from_secs(1));
    for bad in ["", "a b", "x;reboot", "../etc", "name\0"] {
        let e = adb.local_abstract("127.0.0.1:9", bad).await.err().unwrap().to_string();
        assert!(e.contains("is not a socket name"), "{bad:?}: {e}");
    }
}

#[test]
fn route_specs_parse_and_bad_ones_say_what_is_expected() {
    assert_eq!(
        Route::parse_direct("tcp:127.0.0.1:5555").unwrap(),
        Route::Direct("127.0.0.1:5555".parse().unwrap())
    );
    assert_eq!(
        Route::parse_direct("server:127.0.0.1:5037").unwrap(),
        Route::Server("127.0.0.1:5037".parse().unwrap())
    );
    assert!(Route::parse_direct("nonsense").unwrap_err().contains("tcp:HOST:PORT"));
}

#[test]
fn sources_are_named_by_host_or_host_port_or_their_given_name() {
    let specs = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let named = parse_sources(&specs(&[
        "server:10.0.0.1:5037",
        "server:127.0.0.1:5037",
        "tcp:127.0.0.1:5555",
        "lab=server:10.0.0.9:5037",
    ]))
    .unwrap();
    let labels: Vec<&str> = named.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["10.0.0.1", "127.0.0.1:5037", "127.0.0.1:5555", "lab"]);
    assert_eq!(named[2].1, Route::Direct("127.0.0.1:5555".parse().unwrap()));
    let twice = parse_sources(&specs(&["server:10.0.0.1:5037", "a=server:10.0.0.1:5037"])).unwrap_err();
    assert!(twice.contains("gives 10.0.0.1:5037 twice"), "{twice}");
    let clash = parse_sources(&specs(&["a=server:10.0.0.1:5037", "a=server:10.0.0.2:5037"])).unwrap_err();
    assert!(clash.contains("two sources `a`"), "{clash}");
    let bad = parse_sources(&specs(&["lab/1=server:10.0.0.1:5037"])).unwrap_err();
    assert!(bad.contains("not a source name"), "{bad}");
}
