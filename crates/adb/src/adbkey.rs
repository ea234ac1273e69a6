//! The host's adb key, `~/.android/adbkey` (PEM) and `adbkey.pub` (Android's mincrypt format),
//! shared with the `adb` program so a device that trusts one trusts the other. Written through
//! the one door for files (`confine`): 0600, renamed into place, never through a link.

use std::path::PathBuf;

use base64::Engine;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use rsa::traits::PublicKeyParts;
use rsa::{BigUint, Pkcs1v15Sign, RsaPrivateKey};

use super::AdbError;

/// `$ANDROID_USER_HOME`, else `$HOME/.android`, as adb looks for it.
pub fn key_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("ANDROID_USER_HOME") {
        return Some(PathBuf::from(dir));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".android"))
}

/// The host key, loaded (or made) once per process: signing needs it on every new connection,
/// and making one takes long enough that it must not count against a call's timeout.
pub fn host_key() -> Result<std::sync::Arc<RsaPrivateKey>, AdbError> {
    static KEY: std::sync::Mutex<Option<std::sync::Arc<RsaPrivateKey>>> = std::sync::Mutex::new(None);
    let mut key = KEY.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(key) = key.as_ref() {
        return Ok(key.clone());
    }
    let loaded = std::sync::Arc::new(load_or_create()?);
    *key = Some(loaded.clone());
    Ok(loaded)
}

/// `host_key` on the blocking pool, for async callers.
pub async fn host_key_async() -> Result<std::sync::Arc<RsaPrivateKey>, AdbError> {
    tokio::task::spawn_blocking(host_key)
        .await
        .map_err(|e| AdbError::Key(format!("loading the key failed: {e}")))?
}

pub fn load_or_create() -> Result<RsaPrivateKey, AdbError> {
    let dir = key_dir().ok_or_else(|| AdbError::Key("neither ANDROID_USER_HOME nor HOME is set".into()))?;
    let path = dir.join("adbkey");
    match std::fs::read_to_string(&path) {
        Ok(pem) => RsaPrivateKey::from_pkcs8_pem(&pem)
            .or_else(|_| RsaPrivateKey::from_pkcs1_pem(&pem))
            .map_err(|e| AdbError::Key(format!("{} is not an RSA key: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            tracing::info!(target: "droidmcp::adb::adbkey", path = %path.display(), "no adb key yet, making one");
            let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048)
                .map_err(|e| AdbError::Key(format!("could not make an RSA key: {e}")))?;
            let pem = key
                .to_pkcs8_pem(LineEnding::LF)
                .map_err(|e| AdbError::Key(format!("could not encode the key: {e}")))?;
            let public =
                android_public_key(&key).map_err(|e| AdbError::Key(format!("could not encode the public key: {e}")))?;
            save(&dir, pem.as_bytes(), format!("{public} droidmcp@host\n").as_bytes())
                .map_err(|e| AdbError::Key(format!("could not save {}: {e}", path.display())))?;
            Ok(key)
        }
        Err(e) => Err(AdbError::Key(format!("could not read {}: {e}", path.display()))),
    }
}

/// Saves the key pair in `dir` (made 0700 when new), each file readable by its owner only and
/// renamed into place, so a concurrent reader never sees half a key.
fn save(dir: &std::path::Path, private: &[u8], public: &[u8]) -> Result<(), String> {
    let folder = confine::Folder::chosen(dir)?;
    folder.write(&["adbkey".into()], private)?;
    folder.write(&["adbkey.pub".into()], public)?;
    Ok(())
}

/// adbd's AUTH token is signed as if it were a SHA-1 digest (PKCS#1 v1.5).
pub fn sign(key: &RsaPrivateKey, token: &[u8]) -> Result<Vec<u8>, AdbError> {
    key.sign(Pkcs1v15Sign::new::<sha1::Sha1>(), token)
        .map_err(|e| AdbError::Key(format!("could not sign the device's token: {e}")))
}

/// Encodes the public key as mincrypt's `RSAPublicKey`: len, n0inv, n[len], rr[len], exponent,
/// little-endian u32 words, then base64.
pub fn android_public_key(key: &RsaPrivateKey) -> std::io::Result<String> {
    let n = key.n();
    let words = n.bits().div_ceil(32);
    let modulus_2_32 = BigUint::from(1u64 << 32);
    let n0 = low_u32(&(n % &modulus_2_32));
    // Newton's iteration for n0^-1 mod 2^32 (n is odd), then negate.
    let mut inverse: u32 = 1;
    for _ in 0..5 {
        inverse = inverse.wrapping_mul(2u32.wrapping_sub(n0.wrapping_mul(inverse)));
    }
    let n0inv = inverse.wrapping_neg();
    let rr = (BigUint::from(1u8) << (words * 64)) % n;
    let exponent = low_u32(key.e());

    let mut raw = Vec::with_capacity(12 + words * 8);
    raw.extend_from_slice(&(words as u32).to_le_bytes());
    raw.extend_from_slice(&n0inv.to_le_bytes());
    raw.extend_from_slice(&padded_le(n, words));
    raw.extend_from_slice(&padded_le(&rr, words));
    raw.extend_from_slice(&exponent.to_le_bytes());
    Ok(base64::engine::general_purpose::STANDARD.encode(raw))
}

fn low_u32(value: &BigUint) -> u32 {
    let bytes = padded_le(value, 1);
    u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"))
}

fn padded_le(value: &BigUint, words: usize) -> Vec<u8> {
    let mut bytes = value.to_bytes_le();
    bytes.resize(bytes.len().max(words * 4), 0);
    bytes.truncate(words * 4);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_new_key_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("adbkey");
        save(dir.path(), b"secret", b"public").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read(&path).unwrap(), b"secret");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no temporary file is left"
        );
    }
}
