/// One version of an item: who made it and when. The greater version wins on every node.
///
/// Versions compare by stamp, then by origin's bytes, so two nodes that stamp the same
/// instant still agree on one winner whatever order the changes arrive in.
public struct Version: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    public var stamp: VersionStamp
    public var origin: NodeID

    public init(stamp: VersionStamp, origin: NodeID) {
        self.stamp = stamp
        self.origin = origin
    }

    public static func < (lhs: Version, rhs: Version) -> Bool {
        if lhs.stamp != rhs.stamp { return lhs.stamp < rhs.stamp }
        return lhs.origin < rhs.origin
    }

    public var description: String { "\(stamp)@\(origin.short)" }
}

/// A hybrid logical clock reading: `(milliseconds since 1970 << 16) | counter`.
///
/// Stamps order versions of one item. A local change takes `max(now, highest seen + 1)`, so an
/// edit made after seeing a change is stamped after it even when this machine's clock is behind.
public struct VersionStamp: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(milliseconds: UInt64, counter: UInt16 = 0) {
        self.rawValue = milliseconds << 16 | UInt64(counter)
    }

    /// The wall-clock part.
    public var milliseconds: UInt64 { rawValue >> 16 }

    /// The logical part that orders changes within one millisecond.
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    public static let zero = VersionStamp(rawValue: 0)

    public static func < (lhs: VersionStamp, rhs: VersionStamp) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "\(milliseconds).\(counter)" }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
