//! `ui screenshot` over MCP: JPEG image blocks with their scale, and the tap grid (cells mapped
//! to pixels, thin dashed lines, numbers clear of the elements' centres).

use crate::common::*;
use serde_json::json;

#[tokio::test]
async fn screenshots_are_jpeg_image_blocks_with_their_scale_and_the_grid_maps_cells_to_pixels() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let result = call(&client, "ui", json!({"operation": "screenshot"})).await;
    let shot = ok(&result);
    assert_eq!(
        (shot["image"].clone(), shot["screen"].clone()),
        (json!([450, 1000]), json!([1080, 2400]))
    );
    assert_eq!(shot["scale"], 2.4);
    assert!(
        shot["hint"]
            .as_str()
            .unwrap()
            .contains("450×1000 of a 1080×2400 screen")
    );
    let image = result
        .content
        .iter()
        .find_map(|c| c.as_image())
        .expect("an image block");
    assert_eq!(image.mime_type, "image/jpeg");
    println!("screenshot: {} base64 chars", image.data.len());
    use base64::Engine;
    let jpeg = base64::engine::general_purpose::STANDARD.decode(&image.data).unwrap();
    let decoded = image::load_from_memory_with_format(&jpeg, image::ImageFormat::Jpeg).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (450, 1000));
    assert_eq!(
        first_quantizer(&jpeg),
        10,
        "quality 70: 16 × (200 − 2·70) / 100, rounded"
    );
    assert!(
        !result
            .content
            .iter()
            .any(|c| c.as_text().is_some_and(|t| t.text.contains("/9j/"))),
        "no base64 in the text"
    );

    // Nothing matches on the launcher: the closest labels and a grid image.
    let miss = call(&client, "ui", json!({"operation": "find", "text": "Setings"})).await;
    let found = ok(&miss);
    assert_eq!(found["count"], 0);
    assert_eq!(found["matches"][0]["label"], "Settings", "the closest label");
    assert!(miss.content.iter().any(|c| c.as_image().is_some()));
    assert!(found["hint"].as_str().unwrap().contains("gridCell"));

    let small = call(
        &client,
        "ui",
        json!({"operation": "screenshot", "maxSize": 500, "grid": true}),
    )
    .await;
    assert_eq!(ok(&small)["image"], json!([225, 500]));

    // A grid cell and a position land on the device pixels they name.
    let tap = ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "gridCell": 14, "gridPosition": "top-left"}),
    )
    .await);
    assert_eq!(tap["at"], json!([338, 1300]));
    let tap = ok(&call(&client, "ui", json!({"operation": "tap", "gridCell": 1})).await);
    assert_eq!(tap["at"], json!([135, 200]));
    // Image pixels map back through the last screenshot's scale (225×500 → 1080×2400).
    let tap = ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "x": 100, "y": 250, "space": "image"}),
    )
    .await);
    assert_eq!(tap["at"], json!([480, 1200]));

    client.cancel().await.unwrap();
}

/// The first luminance quantizer value in a JPEG's DQT segment.
fn first_quantizer(jpeg: &[u8]) -> u8 {
    let at = jpeg.windows(2).position(|w| w == [0xFF, 0xDB]).expect("a DQT segment");
    jpeg[at + 5]
}

/// The JPEG of a screenshot answer, decoded, and its base64 size.
fn screenshot_image(result: &rmcp::model::CallToolResult) -> (image::RgbImage, usize) {
    use base64::Engine;
    let block = result
        .content
        .iter()
        .find_map(|c| c.as_image())
        .expect("an image block");
    let jpeg = base64::engine::general_purpose::STANDARD.decode(&block.data).unwrap();
    let decoded = image::load_from_memory_with_format(&jpeg, image::ImageFormat::Jpeg).unwrap();
    (decoded.to_rgb8(), block.data.len())
}

#[tokio::test]
async fn the_grid_is_thin_dashed_cheap_and_its_numbers_cover_no_elements_center() {
    use droidmcp::image::grid;
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    for screen in ["launcher", "settings", "network"] {
        match screen {
            "settings" => ok(&call(&client, "ui", json!({"operation": "tap", "text": "Settings"})).await),
            "network" => ok(&call(&client, "ui", json!({"operation": "tap", "text": "Network & internet"})).await),
            _ => json!(null),
        };
        let dump = ok(&call(&client, "ui", json!({"operation": "dump", "limit": 200})).await);
        let plain = call(&client, "ui", json!({"operation": "screenshot"})).await;
        let gridded = call(&client, "ui", json!({"operation": "screenshot", "grid": true})).await;
        let meta = ok(&gridded);
        assert!(meta["hint"].as_str().unwrap().contains("numbered row by row"), "{meta}");
        let ((plain_img, plain_size), (grid_img, grid_size)) = (screenshot_image(&plain), screenshot_image(&gridded));
        println!(
            "{screen}: JPEG {plain_size} base64 chars, {grid_size} with the grid (+{:.0}%)",
            (grid_size as f64 / plain_size as f64 - 1.0) * 100.0
        );
        assert!(grid_size * 4 <= plain_size * 5, "{screen}: the grid adds over 25%");
        // The first column line: dark in its block, as before just outside it (one block wide).
        let (w, h) = (grid_img.width(), grid_img.height());
        let x = w / 4 / 8 * 8;
        let luma = |img: &image::RgbImage, x: u32, y: u32| {
            let p = img.get_pixel(x, y);
            (u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2])) / 3
        };
        let y = h / 2 / 32 * 32 + 4; // the middle of a dash's dark block (a light one follows)
        assert!(luma(&grid_img, x + 4, y) < 90, "{screen}: the dash starts dark");
        assert!(luma(&grid_img, x + 4, y + 8) > 170, "{screen}: and goes on light");
        for outside in [x.saturating_sub(3), x + 11] {
            let (a, b) = (luma(&grid_img, outside, y), luma(&plain_img, outside, y));
            assert!(
                a.abs_diff(b) < 40,
                "{screen}: the line is wider than a block at x={outside}"
            );
        }
        // No number box sits on the centre of a labelled element.
        let scale = meta["scale"].as_f64().unwrap();
        for e in dump["elements"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["label"].is_string())
        {
            let (cx, cy) = (
                e["at"][0].as_f64().unwrap() / scale,
                e["at"][1].as_f64().unwrap() / scale,
            );
            for cell in 1..=grid::CELLS {
                let (bx, by) = grid::number_box(cell, w, h);
                let digits = cell.to_string().len() as f64 * 8.0;
                let inside = cx >= bx as f64 && cx < bx as f64 + digits && cy >= by as f64 && cy < by as f64 + 8.0;
                assert!(!inside, "{screen}: cell {cell}'s number covers the centre of {e}");
            }
        }
    }
}
