import Foundation
import HPSyncTesting
import Testing

@testable import HPSyncModel
@testable import HPSyncStore

@Suite("Keys are validated wherever they enter")
struct KeySafetyTests {
    @Test(arguments: [
        "../../etc/passwd", "", "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC0", "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC045",
        "4A73B5D2A6F44B409F82EA1E34C1DC04", "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC0G",
        "4A73B5D2/A6F4-4B40-9F82-EA1E34C1DC04", "4A73B5D2A-6F4-4B40-9F82-EA1E34C1DC04",
        "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC:4", "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC@4",
        "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DCG4", "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC\u{E9}",
        "4A73B5D2-A6F4-4B40-9F82 EA1E34C1DC04", "-A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04",
    ])
    func malformedKeysAreRejected(text: String) {
        #expect(throws: ItemKeyError.self) { try ItemKey(text) }
    }

    @Test func lowercaseIsNormalised() throws {
        let key = try ItemKey("4a73b5d2-a6f4-4b40-9f82-ea1e34c1dc04")
        #expect(key.rawValue == "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04")
        #expect(try ItemKey("4A73B5D2-a6f4-4B40-9F82-EA1E34C1DC04") == key)
    }

    /// Canonical text is taken as it is (no copy made): the same key as by the long way.
    @Test func canonicalTextIsKeptAsItIs() throws {
        for _ in 0..<100 {
            let text = ItemKey.random().rawValue
            #expect(ItemKey.isCanonical(text))
            #expect(try ItemKey(text).rawValue == text)
            #expect(ItemKey.canonicalize(text) == text)
            #expect(!ItemKey.isCanonical(text.lowercased()))
        }
    }

    /// Equality, hashing and order go by the key's bits: they must agree with the text, the
    /// way a key is made (validated, normalised from lowercase, read back from the store) aside.
    @Test func equalityHashAndOrderAgreeWithTheText() throws {
        var generator = SystemRandomNumberGenerator()
        // Keys that share long prefixes and differ in either half, in the last digit, or only in
        // digits a text order puts around the hyphens.
        var texts = (0..<200).map { _ in ItemKey.random(using: &generator).rawValue }
        texts += [
            "00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000001",
            "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF", "7FFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF",
            "80000000-0000-4000-8000-000000000000", "0000000A-0000-4000-8000-000000000000",
            "00000009-0000-4000-8000-000000000000", "00000000-0000-4000-9000-000000000000",
            "00000000-0000-4000-8FFF-FFFFFFFFFFFF",
        ]
        let keys = try texts.map { try ItemKey($0) }
        for (a, textA) in zip(keys, texts) {
            let lower = try ItemKey(textA.lowercased())
            #expect(lower == a && lower.hashValue == a.hashValue)
            #expect(ItemKey(storedCanonical: textA) == a && ItemKey(storedCanonical: textA).hashValue == a.hashValue)
            for (b, textB) in zip(keys, texts) {
                #expect((a == b) == (textA == textB), "\(textA) == \(textB)")
                #expect((a < b) == (textA < textB), "\(textA) < \(textB)")
            }
        }
        #expect(Set(keys).count == Set(texts).count)
        #expect(keys.sorted().map(\.rawValue) == texts.sorted())
    }

    @Test func resolveRejectsTraversalAndShortPrefixes() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        #expect(throws: StoreError.invalidKey("../../etc/passwd")) { try store.resolve(prefix: "../../etc/passwd") }
        #expect(throws: StoreError.prefixTooShort("ab")) { try store.resolve(prefix: "ab") }
        #expect(throws: StoreError.unknownKey("ABCD")) { try store.resolve(prefix: "ABCD") }
    }

    @Test func ambiguousPrefixListsCandidates() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let a = try store.add(ItemDraft(key: try ItemKey("ABCD0000-0000-4000-8000-000000000001"), name: "a")).key
        let b = try store.add(ItemDraft(key: try ItemKey("ABCD0000-0000-4000-8000-000000000002"), name: "b")).key
        #expect(throws: StoreError.ambiguousPrefix("abcd", candidates: [a, b])) { try store.resolve(prefix: "abcd") }
        #expect(try store.resolve(prefix: "abcd0000-0000-4000-8000-000000000002") == b)
        _ = try store.delete([b])
        #expect(try store.resolve(prefix: "abcd") == a)
    }
}
