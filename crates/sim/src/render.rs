//! Draws the current screen from its uiautomator XML: element boxes, fields, switches and
//! labels in an 8×8 bitmap font. The frame is cached until the screen changes.

use image::{Rgba, RgbaImage};

use android::uiautomator::{Bounds, UiNode};

use super::device::Device;

const BACKGROUND: Rgba<u8> = Rgba([250, 250, 252, 255]);
const CLICKABLE_FILL: Rgba<u8> = Rgba([232, 238, 247, 255]);
const BORDER: Rgba<u8> = Rgba([154, 167, 184, 255]);
const FIELD_LINE: Rgba<u8> = Rgba([26, 115, 232, 255]);
const TEXT: Rgba<u8> = Rgba([32, 33, 36, 255]);
const CHECKED: Rgba<u8> = Rgba([30, 142, 62, 255]);
const STATUS_BAR: Rgba<u8> = Rgba([60, 64, 67, 255]);

/// The current frame, rendered once per visible change.
pub fn render(d: &mut Device) -> RgbaImage {
    if let Some((generation, frame)) = &d.frame_cache
        && *generation == d.generation
    {
        return frame.clone();
    }
    let (w, h) = d.shown_size();
    let tree = d.shown_tree();
    let mut img = RgbaImage::from_pixel(w, h, BACKGROUND);
    fill(
        &mut img,
        Bounds {
            left: 0,
            top: 0,
            right: w as i32,
            bottom: (h / 40) as i32,
        },
        STATUS_BAR,
    );
    let scale = (w.min(h) / 360).max(1);
    for node in &tree.nodes {
        draw_node(&mut img, node, scale);
    }
    d.frame_cache = Some((d.generation, img.clone()));
    img
}

fn draw_node(img: &mut RgbaImage, node: &UiNode, scale: u32) {
    let Some(b) = node.bounds().filter(|b| !b.is_empty()) else {
        return;
    };
    let class = node.class();
    if class.contains("EditText") {
        fill(img, b, Rgba([255, 255, 255, 255]));
        let line = if node.flag("focused") { 3 } else { 1 } * scale as i32;
        fill(
            img,
            Bounds {
                top: b.bottom - line,
                ..b
            },
            FIELD_LINE,
        );
    } else if node.flag("clickable") && b.width() < img.width() as i32 {
        fill(img, b, CLICKABLE_FILL);
        outline(img, b, BORDER, scale as i32);
    }
    if node.flag("checkable") {
        let size = 12 * scale as i32;
        let cy = (b.top + b.bottom) / 2;
        let knob = Bounds {
            left: b.right - size - 8 * scale as i32,
            top: cy - size / 2,
            right: b.right - 8 * scale as i32,
            bottom: cy + size / 2,
        };
        fill(img, knob, if node.flag("checked") { CHECKED } else { BORDER });
    }
    let label = if node.text().is_empty() {
        node.content_desc()
    } else {
        node.text()
    };
    if !label.is_empty() && node.children.is_empty() {
        let glyph = 8 * scale as i32;
        let y = (b.top + b.bottom) / 2 - glyph / 2;
        draw_text(img, label, b.left + 4 * scale as i32, y, scale, b.right);
    }
}

fn fill(img: &mut RgbaImage, b: Bounds, color: Rgba<u8>) {
    let (w, h) = (img.width() as i32, img.height() as i32);
    for y in b.top.max(0)..b.bottom.min(h) {
        for x in b.left.max(0)..b.right.min(w) {
            img.put_pixel(x as u32, y as u32, color);
        }
    }
}

fn outline(img: &mut RgbaImage, b: Bounds, color: Rgba<u8>, t: i32) {
    fill(img, Bounds { bottom: b.top + t, ..b }, color);
    fill(img, Bounds { top: b.bottom - t, ..b }, color);
    fill(img, Bounds { right: b.left + t, ..b }, color);
    fill(img, Bounds { left: b.right - t, ..b }, color);
}

/// Draws text with the 8×8 font scaled by `scale`, stopping at `right`.
fn draw_text(img: &mut RgbaImage, text: &str, x: i32, y: i32, scale: u32, right: i32) {
    let s = scale as i32;
    let mut cx = x;
    for c in text.chars() {
        if cx + 8 * s > right {
            break;
        }
        let rows = droidmcp_image::grid::bitmap(c);
        for (row, bits) in rows.iter().enumerate() {
            for col in 0..8 {
                if bits & (1 << col) != 0 {
                    let px = Bounds {
                        left: cx + col * s,
                        top: y + row as i32 * s,
                        right: cx + (col + 1) * s,
                        bottom: y + (row as i32 + 1) * s,
                    };
                    fill(img, px, TEXT);
                }
            }
        }
        cx += 8 * s;
    }
}

/// PNG as `screencap -p` writes it: RGBA, fast compression.
pub fn encode_png(img: &RgbaImage) -> Vec<u8> {
    use image::ImageEncoder;
    let mut out = Vec::new();
    let encoder = image::codecs::png::PngEncoder::new_with_quality(
        &mut out,
        image::codecs::png::CompressionType::Fast,
        image::codecs::png::FilterType::Sub,
    );
    encoder
        .write_image(img.as_raw(), img.width(), img.height(), image::ExtendedColorType::Rgba8)
        .expect("encoding a well-formed RGBA buffer into memory cannot fail");
    out
}
