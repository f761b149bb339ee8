/// One value a field of an item may hold, with the edit that set it.
///
/// `version` is the `(stamp, origin)` of that edit; `base` is the greatest version of the same
/// field (over all its candidates, open conflicts included) that the editing node held when it
/// made the edit, or nil when that is unknown: a record from before field merge, or from a peer
/// that merges whole records. A local edit is stamped above everything its node has seen, so a
/// base is always below its version (`init(value:version:base:)` refuses any other).
public struct FieldCandidate<Value: FieldValue>: Hashable, Sendable {
    public let value: Value
    public let version: Version
    public let base: Version?

    /// A candidate; nil when `base` is not below `version` (no edit can see its own future).
    public init?(value: Value, version: Version, base: Version?) {
        if let base, !(base < version) { return nil }
        self.value = value
        self.version = version
        self.base = base
    }

    /// A candidate whose base is known to be below its version.
    init(checked value: Value, version: Version, base: Version?) {
        self.value = value
        self.version = version
        self.base = base
    }

    /// Whether `other` makes this candidate obsolete: its editor had seen this version (a known
    /// base at or above it), or, with its base unknown, it is simply newer (the whole-record rule).
    ///
    /// The relation is a strict order: a base lies below its own version, so a chain of
    /// dominations only climbs, and whatever dominates a dominator dominates too.
    public func isDominated(by other: Self) -> Bool {
        if let base = other.base { return version <= base }
        return version < other.version
    }

    /// Between two candidates of one version (one edit that reached a node by two ways, say
    /// once through a peer that drops bases), whether `other` is the one to keep: the unknown
    /// base first, then the greater base, as they dominate more; then the value, so that even
    /// a peer that sent two values for one version cannot split the nodes.
    func isOutranked(bySameVersion other: Self) -> Bool {
        switch (base, other.base) {
        case (nil, nil): break
        case (nil, .some): return false
        case (.some, nil): return true
        case (.some(let mine), .some(let theirs)) where mine != theirs: return mine < theirs
        default: break
        }
        return Value.orders(value, before: other.value)
    }
}

/// A value one field can hold: hashable, and totally ordered for the one tie-break the merge
/// needs (two values sent for one version).
public protocol FieldValue: Hashable, Sendable {
    /// A strict total order, the same on every platform.
    static func orders(_ lhs: Self, before rhs: Self) -> Bool
}

extension String: FieldValue {
    /// By UTF-8 bytes: Swift's own `<` follows Unicode canonical equivalence, which two
    /// platforms' libraries need not agree on.
    public static func orders(_ lhs: String, before rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}

extension Int64: FieldValue {
    public static func orders(_ lhs: Int64, before rhs: Int64) -> Bool { lhs < rhs }
}

extension ImageRef: FieldValue {
    public static func orders(_ lhs: ImageRef, before rhs: ImageRef) -> Bool {
        if lhs.digest != rhs.digest { return lhs.digest.bytes.lexicographicallyPrecedes(rhs.digest.bytes) }
        return lhs.size < rhs.size
    }
}

extension Optional: FieldValue where Wrapped: FieldValue {
    /// None first.
    public static func orders(_ lhs: Wrapped?, before rhs: Wrapped?) -> Bool {
        switch (lhs, rhs) {
        case (nil, .some): true
        case (.some(let left), .some(let right)): Wrapped.orders(left, before: right)
        default: false
        }
    }
}
