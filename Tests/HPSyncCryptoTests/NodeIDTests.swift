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
