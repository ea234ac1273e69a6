//! `droidmcp call`'s output: what one tool call printed on the command line (the binary's own
//! module, beside main.rs on the command line's layer).

/// One compact JSON line: the tool's structured result (else its text), `{"isError": true,
/// "message": …}` for an error, and each image written to a file named under `imageFiles` (in
/// `droidmcp-call-UID` in the temp folder).
pub fn summary(result: &rmcp::model::CallToolResult, tool: &str) -> anyhow::Result<String> {
    use rmcp::model::ContentBlock;
    let mut texts = Vec::new();
    let mut image_files = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => texts.push(t.text.as_str()),
            ContentBlock::Image(image) => {
                use base64::Engine;
                let bytes = base64::engine::general_purpose::STANDARD.decode(&image.data)?;
                let ext = image
                    .mime_type
                    .rsplit('/')
                    .next()
                    .unwrap_or("bin")
                    .replace("jpeg", "jpg");
                // Through the one door, into this user's private folder: a screen can show what
                // only they should see.
                let file = format!("{tool}-{}.{ext}", ulid::Ulid::generate());
                let path = droidmcp::confine::Folder::user_temp("call")
                    .and_then(|folder| folder.write(&[file], &bytes))
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                image_files.push(path.display().to_string());
            }
            _ => {}
        }
    }
    let mut out = if result.is_error == Some(true) {
        match &result.structured_content {
            // A failed run with a record of its own (a script's output and error) keeps it.
            Some(serde_json::Value::Object(record)) => {
                let mut record = record.clone();
                record.insert("isError".into(), true.into());
                serde_json::Value::Object(record)
            }
            _ => serde_json::json!({ "isError": true, "message": texts.join("\n") }),
        }
    } else if let Some(structured) = &result.structured_content {
        structured.clone()
    } else {
        let text = texts.join("\n");
        serde_json::from_str(&text).unwrap_or(serde_json::json!({ "text": text }))
    };
    if let (Some(map), false) = (out.as_object_mut(), image_files.is_empty()) {
        map.insert("imageFiles".into(), image_files.into());
    }
    Ok(serde_json::to_string(&out)?)
}
