//! A Maestro flow's scripts' `http`, replayed by the binary on the simulator against servers of
//! the test's own: plain http, https whose certificate a test CA signed (the CA given to the
//! replay through `SSL_CERT_FILE`), and https no trusted CA signed; off without
//! `--allow-network`.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::{Arc, Mutex};

use crate::flow_js::{flow, replay, replay_env, stdout};

/// A small HTTP server of the test's own on 127.0.0.1, plain or, given a TLS configuration,
/// https: `POST /login` answers a token made of the JSON body's `user` and the `X-Client`
/// header; `GET /big` answers 2 MiB; anything else is a 404. Its address, and the requests it
/// served (method and path).
fn http_server(tls: Option<rustls::ServerConfig>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let address = format!("{scheme}://{}", listener.local_addr().unwrap());
    let served = Arc::new(Mutex::new(Vec::new()));
    let log = served.clone();
    let tls = tls.map(Arc::new);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            // A handshake the client refuses ends the connection with an error: nothing served.
            let _ = match &tls {
                Some(config) => {
                    let session = rustls::ServerConnection::new(config.clone()).unwrap();
                    serve(rustls::StreamOwned::new(session, stream), &log)
                }
                None => serve(stream, &log),
            };
        }
    });
    (address, served)
}

/// One request on one connection (`Connection: close`).
fn serve(stream: impl Read + Write, log: &Mutex<Vec<String>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    reader.read_line(&mut head)?;
    let (mut length, mut client) = (0, String::new());
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        if line.trim().is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().unwrap(),
            "x-client" => client = value.trim().to_string(),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let words: Vec<&str> = head.split_whitespace().collect();
    log.lock().unwrap().push(format!("{} {}", words[0], words[1]));
    let (status, answer) = match (words[0], words[1]) {
        ("POST", "/login") => {
            let sent: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let token = format!("{}-{client}", sent["user"].as_str().unwrap());
            ("200 OK", serde_json::json!({ "token": token }).to_string())
        }
        ("GET", "/big") => ("200 OK", "x".repeat(2 << 20)),
        // Never answered while the run lasts.
        ("GET", "/slow") => {
            std::thread::sleep(std::time::Duration::from_secs(30));
            ("200 OK", "{}".to_string())
        }
        _ => ("404 Not Found", "{}".to_string()),
    };
    let stream = reader.get_mut();
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
        answer.len()
    )?;
    stream.flush()
}

/// A test CA (its certificate as PEM) and a TLS configuration for 127.0.0.1 whose certificate it
/// signed.
fn signed_by_a_test_ca(name: &str) -> (String, rustls::ServerConfig) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.distinguished_name.push(rcgen::DnType::CommonName, name);
    let key = rcgen::KeyPair::generate().unwrap();
    let ca = params.self_signed(&key).unwrap();
    let issuer = rcgen::Issuer::new(params, key);
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key)
        .unwrap();
    (ca.pem(), config)
}

/// https as a script calls it, the CA handed to the replay in `SSL_CERT_FILE`: a server whose
/// certificate that CA signed answers (a POST with headers and a JSON body); a server whose CA
/// nobody trusts is refused before anything is sent, the step failing with the URL and the
/// certificate problem; without `--allow-network` nothing is sent at all.
#[test]
fn https_reaches_a_server_a_trusted_ca_signed_and_refuses_one_no_trusted_ca_signed() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (trusted_ca, trusted) = signed_by_a_test_ca("droidmcp trusted test CA");
    let (_, untrusted) = signed_by_a_test_ca("droidmcp untrusted test CA");
    let (good, good_served) = http_server(Some(trusted));
    let (bad, bad_served) = http_server(Some(untrusted));
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, trusted_ca).unwrap();
    let file = flow(
        dir.path(),
        &[
            (
                "tls.yaml",
                "appId: org.droidmcp.demo.login\n---\n- runScript: good.js\n- assertTrue: ${output.token == 'ada-droidmcp-tests'}\n- runScript: bad.js\n",
            ),
            (
                "good.js",
                "const answer = http.post(GOOD + '/login', {\n  headers: { 'Content-Type': 'application/json', 'X-Client': 'droidmcp-tests' },\n  body: JSON.stringify({ user: 'ada' }),\n});\noutput.token = json(answer.body).token;\n",
            ),
            ("bad.js", "http.get(BAD + '/login');\n"),
        ],
    );
    let (good_env, bad_env) = (format!("GOOD={good}"), format!("BAD={bad}"));
    let vars = [("SSL_CERT_FILE", ca_file.to_str().unwrap())];
    let args = ["--env", &good_env, "--env", &bad_env];
    let out = replay_env(&file, home.path(), &args, &vars);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("good.js line ") && said.contains("--allow-network"),
        "{said}"
    );
    assert!(good_served.lock().unwrap().is_empty(), "nothing was sent");
    let args = [&args[..], &["--allow-network"]].concat();
    let out = replay_env(&file, home.path(), &args, &vars);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.lines().any(|l| l.starts_with("ok      1 run script good.js")),
        "{said}"
    );
    assert!(said.lines().any(|l| l.starts_with("ok      2 assert")), "{said}");
    assert!(
        said.contains("FAILED  3 run script bad.js")
            && said.contains("bad.js line 1: http: GET ${BAD}/login failed: ")
            && said.contains("invalid peer certificate: UnknownIssuer")
            && said.contains("SSL_CERT_FILE"),
        "{said}"
    );
    assert_eq!(*good_served.lock().unwrap(), ["POST /login"]);
    assert!(
        bad_served.lock().unwrap().is_empty(),
        "nothing reached the untrusted server"
    );
    // SSL_CERT_FILE naming no file: the step says so, and nothing is sent.
    let missing = dir.path().join("missing-ca.pem");
    let vars = [("SSL_CERT_FILE", missing.to_str().unwrap())];
    let out = replay_env(&file, home.path(), &args, &vars);
    let said = stdout(&out);
    assert!(
        said.contains("FAILED  1 run script good.js")
            && said.contains(&format!(
                "http: ${{GOOD}}/login: SSL_CERT_FILE names {missing:?}, which cannot be read"
            )),
        "{said}"
    );
    assert_eq!(*good_served.lock().unwrap(), ["POST /login"]);
}

