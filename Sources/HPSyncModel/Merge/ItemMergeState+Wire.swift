/// One candidate of any field, as the wire lists an open conflict and the merge digest lists
/// every candidate (Protocol.md 5.9).
public struct ListedCandidate: Hashable, Sendable {
    public var field: ItemField
    public var content: FieldContent
    public var version: Version
    public var base: Version?

    public init(field: ItemField, content: FieldContent, version: Version, base: Version?) {
        self.field = field
        self.content = content
        self.version = version
        self.base = base
    }
}

extension ItemMergeState {
    /// Every candidate of every field, field by field in `ItemField` order, each field's
    /// greatest version first: what the merge digest hashes (`digestInput` writes the same
    /// without building this list).
    public var listedCandidates: [ListedCandidate] { listed(conflictsOnly: false) }

    /// The open conflicts as a Record lists them: field by field in `ItemField` order, each
    /// field's greatest version first.
    public var listedConflicts: [ListedCandidate] { listed(conflictsOnly: true) }

    private func listed(conflictsOnly: Bool) -> [ListedCandidate] {
        var result: [ListedCandidate] = []
        func list<Value>(_ field: ItemField, _ state: FieldState<Value>, _ content: (Value) -> FieldContent) {
            // Most fields have no conflict: no slice of them made.
            if conflictsOnly && state.candidates.count < 2 { return }
            for candidate in conflictsOnly ? state.conflicts : state.candidates {
                result.append(
                    ListedCandidate(
                        field: field, content: content(candidate.value), version: candidate.version,
                        base: candidate.base))
            }
        }
        list(.name, name) { .text($0) }
        list(.serialNumber, serialNumber) { .optionalText($0) }
        list(.valueInDollars, valueInDollars) { .integer($0) }
        list(.dateCreated, dateCreated) { .integer($0) }
        list(.photo, photo) { .photo($0) }
        return result
    }

    /// The bytes the merge digest hashes (Protocol.md 5.9): per field in `ItemField` order the
    /// number of candidates (4 bytes), then each candidate, greatest version first: version,
    /// base (a 0 byte when unknown, else 1 and the version), value. The deletion is left out:
    /// a deleted item's is its version, which the manifest entry says. A version is its stamp (8 bytes) and origin (32); integers
    /// are big-endian; a text is its UTF-8 length (4 bytes) and bytes; an absent serial number
    /// or photo is a 0 byte, a present one 1 and its text, or its digest and size (8 bytes).
    public var digestInput: [UInt8] {
        // Written from the fields themselves, not through `listedCandidates`: a source hashes
        // every edited item of a manifest page.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(320)
        func integer<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.bigEndian) { bytes += $0 } }
        func version(_ version: Version) {
            integer(version.stamp.rawValue)
            bytes += version.origin.bytes
        }
        func text(_ text: String) {
            integer(UInt32(text.utf8.count))
            bytes += text.utf8
        }
        func field<Value>(_ state: FieldState<Value>, _ value: (Value) -> Void) {
            integer(UInt32(state.candidates.count))
            for candidate in state.candidates {
                version(candidate.version)
                if let base = candidate.base {
                    bytes.append(1)
                    version(base)
                } else {
                    bytes.append(0)
                }
                value(candidate.value)
            }
        }
        field(name) { text($0) }
        field(serialNumber) { value in
            bytes.append(value == nil ? 0 : 1)
            if let value { text(value) }
        }
        field(valueInDollars) { integer($0) }
        field(dateCreated) { integer($0) }
        field(photo) { ref in
            bytes.append(ref == nil ? 0 : 1)
            if let ref {
                bytes += ref.digest.bytes
                integer(ref.size)
            }
        }
        return bytes
    }
}
