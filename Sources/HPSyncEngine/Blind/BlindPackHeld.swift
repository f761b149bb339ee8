import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// What a blind store in packs holds, as a push needs it (`BlindPackSink`): per item key, the
/// greatest version the known packs hold and its merge digest, and the photos their records
/// name. Read straight from the packs' index bytes (`BlindPackIndex.scan`) into 128-bit keys,
/// without making an item key or an entry per record: at 100,000 items it is built in a few
/// tens of milliseconds and holds a few MB.
struct BlindPackHeld {
    private struct Key: Hashable {
        let high: UInt64
        let low: UInt64
    }

    private var versions: [Key: (version: Version, mergeDigest: UInt64)] = [:]
    private(set) var photos: Set<BlindID> = []

    /// Adds the records of one pack's index; false (adding nothing reliable) for bytes that are
    /// not an index.
    mutating func add(_ contents: [UInt8]) -> Bool {
        BlindPackIndex.scan(contents) { record in
            let key = Key(high: record.key.high, low: record.key.low)
            if versions[key].map({ $0.version < record.version }) ?? true {
                versions[key] = (record.version, record.mergeDigest)
            }
            if let photo = record.photo { photos.insert(photo) }
            return true
        }
    }

    /// Whether the blind store already holds `entry`'s version in its merge state, or a newer
    /// version: then a push skips it.
    func holds(_ entry: ManifestEntry) -> Bool {
        let bits = entry.key.bits
        guard let there = versions[Key(high: bits.high, low: bits.low)] else { return false }
        return there.version > entry.version
            || (there.version == entry.version && there.mergeDigest == entry.mergeDigest)
    }

    /// Whether the known packs hold any version of `key`.
    func contains(_ key: ItemKey) -> Bool {
        let bits = key.bits
        return versions[Key(high: bits.high, low: bits.low)] != nil
    }
}