/// Maestro's `http` and `json` in a script: off unless `replay --allow-network` (the step fails
/// naming the flag, and nothing is sent); with it, a POST with headers and a JSON body, its
/// answer read with `json()`, the token typed into a field; a 404 is an answer (`ok` false), a
/// body over the bound fails naming it, a URL that is neither http nor https is refused (an https one is tried), no CA certificate
/// is needed, and a server that
/// never answers holds the run no longer than its time limit.
#[test]
fn http_and_json_reach_a_local_server_only_with_allow_network() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (address, served) = http_server(None);
    let file = flow(
        dir.path(),
        &[
            (
                "api.yaml",
                "appId: org.droidmcp.demo.login\n---\n- launchApp\n- runScript:\n    file: login.js\n    env:\n      USER: ada\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n- inputText: ${output.token}\n- assertVisible: \"ada-droidmcp-tests\"\n- assertTrue: ${output.missing.status == 404 && !output.missing.ok}\n- assertTrue: ${output.refused.includes('is not an http or https URL') && output.refused.includes('https://127.0.0.1:9/')}\n- runScript: big.js\n",
            ),
            (
                "login.js",
                "const answer = http.post(BASE + '/login', {\n  headers: { 'Content-Type': 'application/json', 'X-Client': 'droidmcp-tests' },\n  body: JSON.stringify({ user: USER }),\n});\noutput.token = json(answer.body).token;\noutput.missing = http.get(BASE + '/nothing');\nfor (const url of ['file:///etc/passwd', 'https://127.0.0.1:9/']) {\n  try {\n    http.get(url);\n  } catch (e) {\n    output.refused = (output.refused || '') + e.message;\n  }\n}\n",
            ),
            (
                "big.js",
                "output.refusedScheme = output.refused;\nhttp.get(BASE + '/big');\n",
            ),
        ],
    );
    let base = format!("BASE={address}");
    let out = replay(&file, home.path(), &["--env", &base]);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("login.js line ")
            && said.contains(": http: a script reaches the network only in a replay run with --allow-network"),
        "{said}"
    );
    assert!(served.lock().unwrap().is_empty(), "nothing was sent");
    // Plain http needs no CA certificates: SSL_CERT_FILE naming no file changes nothing.
    let missing = dir.path().join("missing-ca.pem");
    let vars = [("SSL_CERT_FILE", missing.to_str().unwrap())];
    let out = replay_env(&file, home.path(), &["--env", &base, "--allow-network"], &vars);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.lines().any(|l| l.starts_with("ok      2 run script login.js")),
        "{said}"
    );
    assert!(
        said.lines()
            .any(|l| l.starts_with("ok      4 type \"${output.token}\"")),
        "{said}"
    );
    assert!(said.lines().any(|l| l.starts_with("ok      5 assert")), "{said}");
    assert!(said.lines().any(|l| l.starts_with("ok      6 assert")), "{said}");
    assert!(
        said.contains("FAILED  7 run script big.js")
            && said.contains("big.js line 2: http: GET ")
            && said.contains("/big answered more than 1024 KiB, the most a script is handed"),
        "{said}"
    );
    assert_eq!(
        *served.lock().unwrap(),
        ["POST /login", "GET /nothing", "GET /big"],
        "file:// was never fetched"
    );
    // A server that does not answer holds the script no longer than the run's time.
    let file = flow(
        dir.path(),
        &[
            (
                "slow.yaml",
                "appId: org.droidmcp.demo.login\n---\n- runScript: slow.js\n",
            ),
            ("slow.js", "output.answer = http.get(BASE + '/slow');\n"),
        ],
    );
    let out = replay(
        &file,
        home.path(),
        &["--env", &base, "--allow-network", "--run-timeout-ms", "2000"],
    );
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("time limit"), "{said}");
}
