import Foundation
import HPSyncModel
import Testing

@testable import HPSyncCrypto

@Suite struct NodeIDTests {
    @Test func roundTripsThroughText() throws {
        let id = NodeID(certificateDER: Array("certificate".utf8))
        let text = id.description
        #expect(text.count == 63)
        #expect(text.split(separator: "-").count == 8)
        #expect(try NodeID(parsing: text) == id)
        #expect(try NodeID(parsing: text.lowercased().replacingOccurrences(of: "-", with: " ")) == id)
    }

    /// The test vector in Protocol.md §2, also produced by the independent Python client.
    @Test func matchesTheSpecificationsTestVector() throws {
        let id = try #require(NodeID(bytes: Array(0..<32)))
        #expect(id.description == "AAAQEAY-EAUDAOB-CAJBIFQ-YDIOB4B-IBCEQTC-QKRMFYX-YDENBWH-A5DYPQG")
    }

    /// The merge rule's tie-break: nodes order by their bytes, the first byte that differs
    /// deciding, as unsigned values; a node is never below itself, even as another copy.
    @Test func ordersByTheFirstDifferingByte() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<2_000 {
            let left = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var right = left
            // Differ at one position (or nowhere, every tenth round), high bytes included.
            if round % 10 != 0 { right[Int.random(in: 0..<32)] = UInt8.random(in: 0...255) }
            let one = try #require(NodeID(bytes: left))
            let other = try #require(NodeID(bytes: right))
            #expect((one < other) == left.lexicographicallyPrecedes(right))
            #expect((other < one) == right.lexicographicallyPrecedes(left))
            #expect(!(one < NodeID(bytes: left)!))
        }
        let low = try #require(NodeID(bytes: [0x7F] + Array(repeating: 0xFF, count: 31)))
        let high = try #require(NodeID(bytes: [0x80] + Array(repeating: 0, count: 31)))
        #expect(low < high)
        #expect(!(high < low))
    }

    @Test func rejectsTypos() throws {
        let text = NodeID(certificateDER: [1, 2, 3]).description
        var chars = Array(text)
        chars[2] = chars[2] == "A" ? "B" : "A"
        #expect(throws: NodeIDError.checkFailed) { try NodeID(parsing: String(chars)) }
        #expect(throws: NodeIDError.wrongLength(55)) { try NodeID(parsing: String(text.dropLast())) }
        #expect(throws: NodeIDError.invalidCharacter("/")) { try NodeID(parsing: "/" + text) }
    }

    @Test func sha256MatchesKnownVector() {
        #expect(
            SHA256.hash(Array("abc".utf8)).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var hasher = SHA256()
        hasher.update(Array("a".utf8))
        hasher.update(Array("bc".utf8))
        #expect(hasher.finalize() == SHA256.hash(Array("abc".utf8)))
    }
}
