//! Screenshots for a model: a device frame (raw `screencap` or PNG) → resized with
//! fast_image_resize (alpha ignored: screens are opaque, so no premultiplying) → JPEG with the
//! `jpeg-encoder` crate (about 4× faster than the image crate's, ADB-NOTES.md), optionally with
//! a numbered tap grid drawn on it.

pub mod grid;

use fast_image_resize as fr;

/// One frame, RGBA8.
#[derive(Debug, Clone)]
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error(
        "the device sent no screenshot (0 bytes): screencap failed or the connection was dropped; retry, and adb-device health tells if the device is there"
    )]
    Empty,
    #[error(
        "the screenshot is neither raw screencap nor PNG ({0} bytes, starting {1}); screencap printed an error or the connection was cut"
    )]
    Unknown(usize, String),
    #[error("the raw screenshot is cut short: {got} bytes for {width}×{height}")]
    Short { got: usize, width: u32, height: u32 },
    #[error("the raw screenshot has pixel format {0}; only RGBA_8888 (1) and RGBX_8888 (2) are read")]
    Format(u32),
    #[error("PNG: {0}")]
    Png(String),
    #[error("resize: {0}")]
    Resize(String),
    #[error("JPEG: {0}")]
    Jpeg(String),
}

/// Reads `screencap` output: PNG, or raw (a 12-byte header before Android 8, 16 after: width,
/// height, format, and then the color space).
pub fn decode(bytes: &[u8]) -> Result<Frame, ImageError> {
    if bytes.starts_with(b"\x89PNG") {
        let image = image::load_from_memory_with_format(bytes, image::ImageFormat::Png)
            .map_err(|e| ImageError::Png(e.to_string()))?
            .into_rgba8();
        return Ok(Frame {
            width: image.width(),
            height: image.height(),
            rgba: image.into_raw(),
        });
    }
    let word = |i: usize| {
        bytes
            .get(i * 4..i * 4 + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    };
    let unknown = || {
        let start = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]);
        ImageError::Unknown(bytes.len(), format!("{start:?}"))
    };
    if bytes.is_empty() {
        return Err(ImageError::Empty);
    }
    let (Some(width), Some(height), Some(format)) = (word(0), word(1), word(2)) else {
        return Err(unknown());
    };
    if width == 0 || height == 0 || width > 16384 || height > 16384 {
        return Err(unknown());
    }
    if format != 1 && format != 2 {
        return Err(ImageError::Format(format));
    }
    let pixels = width as usize * height as usize * 4;
    // The header is 16 bytes if that leaves exactly the pixels, else the older 12.
    let header = if bytes.len() >= 16 + pixels { 16 } else { 12 };
    let data = bytes.get(header..header + pixels).ok_or(ImageError::Short {
        got: bytes.len(),
        width,
        height,
    })?;
    Ok(Frame {
        width,
        height,
        rgba: data.to_vec(),
    })
}

/// The size that fits `max_side` on the longest side, keeping the aspect ratio (never larger).
pub fn fit(width: u32, height: u32, max_side: u32) -> (u32, u32) {
    let longest = width.max(height);
    if longest <= max_side {
        return (width, height);
    }
    let scale = max_side as f64 / longest as f64;
    (
        ((width as f64 * scale).round() as u32).max(1),
        ((height as f64 * scale).round() as u32).max(1),
    )
}

/// Resizes with a bilinear filter; alpha is not premultiplied (screens are opaque).
pub fn resize(frame: &Frame, width: u32, height: u32) -> Result<Frame, ImageError> {
    if (width, height) == (frame.width, frame.height) {
        return Ok(frame.clone());
    }
    let src = fr::images::ImageRef::new(frame.width, frame.height, &frame.rgba, fr::PixelType::U8x4)
        .map_err(|e| ImageError::Resize(e.to_string()))?;
    let mut dst = fr::images::Image::new(width, height, fr::PixelType::U8x4);
    let options = fr::ResizeOptions::new()
        .resize_alg(fr::ResizeAlg::Convolution(fr::FilterType::Bilinear))
        .use_alpha(false);
    fr::Resizer::new()
        .resize(&src, &mut dst, &options)
        .map_err(|e| ImageError::Resize(e.to_string()))?;
    Ok(Frame {
        width,
        height,
        rgba: dst.into_vec(),
    })
}

pub fn encode_jpeg(frame: &Frame, quality: u8) -> Result<Vec<u8>, ImageError> {
    let mut out = Vec::new();
    let encoder = jpeg_encoder::Encoder::new(&mut out, quality);
    let (w, h) = (
        u16::try_from(frame.width).map_err(|_| ImageError::Jpeg("too wide".into()))?,
        u16::try_from(frame.height).map_err(|_| ImageError::Jpeg("too tall".into()))?,
    );
    encoder
        .encode(&frame.rgba, w, h, jpeg_encoder::ColorType::Rgba)
        .map_err(|e| ImageError::Jpeg(e.to_string()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_bytes_and_text_instead_of_an_image_get_errors_that_say_so() {
        assert!(matches!(decode(&[]), Err(ImageError::Empty)));
        let e = decode(b"Error: no display with id 3\n").unwrap_err().to_string();
        assert!(e.contains("Error: no display"), "{e}");
    }

    #[test]
    fn raw_headers_of_12_and_16_bytes_decode_and_fit_keeps_the_aspect() {
        let pixels = vec![7u8; 4 * 3 * 4];
        for header_len in [12usize, 16] {
            let mut raw = Vec::new();
            for w in [4u32, 3, 1, 0].iter().take(header_len / 4) {
                raw.extend_from_slice(&w.to_le_bytes());
            }
            raw.extend_from_slice(&pixels);
            let f = decode(&raw).unwrap();
            assert_eq!((f.width, f.height, f.rgba.len()), (4, 3, 48));
        }
        assert!(decode(b"nonsense").is_err());
        assert_eq!(fit(1080, 2400, 1000), (450, 1000));
        assert_eq!(fit(800, 600, 1000), (800, 600));
    }
}
