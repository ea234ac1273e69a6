//! Screenshots as JPEG image blocks, with the tap grid or numbered boxes drawn on them: what
//! `ui screenshot`, `ui find {grid}` and the device panel's frames take.

use base64::Engine;
use rmcp::model::ContentBlock;

use crate::android::ui_elements::Element;
use crate::android::uiautomator::Bounds;
use crate::image::grid;
use crate::tools::State;

/// JPEG quality of every screenshot, and the longest side of one by default.
pub(super) const JPEG_QUALITY: u8 = 70;
pub(super) const DEFAULT_MAX_SIZE: u32 = 1000;

/// What a frame costs the phone per million pixels (docs/real-devices.md has the sources):
/// `screencap -p` encodes a PNG, a raw `screencap` copies the pixels.
const PNG_MS_PER_MPIXEL: f64 = 140.0;
const RAW_MS_PER_MPIXEL: f64 = 17.0;
/// A raw frame's bytes per million pixels (RGBA).
const RAW_BYTES_PER_MPIXEL: f64 = 4e6;

/// How the frame left the phone: raw pixels (resized and encoded here) or a PNG it encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FramePath {
    Raw,
    Png,
}

/// The cheaper way for this link: raw when its bytes over the link and the raw capture cost the
/// phone less than encoding a PNG (per million pixels, so the screen's size does not matter);
/// PNG while the link is unmeasured. Also says why, for the log.
pub(super) fn frame_path(link_mb_per_s: Option<f64>) -> (FramePath, String) {
    let Some(speed) = link_mb_per_s.filter(|s| *s > 0.0) else {
        return (FramePath::Png, "the link is not measured yet".into());
    };
    let raw_ms = RAW_BYTES_PER_MPIXEL / (speed * 1e6) * 1000.0 + RAW_MS_PER_MPIXEL;
    let why = format!(
        "link {speed:.1} MB/s: a raw frame costs {raw_ms:.0} ms per megapixel, a PNG {PNG_MS_PER_MPIXEL:.0} ms"
    );
    match raw_ms < PNG_MS_PER_MPIXEL {
        true => (FramePath::Raw, why),
        false => (FramePath::Png, why),
    }
}

/// The last screenshot's geometry, to map image pixels back to the device.
#[derive(Debug, Clone, Copy)]
pub struct Shot {
    pub image: [u32; 2],
    pub screen: [u32; 2],
    /// Every pixel black: the screen is off (or a secure window hides it).
    pub dark: bool,
    pub frame: FramePath,
}

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
    // PNG costs the phone its encoding, a raw frame the link its 4 bytes a pixel: the link's
    // speed, measured from what the device already sent, decides.
    let (path, why) = frame_path(state.adb.link_mb_per_s(serial).await);
    tracing::info!(target: "droidmcp::tools::ui::capture", serial, frame = ?path, "{why}");
    let command = match path {
        FramePath::Raw => "screencap",
        FramePath::Png => "screencap -p",
    };
    let raw = state
        .adb
        .exec(serial, command, None, state.adb.timeout(), &|_| {})
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
    let (shot, jpeg) = tokio::task::spawn_blocking(move || render(&raw, path, max_size, with_grid, boxes))
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

/// A frame (PNG or raw) in, JPEG out: the geometry and the JPEG bytes.
fn render(
    raw: &[u8],
    frame_path: FramePath,
    max_size: u32,
    with_grid: bool,
    boxes: Option<Vec<(String, Bounds)>>,
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
        frame: frame_path,
    };
    Ok((shot, jpeg))
}
