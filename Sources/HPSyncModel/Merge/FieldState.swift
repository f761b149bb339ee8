/// What one field of one item holds: its candidates that no other candidate makes obsolete.
///
/// The candidate with the greatest version is the field's value (the whole-record rule of
/// earlier versions, per field); the others are edits of the field made concurrently with the
/// winner, kept until a later edit of the field resolves them: its open conflicts, those whose
/// value differs from the winner's (`conflicts`; an equal one is no clash, `agreeing`). Joining
/// two states unions their candidates and keeps the maximal ones, so the join is commutative,
/// associative and idempotent: any order of syncs gives the same state.
public struct FieldState<Value: FieldValue>: Hashable, Sendable {
    /// Greatest version first: the winner, then the open conflicts; never two of one version.
    public private(set) var candidates: [FieldCandidate<Value>]

    /// A field that holds nothing (a tombstone from before field merge).
    public init() { candidates = [] }

    /// The maximal candidates among `candidates`.
    public init(_ candidates: some Sequence<FieldCandidate<Value>>) {
        self.candidates = Self.maximal(Array(candidates))
    }

    /// The field as a whole-record version sets it: one candidate, its base unknown.
    public init(value: Value, version: Version) {
        candidates = [FieldCandidate(checked: value, version: version, base: nil)]
    }

    /// The field's value and the edit that set it; nil for an empty field.
    @inlinable public var winner: FieldCandidate<Value>? { candidates.first }

    /// The open conflicts: the concurrent edits that lost to the winner with another value,
    /// greatest version first. A concurrent edit that set the winner's own value (two nodes
    /// restamping one state for a version-4 peer, Protocol.md 5.9) is no clash: `agreeing`.
    public var conflicts: [FieldCandidate<Value>] {
        // Most fields hold one candidate: no array walked for them.
        guard candidates.count > 1, let value = winner?.value else { return [] }
        return candidates.dropFirst().filter { $0.value != value }
    }

    /// The concurrent edits that lost to the winner with the winner's own value, greatest
    /// version first: kept, as the join needs them (they dominate what their editors saw), but
    /// not listed as conflicts.
    public var agreeing: [FieldCandidate<Value>] {
        guard candidates.count > 1, let value = winner?.value else { return [] }
        return candidates.dropFirst().filter { $0.value == value }
    }

    /// The version of the winner: the greatest this field holds, and the base of its next edit.
    @inlinable public var version: Version? { candidates.first?.version }

    @inlinable public var isEmpty: Bool { candidates.isEmpty }

    /// The state that holds what both hold (see the type's summary).
    public func joined(with other: Self) -> Self {
        if other.candidates.isEmpty || other == self { return self }
        if candidates.isEmpty { return other }
        var merged = self
        merged.candidates = Self.maximal(candidates + other.candidates)
        return merged
    }

    /// Sets the field by a local edit stamped `version`. The new candidate's base is the
    /// greatest version the field holds, so it dominates every candidate, conflicts included:
    /// any edit of a field resolves its conflicts.
    ///
    /// Throws when `version` is not above that base: the node's clock must stamp every edit
    /// above what it has seen.
    public mutating func set(_ value: Value, at version: Version) throws(FieldMergeError) {
        let base = self.version
        if let base, !(base < version) { throw .staleEdit(version: version, seen: base) }
        candidates = [FieldCandidate(checked: value, version: version, base: base)]
    }

    /// The maximal elements: one candidate per version (the strongest), then those no other
    /// candidate dominates, sorted by version, greatest first.
    static func maximal(_ all: [FieldCandidate<Value>]) -> [FieldCandidate<Value>] {
        if all.count < 2 { return all }
        var byVersion = all.sorted { $0.version > $1.version }
        var unique: [FieldCandidate<Value>] = []
        unique.reserveCapacity(byVersion.count)
        for candidate in byVersion {
            if let last = unique.last, last.version == candidate.version {
                if last.isOutranked(bySameVersion: candidate) { unique[unique.count - 1] = candidate }
            } else {
                unique.append(candidate)
            }
        }
        // Dominated only by a greater version (a base lies below its version): compare each
        // with those before it, which are the only ones that can dominate it.
        byVersion.removeAll(keepingCapacity: true)
        for candidate in unique where !byVersion.contains(where: { candidate.isDominated(by: $0) }) {
            byVersion.append(candidate)
        }
        return byVersion
    }
}

/// What the merge refuses.
public enum FieldMergeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A local edit stamped at or below a version its node already holds.
    case staleEdit(version: Version, seen: Version)
    /// Two states of different items.
    case differentKeys(ItemKey, ItemKey)
    /// A received state that breaks a rule.
    case malformed(String)

    public var description: String {
        switch self {
        case .staleEdit(let version, let seen):
            "an edit stamped \(version) is not newer than the version \(seen) it replaces"
        case .differentKeys(let one, let other): "cannot merge item \(one) with item \(other)"
        case .malformed(let reason): "malformed field versions: \(reason)"
        }
    }
}
