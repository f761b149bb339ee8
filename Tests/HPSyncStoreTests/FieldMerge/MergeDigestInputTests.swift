import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

/// `digestInput` is written straight from the fields; these are the bytes Protocol.md 5.9
/// states, built here from the wire's listing of the candidates as the text says.
struct MergeDigestInputTests {
    static func stated(_ state: ItemMergeState) -> [UInt8] {
        var bytes: [UInt8] = []
        func integer<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.bigEndian) { bytes += $0 } }
        func version(_ version: Version) {
            integer(version.stamp.rawValue)
            bytes += version.origin.bytes
        }
        func text(_ text: String) {
            integer(UInt32(text.utf8.count))
            bytes += text.utf8
        }
        for field in ItemField.allCases {
            let listed = state.listedCandidates.filter { $0.field == field }
            integer(UInt32(listed.count))
            for candidate in listed {
                version(candidate.version)
                if let base = candidate.base {
                    bytes.append(1)
                    version(base)
                } else {
                    bytes.append(0)
                }
                switch candidate.content {
                case .text(let value): text(value)
                case .optionalText(let value):
                    bytes.append(value == nil ? 0 : 1)
                    if let value { text(value) }
                case .integer(let value): integer(value)
                case .photo(let ref):
                    bytes.append(ref == nil ? 0 : 1)
                    if let ref {
                        bytes += ref.digest.bytes
                        integer(ref.size)
                    }
                }
            }
        }
        return bytes
    }

    @Test func theBytesAreThoseProtocolMdStates() throws {
        let (laptop, desktop) = (Fixtures.nodeA, Fixtures.nodeB)
        func at(_ milliseconds: UInt64, _ node: NodeID) -> Version {
            Version(stamp: VersionStamp(milliseconds: milliseconds), origin: node)
        }
        let photo = ImageRef(digest: SHA256Digest(bytes: [UInt8](repeating: 7, count: 32))!, size: 1_234)
        let whole = ItemMergeState(
            record: Item(
                key: .random(), name: "Lamp", serialNumber: "SN-1", valueInDollars: -3, dateCreatedMilliseconds: 9,
                image: photo, version: at(1_000, laptop)))
        var one = whole
        var other = whole
        try one.apply(FieldEdit(name: "Sofá 🛋️", serialNumber: .some(nil)), at: at(2_000, laptop))
        try other.apply(FieldEdit(name: "", valueInDollars: 7, photo: .some(nil)), at: at(1_500, desktop))
        var deleted = try one.joined(with: other)
        try deleted.delete(at: at(3_000, desktop))
        for state in [whole, one, other, try one.joined(with: other), deleted] {
            #expect(state.digestInput == Self.stated(state), "\(state)")
        }
    }
}
