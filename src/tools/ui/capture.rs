//! Screenshots as JPEG image blocks, with the tap grid or numbered boxes drawn on them.

use super::*;

pub(super) fn scale(shot: &Shot) -> f64 {
    let s = shot.screen[0].max(shot.screen[1]) as f64 / shot.image[0].max(shot.image[1]).max(1) as f64;
    (s * 1000.0).round() / 1000.0
}

/// Takes a screenshot, makes the JPEG image block, and remembers its geometry.
pub(super) async fn capture(
    state: &State,
    serial: &str,
    max_size: u32,
    with_grid: bool,
    annotate: Option<&[Element]>,
) -> Result<(Shot, ContentBlock), String> {
    // PNG: 70-100× fewer bytes than a raw frame, which wins on USB and Wi-Fi links and on the
    // simulator (benches/ui_pipeline.rs; README has the numbers and the reasoning).
    let raw = state
        .adb
        .exec(serial, "screencap -p", None, state.adb.timeout(), &|_| {})
        .await
        .map_err(|e| e.to_string())?;
    if raw.is_empty() {
        return Err(empty_screenshot(state, serial).await);
    }
    // Decoding, scaling and encoding take a core for tens of milliseconds: off the async
    // workers, so other calls (and this call's deadline) keep running meanwhile.
    let boxes = annotate.map(|els| {
        els.iter()
            .map(|e| (e.reference.trim_start_matches('e').to_string(), e.bounds))
            .collect::<Vec<_>>()
    });
    let (shot, jpeg) = tokio::task::spawn_blocking(move || render(&raw, max_size, with_grid, boxes))
        .await
        .map_err(|e| format!("the screenshot could not be made: {e}"))??;
    state.remember_shot(serial, shot);
    let b64 = base64::engine::general_purpose::STANDARD.encode(jpeg);
    Ok((shot, ContentBlock::image(b64, "image/jpeg")))
}

/// Why a screenshot came back empty: screencap printing nothing, or the link to the device (or
/// to its adb server) going away, which an empty stream cannot tell apart. One short probe says.
async fn empty_screenshot(state: &State, serial: &str) -> String {
    let probe = state
        .adb
        .shell_with_timeout(serial, "true", std::time::Duration::from_secs(2))
        .await;
    match probe {
        Ok(_) => "the device sent no screenshot (0 bytes): screencap printed nothing (a secure window, or the screen is off); retry".into(),
        Err(e) => format!("the device sent no screenshot (0 bytes), and it can no longer be reached: {e}"),
    }
}

/// PNG in, JPEG out: the geometry and the JPEG bytes.
fn render(
    raw: &[u8],
    max_size: u32,
    with_grid: bool,
    boxes: Option<Vec<(String, crate::android::uiautomator::Bounds)>>,
) -> Result<(Shot, Vec<u8>), String> {
    let frame = crate::image::decode(raw).map_err(|e| e.to_string())?;
    let (w, h) = crate::image::fit(frame.width, frame.height, max_size);
    let mut small = crate::image::resize(&frame, w, h).map_err(|e| e.to_string())?;
    // Before the grid and boxes are drawn on it.
    let dark = small.rgba.chunks_exact(4).all(|p| p[..3].iter().all(|&c| c < 8));
    if with_grid {
        grid::draw(&mut small);
    }
    if let Some(boxes) = boxes {
        let (fx, fy) = (w as f64 / frame.width as f64, h as f64 / frame.height as f64);
        let px = |v: i32, f: f64| (v.max(0) as f64 * f).round() as u32;
        let boxes: Vec<(String, u32, u32, u32, u32)> = boxes
            .into_iter()
            .map(|(number, b)| (number, px(b.left, fx), px(b.top, fy), px(b.right, fx), px(b.bottom, fy)))
            .collect();
        grid::annotate(&mut small, &boxes);
    }
    let jpeg = crate::image::encode_jpeg(&small, JPEG_QUALITY).map_err(|e| e.to_string())?;
    let shot = Shot {
        image: [w, h],
        screen: [frame.width, frame.height],
        dark,
    };
    Ok((shot, jpeg))
}

pub(super) async fn screenshot_op(
    state: &State,
    serial: &str,
    with_grid: bool,
    annotate: bool,
    max_size: u32,
) -> Outcome {
    // Annotations number the current screen's elements as a fresh dump's refs.
    let snapshot = match annotate {
        true => Some(read_current(state, serial).await?),
        false => None,
    };
    let (shot, block) = capture(
        state,
        serial,
        max_size,
        with_grid,
        snapshot.as_ref().map(|s| s.elements.as_slice()),
    )
    .await?;
    let hint = if snapshot.is_some() {
        "boxes are numbered as the refs of a fresh dump: tap {ref: \"eN\"}".to_string()
    } else if with_grid {
        format!(
            "tap {{x, y, space: \"image\"}} maps image pixels to the device; or tap {{gridCell, gridPosition}}: {}",
            grid::NUMBERING
        )
    } else {
        "tap {x, y, space: \"image\"} maps image pixels to the device".to_string()
    };
    // A black frame is a screen that is off, or a secure window: the power report says which.
    let asleep = match shot.dark {
        true => Some(asleep_state(state, serial).await),
        false => None,
    };
    Ok(Done::answer(
        UiOutput {
            state: asleep.flatten(),
            image: Some(shot.image),
            screen: Some(shot.screen),
            scale: Some(scale(&shot)),
            hint: Some(format!(
                "JPEG q{JPEG_QUALITY}, {}×{} of a {}×{} screen; {hint}",
                shot.image[0], shot.image[1], shot.screen[0], shot.screen[1]
            )),
            ..output(UiOperation::Screenshot, serial)
        },
        Some(block),
    ))
}
