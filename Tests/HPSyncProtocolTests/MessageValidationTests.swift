import Foundation
import HPSyncCrypto
import HPSyncModel
import SwiftProtobuf
import Testing

@testable import HPSyncProtocol

@Suite struct MessageValidationTests {
    func decode(_ body: Hpsync_V1_Envelope.OneOf_Body) throws -> HPSyncProtocol.Message {
        var envelope = Hpsync_V1_Envelope()
        envelope.body = body
        let bytes: [UInt8] = try envelope.serializedBytes()
        return try HPSyncProtocol.Message(decoding: bytes)
    }

    func record(key: String = "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04") -> Hpsync_V1_Record {
        var record = Hpsync_V1_Record()
        record.key = key
        record.name = "Lamp"
        record.origin = Data(repeating: 1, count: 32)
        record.stamp = 1
        return record
    }

    @Test(arguments: [
        "../../etc/passwd", "", "4A73B5D2A6F44B409F82EA1E34C1DC04", "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC0/",
    ])
    func malformedKeysAreRejected(_ key: String) {
        var records = Hpsync_V1_Records()
        records.records = [record(key: key)]
        #expect(throws: ProtocolError.self) { try decode(.records(records)) }
        var fetch = Hpsync_V1_FetchRecords()
        fetch.keys = [key]
        #expect(throws: ProtocolError.self) { try decode(.fetchRecords(fetch)) }
    }

    @Test func pageDoneCannotCallMoreDurableThanItAcknowledges() throws {
        var done = Hpsync_V1_PageDone()
        done.throughSeq = 5
        done.durableSeq = 6
        // Protocol.md 4.8: a contradiction between the fields is ERROR_PROTOCOL, not ERROR_BAD_DATA.
        #expect {
            try decode(.pageDone(done))
        } throws: { error in
            (error as? ProtocolError)?.code == .protocolViolation
        }
        done.durableSeq = 5
        guard case .pageDone(let through, _, let durable, _, _) = try decode(.pageDone(done)) else {
            Issue.record("not PageDone")
            return
        }
        #expect(through == 5 && durable == 5)
    }

    @Test func lowercaseKeysAreNormalised() throws {
        var records = Hpsync_V1_Records()
        records.records = [record(key: "4a73b5d2-a6f4-4b40-9f82-ea1e34c1dc04")]
        guard case .records(let items) = try decode(.records(records)) else { Issue.record("not records"); return }
        #expect(items.first?.key.rawValue == "4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04")
    }

    @Test func oversizedFieldsAreRejected() {
        var long = record()
        long.name = String(repeating: "x", count: 1025)
        var records = Hpsync_V1_Records()
        records.records = [long]
        #expect(throws: ProtocolError.self) { try decode(.records(records)) }

        var badDigest = record()
        badDigest.imageSha256 = Data(repeating: 0, count: 31)
        badDigest.imageSize = 5
        records.records = [badDigest]
        #expect(throws: ProtocolError.self) { try decode(.records(records)) }

        var noDigestButSize = record()
        noDigestButSize.imageSize = 5
        records.records = [noDigestButSize]
        #expect(throws: ProtocolError.self) { try decode(.records(records)) }
    }

    /// A peer's value outside a signed 32-bit integer's range (2^63 - 1 once took down every node's web
    /// app) is ERROR_BAD_DATA naming the key; the range's ends come in.
    @Test(arguments: [Int64.max, .min, 2_147_483_648, -2_147_483_649])
    func valuesOutsideTheRangeAreBadDataNamingTheKey(_ value: Int64) throws {
        var records = Hpsync_V1_Records()
        records.records = [record()]
        records.records[0].valueInDollars = value
        let error = try #require(throws: ProtocolError.self) { try decode(.records(records)) }
        #expect(error.code == .badData)
        #expect("\(error)".contains("4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04") && "\(error)".contains("\(value)"))
        for edge in [ItemLimits.valueInDollars.upperBound, ItemLimits.valueInDollars.lowerBound] {
            records.records[0].valueInDollars = edge
            guard case .records(let items) = try decode(.records(records)) else {
                Issue.record("not records")
                return
            }
            #expect(items.first?.valueInDollars == edge)
        }
    }

    @Test func tooManyEntriesAreRejected() {
        var fetch = Hpsync_V1_FetchRecords()
        fetch.keys = (0...ProtocolLimits.maxRecordsPerBatch).map { _ in ItemKey.random().rawValue }
        #expect(throws: ProtocolError.tooMany(message: "FetchRecords", field: "keys", count: 1025, limit: 1024)) {
            try decode(.fetchRecords(fetch))
        }
    }

    @Test func manifestSeqMustAscend() {
        var page = Hpsync_V1_ManifestPage()
        var entry = Hpsync_V1_ManifestEntry()
        entry.key = ItemKey.random().rawValue
        entry.origin = Data(repeating: 2, count: 32)
        entry.seq = 5
        var second = entry
        second.key = ItemKey.random().rawValue
        second.seq = 5
        page.entries = [entry, second]
        page.throughSeq = 10
        #expect(throws: ProtocolError.self) { try decode(.manifestPage(page)) }
        page.entries = [entry]
        page.throughSeq = 4
        #expect(throws: ProtocolError.self) { try decode(.manifestPage(page)) }
    }

    /// A valid version-1 pull Hello.
    static var hello: Hpsync_V1_Hello {
        var hello = Hpsync_V1_Hello()
        hello.minVersion = 1
        hello.maxVersion = 1
        hello.nodeID = Data(repeating: 1, count: 32)
        hello.storeID = Data(repeating: 2, count: 16)
        hello.intent = .pull
        return hello
    }

    @Test func helloNeedsSaneVersionsAndIDs() {
        let hello = Self.hello
        #expect((try? decode(.hello(hello))) != nil)
        var bad = hello
        bad.minVersion = 0
        #expect(throws: ProtocolError.self) { try decode(.hello(bad)) }
        bad = hello
        bad.minVersion = 3
        #expect(throws: ProtocolError.self) { try decode(.hello(bad)) }
        bad = hello
        bad.nodeID = Data(repeating: 1, count: 31)
        #expect(throws: ProtocolError.self) { try decode(.hello(bad)) }
        bad = hello
        bad.intent = .unspecified
        #expect(throws: ProtocolError.self) { try decode(.hello(bad)) }
    }

    /// Protocol.md 4.1 names a code for each way a Hello can be malformed.
    @Test func eachMalformedHelloHasItsCode() {
        let hello = Self.hello
        func code(_ change: (inout Hpsync_V1_Hello) -> Void) -> WireErrorCode? {
            var bad = hello
            change(&bad)
            do {
                _ = try decode(.hello(bad))
                return nil
            } catch {
                return (error as? ProtocolError)?.code
            }
        }
        #expect(code { $0.minVersion = 0 } == .protocolViolation)
        #expect(code { $0.minVersion = 3 } == .protocolViolation)  // min > max
        #expect(code { $0.intent = .unspecified } == .protocolViolation)
        #expect(code { $0.intent = .UNRECOGNIZED(9) } == .incompatibleVersion)
        #expect(code { $0.nodeID = Data(repeating: 1, count: 31) } == .badData)
        #expect(code { $0.storeID = Data(repeating: 1, count: 15) } == .badData)
        #expect(code { $0.software = String(repeating: "x", count: 257) } == .badData)
    }

    @Test func seqAbove63BitsIsRejected() {
        var request = Hpsync_V1_PullRequest()
        request.sinceSeq = UInt64.max
        #expect(throws: ProtocolError.self) { try decode(.pullRequest(request)) }
    }
}
