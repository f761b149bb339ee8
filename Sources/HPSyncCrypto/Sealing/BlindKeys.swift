import HPSyncModel

/// The keys a trusted node uses with a blind peer, derived from the inventory key.
///
/// Each use has its own subkey, HKDF-SHA256 (RFC 5869) of the inventory key with an empty salt and
/// a fixed info string, so a value made for one use can never be passed off as another: a record
/// ID is not a photo ID, a record cannot be opened as a head. The strings name version 4 of the
/// protocol; changing one changes every key.
///
/// - record IDs: HMAC-SHA256 under `"hp-sync v4 record-id"` of the item key's text;
/// - photo IDs: HMAC-SHA256 under `"hp-sync v4 photo-id"` of the photo's SHA-256;
/// - records and heads: ChaCha20-Poly1305 under `"hp-sync v4 record"` and `"hp-sync v4 head"`
///   (see `sealRecord(_:context:)`);
/// - photos: a STREAM of ChaCha20-Poly1305 chunks under a per-photo key derived from
///   `"hp-sync v4 photo"` (see `StreamSealer`);
/// - packs of records (version 6): the same STREAM under a per-pack key derived from
///   `"hp-sync v6 pack"`.
public struct BlindKeys: Sendable, CustomStringConvertible {
    let recordIDKey: [UInt8]
    let photoIDKey: [UInt8]
    let recordKey: [UInt8]
    let photoKey: [UInt8]
    let packKey: [UInt8]
    let headKey: [UInt8]

    /// Derives every subkey of `key`.
    public init(_ key: InventoryKey) {
        func derive(_ info: String) -> [UInt8] {
            HKDFSHA256.deriveKey(
                inputKeyMaterial: key.bytes, salt: [], info: Array(info.utf8), byteCount: ChaChaPoly.keyByteCount)
        }
        recordIDKey = derive("hp-sync v4 record-id")
        photoIDKey = derive("hp-sync v4 photo-id")
        recordKey = derive("hp-sync v4 record")
        photoKey = derive("hp-sync v4 photo")
        packKey = derive("hp-sync v6 pack")
        headKey = derive("hp-sync v4 head")
    }

    /// The 32-byte name under which a blind peer stores the item `key`.
    ///
    /// Keyed, so the host cannot tell which item a record is, yet deterministic, so every trusted
    /// node names the same item the same way and a record replaces its older versions.
    public func recordID(for key: ItemKey) -> [UInt8] {
        HMACSHA256.authenticationCode(for: Array(key.rawValue.utf8), key: recordIDKey)
    }

    /// The 32-byte name under which a blind peer stores the photo whose SHA-256 is `digest`.
    ///
    /// Keyed, because the digest itself would let the host confirm it holds a photo it knows.
    public func photoID(for digest: SHA256Digest) -> [UInt8] {
        HMACSHA256.authenticationCode(for: digest.bytes, key: photoIDKey)
    }

    /// Never shows the subkeys.
    public var description: String { "BlindKeys(…)" }
}
