//! What a replay keeps of a failed flow: the activity and the first labels on the screen (said
//! in the failure's line), and a screenshot written where `output::Outputs::failure_shot` says.

use std::path::PathBuf;
use std::sync::Arc;

use base64::Engine;
use serde_json::{Value, json};

use crate::server::{DroidMcp, call_once};
use crate::tools::State;

use super::call;
use super::output;

/// After a failure: the activity and the first labels on the screen, and a screenshot saved
/// beside the report (or in the user's private `droidmcp-replay-UID` in the temp folder), named
/// by the flow's name made plain: a flow's `name:` is a third party's text.
pub(super) async fn what_the_screen_shows(
    state: &Arc<State>,
    outputs: &output::Outputs,
    name: &str,
    shard: Option<usize>,
) -> (Option<String>, Option<PathBuf>) {
    let seen = match call(state, "ui", json!({"operation": "dump", "limit": 12})).await {
        Ok(dump) if dump.get("elements").is_some() => {
            let activity = dump["focused"]["activity"]
                .as_str()
                .unwrap_or("no activity")
                .to_string();
            let labels: Vec<String> = dump["elements"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e["label"].as_str())
                .filter(|l| !l.is_empty())
                .map(|l| format!("{l:?}"))
                .collect();
            Some(format!("{activity} with {}", labels.join(", ")))
        }
        _ => None,
    };
    let Value::Object(args) = json!({"operation": "screenshot"}) else {
        unreachable!()
    };
    let shot = match call_once(DroidMcp::new(state.clone()), "ui", args).await {
        Ok(result) => result.content.iter().find_map(|c| c.as_image().cloned()),
        Err(_) => None,
    };
    let (folder, file) = outputs.failure_shot(name, shard);
    let path = shot.and_then(|image| {
        let bytes = base64::engine::general_purpose::STANDARD.decode(&image.data).ok()?;
        match folder.and_then(|folder| folder.write(&[file], &bytes)) {
            Ok(path) => Some(path),
            Err(e) => {
                tracing::warn!("the failure's screenshot was not saved: {e}");
                None
            }
        }
    });
    (seen, path)
}
