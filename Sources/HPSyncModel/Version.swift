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
