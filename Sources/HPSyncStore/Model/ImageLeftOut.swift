import HPSyncModel

/// An image a transfer did not carry because its bytes were missing or not the record's: the
/// record is kept, with the image recorded as missing, so nothing else is held back by it.
public struct ImageLeftOut: Sendable, Hashable, Codable, CustomStringConvertible {
    public var key: ItemKey
    /// What happened and why, naming the file: "left out of the export: images/KEY is missing".
    public var reason: String

    package init(key: ItemKey, reason: String) {
        self.key = key
        self.reason = reason
    }

    public var description: String {
        "image of \(key) \(reason); the record is kept with its image missing: fetch it again with "
            + "`\(Store.repairCommand)`"
    }

    /// How `actual` differs from `expected`, for the reason: "(12 bytes, not 547)" or
    /// "(its SHA-256 is not the record's)".
    static func difference(_ actual: ImageRef, _ expected: ImageRef) -> String {
        actual.size == expected.size
            ? "(its SHA-256 is not the record's)" : "(\(actual.size) bytes, not \(expected.size))"
    }
}
