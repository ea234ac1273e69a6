//! adbd's AUTH check: the host signs our 20-byte token with its RSA key (PKCS#1 v1.5, the token
//! standing in for a SHA-1 digest), and we verify against the keys in an `adb_keys` file.

use base64::Engine;
use rsa::{BigUint, Pkcs1v15Sign, RsaPublicKey};

/// How the simulated device treats connecting hosts.
#[derive(Debug, Clone, Default)]
pub enum AuthPolicy {
    /// No AUTH at all, like an emulator image with `ro.adb.secure=0`.
    #[default]
    None,
    /// AUTH is exchanged, and any signature or public key is accepted.
    AcceptAny,
    /// Only a signature made by one of these keys is accepted; a host that offers another key
    /// meets the "Allow USB debugging" prompt, which someone accepts after `allow_after` (or
    /// nobody, when it is `None`).
    Keys {
        keys: Vec<RsaPublicKey>,
        allow_after: Option<std::time::Duration>,
    },
}

/// Reads an `adb_keys` / `adbkey.pub` file: one `BASE64 user@host` line per key.
pub fn load_adb_keys(text: &str) -> anyhow::Result<Vec<RsaPublicKey>> {
    let keys: Vec<RsaPublicKey> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| decode_android_pubkey(l.split_whitespace().next().unwrap_or("")))
        .collect::<anyhow::Result<_>>()?;
    anyhow::ensure!(!keys.is_empty(), "no keys in the adb_keys file");
    Ok(keys)
}

/// Decodes Android's mincrypt `RSAPublicKey` struct: len, n0inv, n[len], rr[len], exponent,
/// all little-endian u32 words.
pub fn decode_android_pubkey(b64: &str) -> anyhow::Result<RsaPublicKey> {
    let raw = base64::engine::general_purpose::STANDARD.decode(b64.trim().trim_end_matches('\0'))?;
    let word = |i: usize| -> anyhow::Result<u32> {
        let bytes = raw
            .get(i * 4..i * 4 + 4)
            .ok_or_else(|| anyhow::anyhow!("public key is truncated"))?;
        Ok(u32::from_le_bytes(bytes.try_into()?))
    };
    let len = word(0)? as usize;
    anyhow::ensure!(
        (16..=256).contains(&len),
        "public key has an unlikely size of {len} words"
    );
    let modulus_bytes = raw
        .get(8..8 + len * 4)
        .ok_or_else(|| anyhow::anyhow!("public key is truncated"))?;
    let exponent = word(2 + 2 * len)?;
    Ok(RsaPublicKey::new(
        BigUint::from_bytes_le(modulus_bytes),
        BigUint::from(exponent),
    )?)
}

pub fn verify_signature(key: &RsaPublicKey, token: &[u8], signature: &[u8]) -> bool {
    key.verify(Pkcs1v15Sign::new::<sha1::Sha1>(), token, signature).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use adb::adbkey::{android_public_key, sign};
    use rsa::RsaPrivateKey;
    use rsa::traits::PublicKeyParts;

    /// The device layer's key format and signature, read back the way the simulator (adbd)
    /// reads them. Here, not in adb/: the simulator may use the device layer, never the reverse.
    #[test]
    fn the_device_layers_public_key_decodes_and_its_signature_verifies() {
        let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 1024).unwrap();
        let encoded = android_public_key(&key).unwrap();
        let decoded = decode_android_pubkey(&encoded).unwrap();
        assert_eq!(decoded.n(), key.n());
        let token = [7u8; 20];
        let signature = sign(&key, &token).unwrap();
        assert!(verify_signature(&decoded, &token, &signature));
    }
}
