//! `uiautomator dump` and `screencap`, from the current screen.

use crate::device::Device;
use crate::fs::now_secs;
use crate::render;
use crate::shell::Output;

/// The misspelling is what most Android releases print.
const DUMPED_TO: &str = "UI hierchary dumped to:";

pub fn uiautomator(d: &mut Device, args: &[&str]) -> Output {
    if args.first() != Some(&"dump") {
        return Output::err(
            1,
            "Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\ndump: creates an XML dump of current UI hierarchy\n",
        );
    }
    let file = args[1..]
        .iter()
        .find(|a| !a.starts_with("--"))
        .copied()
        .unwrap_or("/sdcard/window_dump.xml");
    let xml = d.shown_tree().to_xml();
    if file == "/dev/tty" || file == "/dev/stdout" {
        return Output::ok(format!("{xml}{DUMPED_TO} {file}\n"));
    }
    match d.fs.write(file, xml.into_bytes(), 0o660, now_secs()) {
        Ok(()) => Output::ok(format!("{DUMPED_TO} {file}\n")),
        Err(e) => Output::err(1, format!("ERROR: could not write {file}: {e}\n")),
    }
}

/// `screencap [-p] [-d ID] [FILE]`: PNG with `-p` or a `.png` file, else the raw format:
/// a 16-byte header (width, height, format 1 = RGBA_8888, dataspace) and the pixels.
pub fn screencap(d: &mut Device, args: &[&str]) -> Output {
    let mut png = false;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-p" => png = true,
            "-d" => {
                it.next();
            }
            a if a.starts_with('-') => {}
            a => file = Some(a),
        }
    }
    png |= file.is_some_and(|f| f.ends_with(".png"));
    // A sleeping screen is black, as screencap gives it on a phone.
    let image = if d.phone.awake {
        render::render(d)
    } else {
        let (w, h) = d.shown_size();
        image::RgbaImage::from_pixel(w, h, image::Rgba([0, 0, 0, 255]))
    };
    let bytes = if png {
        render::encode_png(&image)
    } else {
        let mut raw = Vec::with_capacity(16 + image.as_raw().len());
        for word in [image.width(), image.height(), 1, 0] {
            raw.extend_from_slice(&word.to_le_bytes());
        }
        raw.extend_from_slice(image.as_raw());
        raw
    };
    match file {
        None => Output::ok(bytes),
        Some(f) => match d.fs.write(f, bytes, 0o660, now_secs()) {
            Ok(()) => Output::default(),
            Err(e) => Output::err(1, format!("Error opening file: {f} ({e})\n")),
        },
    }
}
