//! The `ui` tool's hot paths, each against a baseline in the same run:
//! - window dump → compact elements, on the largest uiautomator capture (baseline: the XML parse alone);
//! - a 1080×2400 screenshot to a 1000 px JPEG q70, from PNG and from raw RGBA, with
//!   fast_image_resize + jpeg-encoder (ours) against the image crate's own resize + JPEG;
//! - the frame from the device: raw `screencap` against `screencap -p` (+ PNG decode), on the simulator.
//!
//! `cargo bench --bench ui_pipeline`. Needs `../shared/device-captures` (prints a reason otherwise).

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use droidmcp::adb::{Adb, Route};
use droidmcp::android::ui_elements::elements;
use droidmcp::android::uiautomator::parse_ui_dump;
use droidmcp::image::{Frame, decode, encode_jpeg, fit, resize};
use droidmcp::sim::{self, AuthPolicy, Simulator};

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn time(n: usize, mut f: impl FnMut()) -> Duration {
    f();
    median(
        (0..n)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> String {
    format!("{:8.3} ms", d.as_secs_f64() * 1000.0)
}

fn image_crate_pipeline(frame: &Frame) -> Vec<u8> {
    let buffer = image::RgbaImage::from_raw(frame.width, frame.height, frame.rgba.clone()).expect("buffer");
    let (w, h) = fit(frame.width, frame.height, 1000);
    let small = image::imageops::resize(&buffer, w, h, image::imageops::FilterType::Triangle);
    let rgb = image::DynamicImage::ImageRgba8(small).into_rgb8();
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 70)
        .encode_image(&rgb)
        .expect("jpeg");
    out
}

fn our_pipeline(frame: &Frame) -> Vec<u8> {
    let (w, h) = fit(frame.width, frame.height, 1000);
    encode_jpeg(&resize(frame, w, h).expect("resize"), 70).expect("jpeg")
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let captures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/device-captures");
    if !captures.is_dir() {
        println!("ui_pipeline: skipped, {} is absent", captures.display());
        return Ok(());
    }
    println!("median of runs, same process, same run:");

    let xml = std::fs::read_to_string(captures.join("uiautomator_notification-shade_systemui_emulator-1080x2424.xml"))?;
    let parse = time(50, || {
        parse_ui_dump(&xml).expect("parse");
    });
    let compact = time(50, || {
        let tree = parse_ui_dump(&xml).expect("parse");
        std::hint::black_box(elements(&tree));
    });
    println!("dump → elements, 59 KB notification-shade capture:");
    println!("  XML parse alone (baseline)       {}", ms(parse));
    println!(
        "  parse + compact elements         {}  {:.2}× the parse",
        ms(compact),
        compact.as_secs_f64() / parse.as_secs_f64()
    );

    let png = std::fs::read(captures.join("screenshot_facebook-login_xiaomi-1080x2400.png"))?;
    let frame = decode(&png).expect("png");
    let from_png_ours = time(20, || {
        std::hint::black_box(our_pipeline(&decode(&png).expect("png")));
    });
    let from_png_image = time(10, || {
        std::hint::black_box(image_crate_pipeline(&decode(&png).expect("png")));
    });
    let raw_ours = time(20, || {
        std::hint::black_box(our_pipeline(&frame));
    });
    let raw_image = time(10, || {
        std::hint::black_box(image_crate_pipeline(&frame));
    });
    println!("1080×2400 screenshot → 450×1000 JPEG q70:");
    println!("  from PNG, image crate (baseline) {}", ms(from_png_image));
    println!(
        "  from PNG, ours                   {}  {:.1}× faster",
        ms(from_png_ours),
        from_png_image.as_secs_f64() / from_png_ours.as_secs_f64()
    );
    println!("  from raw RGBA, image crate       {}", ms(raw_image));
    println!(
        "  from raw RGBA, ours              {}  {:.1}× faster than the image crate, {:.1}× than ours from PNG",
        ms(raw_ours),
        raw_image.as_secs_f64() / raw_ours.as_secs_f64(),
        from_png_ours.as_secs_f64() / raw_ours.as_secs_f64()
    );

    // The frame from a device: the simulator renders the screen for both, and encodes the PNG as a
    // device would have to. Real phones compress PNG far more slowly than this host does.
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pixel-emulator");
    let handle = sim::start(
        Simulator::load(&profile, None, AuthPolicy::None)?,
        SocketAddr::from(([127, 0, 0, 1], 0)),
    )
    .await?;
    let adb = Adb::new(Route::Direct(handle.addr), Duration::from_secs(20));
    let serial = handle.addr.to_string();
    let mut raw_runs = Vec::new();
    let mut png_runs = Vec::new();
    let (mut raw_bytes, mut png_bytes) = (0, 0);
    for _ in 0..15 {
        let t = Instant::now();
        let raw = adb
            .exec(&serial, "screencap", None, Duration::from_secs(20), &|_| {})
            .await?;
        std::hint::black_box(decode(&raw).expect("raw"));
        raw_runs.push(t.elapsed());
        raw_bytes = raw.len();
        let t = Instant::now();
        let png = adb
            .exec(&serial, "screencap -p", None, Duration::from_secs(20), &|_| {})
            .await?;
        std::hint::black_box(decode(&png).expect("png"));
        png_runs.push(t.elapsed());
        png_bytes = png.len();
    }
    let (raw_t, png_t) = (median(raw_runs), median(png_runs));
    println!("frame from the simulator over the direct link (transfer + decode):");
    println!("  screencap -p + PNG decode        {}  {png_bytes} bytes", ms(png_t));
    println!(
        "  screencap raw                    {}  {raw_bytes} bytes, {:.1}× faster",
        ms(raw_t),
        png_t.as_secs_f64() / raw_t.as_secs_f64()
    );
    Ok(())
}
