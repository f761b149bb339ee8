import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncCrypto

@Suite struct InventoryKeyTests {
    /// The key 00 01 02 ... 1f and its recovery text, computed outside hp-sync (see SealingTests).
    private let countingKey = try! InventoryKey(bytes: Array(0..<32))
    private let countingText = "hpk1-000g4-0r40m-30e20-9185g-r38e1-w8124-gk2ga-hc5rr-34d1p-70x3r-fp638"

    private func reason(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func keysAreThirtyTwoRandomBytes() throws {
        let key = InventoryKey.random()
        #expect(key.bytes.count == 32)
        #expect(key != InventoryKey.random())
        #expect(try InventoryKey(bytes: key.bytes) == key)
        #expect(throws: SealingError.self) { try InventoryKey(bytes: Array(repeating: 1, count: 31)) }
        #expect(throws: SealingError.self) { try InventoryKey(bytes: Array(repeating: 1, count: 33)) }
    }

    @Test func recoveryTextHasItsDocumentedForm() {
        #expect(countingKey.recoveryText == countingText)
        let text = InventoryKey.random().recoveryText
        #expect(text.hasPrefix("hpk1-"))
        let groups = text.dropFirst(5).split(separator: "-")
        #expect(groups.count == 11)
        #expect(groups.allSatisfy { $0.count == 5 })
        #expect(text.allSatisfy { "0123456789abcdefghjkmnpqrstvwxyz-".contains($0) })
    }

    @Test func recoveryTextRoundTrips() throws {
        #expect(try InventoryKey(recoveryText: countingText) == countingKey)
        for _ in 0..<200 {
            let key = InventoryKey.random()
            #expect(try InventoryKey(recoveryText: key.recoveryText) == key)
        }
    }

    @Test func recoveryTextIsReadAsPeopleTypeIt() throws {
        let bare = String(countingText.dropFirst(5))
        let variants = [
            countingText.uppercased(),
            bare,
            bare.replacingOccurrences(of: "-", with: ""),
            bare.replacingOccurrences(of: "-", with: " "),
            "  HPK1 " + bare.replacingOccurrences(of: "-", with: "\n") + "\n",
            "hpk1" + bare.replacingOccurrences(of: "-", with: "\r\n\t"),
            countingText.replacingOccurrences(of: "0", with: "o"),
            countingText.replacingOccurrences(of: "0", with: "O"),
            countingText.replacingOccurrences(of: "1", with: "i"),
            countingText.replacingOccurrences(of: "1", with: "l"),
            countingText.replacingOccurrences(of: "1", with: "L"),
        ]
        for variant in variants {
            #expect(try InventoryKey(recoveryText: variant) == countingKey, "\(variant)")
        }
    }

    @Test func aKeyWhoseTextStartsWithThePrefixReadsWithoutIt() throws {
        // h p k 1 = 17 22 19 1: the key's first 20 bits spell the prefix.
        let key = try InventoryKey(bytes: [0x8D, 0xA6, 0x10] + Array(repeating: 0x55, count: 29))
        #expect(key.recoveryText.hasPrefix("hpk1-hpk1"))
        #expect(try InventoryKey(recoveryText: String(key.recoveryText.dropFirst(5))) == key)
        #expect(try InventoryKey(recoveryText: key.recoveryText) == key)
    }

    @Test func everySingleCharacterTypoIsRefused() throws {
        let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz")
        let keys = [countingKey, try InventoryKey(bytes: SHA256.hash(Array("typo".utf8)).bytes)]
        var accepted: [String] = []
        var tried = 0
        for key in keys {
            let symbols = Array(key.recoveryText.dropFirst(5).filter { $0 != "-" })
            #expect(symbols.count == 55)
            for position in symbols.indices {
                for replacement in alphabet where replacement != symbols[position] {
                    var typo = symbols
                    typo[position] = replacement
                    tried += 1
                    do {
                        _ = try InventoryKey(recoveryText: String(typo))
                        accepted.append(String(typo))
                    } catch {
                        guard case .badRecoveryKey = error else {
                            accepted.append("wrong error: \(error)")
                            continue
                        }
                    }
                }
            }
        }
        #expect(tried == 2 * 55 * 31)
        #expect(accepted.isEmpty)
    }

    @Test func refusalsNameTheProblem() throws {
        let bare = String(countingText.dropFirst(5).filter { $0 != "-" })
        let checksum = reason { _ = try InventoryKey(recoveryText: String(bare.dropLast(2)) + "00") }
        #expect(checksum?.contains("checksum") == true)
        #expect(checksum?.contains("check for a typo") == true)

        let short = reason { _ = try InventoryKey(recoveryText: String(bare.dropLast())) }
        #expect(short?.contains("54 characters") == true)
        let long = reason { _ = try InventoryKey(recoveryText: bare + "0") }
        #expect(long?.contains("56 characters") == true)
        #expect(reason { _ = try InventoryKey(recoveryText: "") }?.contains("0 characters") == true)
        #expect(reason { _ = try InventoryKey(recoveryText: "hpk1-") }?.contains("0 characters") == true)

        let letterU = reason { _ = try InventoryKey(recoveryText: "u" + bare.dropFirst()) }
        #expect(letterU?.contains("'u' (character 1") == true)
        let punctuation = reason { _ = try InventoryKey(recoveryText: "hpk1-" + bare.dropLast() + "!") }
        #expect(punctuation?.contains("'!' (character 55") == true)
        #expect(reason { _ = try InventoryKey(recoveryText: bare.dropLast() + "é") }?.contains("'é'") == true)

        // The last character carries 2 bits of the checksum and 3 zero bits.
        let lastBits = reason { _ = try InventoryKey(recoveryText: String(bare.dropLast()) + "9") }
        #expect(lastBits?.contains("last character") == true)
    }

    @Test func fingerprintIsKeyedAndShort() throws {
        #expect(countingKey.fingerprint == "7f97a4f9b49356c3")
        let key = InventoryKey.random()
        #expect(key.fingerprint.count == 16)
        #expect(key.fingerprint != InventoryKey.random().fingerprint)
        #expect(try InventoryKey(recoveryText: key.recoveryText).fingerprint == key.fingerprint)
    }

    @Test func descriptionShowsNoKeyMaterial() {
        let key = InventoryKey.random()
        let texts = ["\(key)", String(reflecting: key), "\(BlindKeys(key))"]
        let symbols = key.recoveryText.dropFirst(5).split(separator: "-")
        for text in texts {
            #expect(!symbols.contains { text.contains($0) })
            #expect(!text.contains(key.bytes.hex.prefix(8)))
        }
        #expect("\(key)".contains(key.fingerprint))
    }

    // MARK: - Files

    private func mode(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
    }

    @Test func writesAPrivateFileAndReadsItBack() throws {
        let folder = try temporaryDirectory("inventory-key")
        let url = folder.appendingPathComponent("inventory.key")
        #expect(try InventoryKey.read(from: url) == nil)
        let key = InventoryKey.random()
        try key.write(to: url)
        #expect(try mode(url) == 0o600)
        #expect(try String(contentsOf: url, encoding: .utf8) == key.recoveryText + "\n")
        #expect(try InventoryKey.read(from: url) == key)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["inventory.key"])
    }

    @Test func neverReplacesAKeyFile() throws {
        let url = try temporaryDirectory("inventory-key").appendingPathComponent("inventory.key")
        let first = InventoryKey.random()
        try first.write(to: url)
        #expect {
            try InventoryKey.random().write(to: url)
        } throws: { error in
            guard let error = error as? SealingError, case .keyFileExists(let path) = error else { return false }
            return path == url.path && "\(error)".contains("refusing to replace")
        }
        #expect(throws: SealingError.keyFileExists(path: url.path)) { try first.write(to: url) }
        #expect(try InventoryKey.read(from: url) == first)
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path).count == 1)
    }

    @Test func refusesAKeyFileOthersCanRead() throws {
        let url = try temporaryDirectory("inventory-key").appendingPathComponent("inventory.key")
        try InventoryKey.random().write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        #expect {
            try InventoryKey.read(from: url)
        } throws: { error in
            guard case TLSError.insecureKeyPermissions(let path, _) = error else { return false }
            return path == url.path
        }
    }

    @Test func refusesAFileThatHoldsNoKey() throws {
        let url = try temporaryDirectory("inventory-key").appendingPathComponent("inventory.key")
        _ = FileManager.default.createFile(
            atPath: url.path, contents: Data("not a key\n".utf8), attributes: [.posixPermissions: 0o600])
        #expect {
            try InventoryKey.read(from: url)
        } throws: { error in
            guard let error = error as? SealingError, case .invalidKeyFile(let path, _) = error else { return false }
            return path == url.path && "\(error)".contains("unusable")
        }
    }
}
