import Foundation
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

    /// Protocol.md 10, "A field-merge record": an item made whole by node 04…04 at 1,000 ms and
    /// renamed by node 05…05 at 2,000 ms, as its fields bytes, its digest input and its merge
    /// digest, byte for byte as the section shows them.
    @Test func theWorkedExampleOfProtocolMdHolds() throws {
        let maker = try #require(NodeID(bytes: [UInt8](repeating: 4, count: 32)))
        let renamer = try #require(NodeID(bytes: [UInt8](repeating: 5, count: 32)))
        let made = Version(stamp: VersionStamp(milliseconds: 1_000), origin: maker)
        let renamed = Version(stamp: VersionStamp(milliseconds: 2_000), origin: renamer)
        var state = ItemMergeState(
            record: Item(
                key: try ItemKey("6F9619FF-8B86-4011-B42D-00C04FC964FF"), name: "Lamp", serialNumber: "SN-1",
                valueInDollars: 25, dateCreatedMilliseconds: 1_000, version: made))
        try state.apply(FieldEdit(name: "Desk lamp"), at: renamed)
        let fields = try #require(MergeFields(state, joined: false))
        func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(fields.body) == Self.exampleFields)
        #expect(hex(state.digestInput) == Self.exampleDigestInput)
        #expect(state.mergeDigest == Self.exampleDigest)
        #expect(try fields.state(of: state.item) == state)
    }

    static let exampleFields =
        "010404040404040404040404040404040404040404040404040404040404040404010000e803000000000102000100010001000100"
    static let exampleDigestInput =
        "000000010000000007d000000505050505050505050505050505050505050505050505050505050505050505010000000003e800000404040404040404040404040404040404040404040404040404040404040404000000094465736b206c616d70000000010000000003e800000404040404040404040404040404040404040404040404040404040404040404000100000004534e2d31000000010000000003e800000404040404040404040404040404040404040404040404040404040404040404000000000000000019000000010000000003e8000004040404040404040404040404040404040404040404040404040404040404040000000000000003e8000000010000000003e8000004040404040404040404040404040404040404040404040404040404040404040000"
    static let exampleDigest: UInt64 = 0x64b4_42f1_0da5_9b52
}
