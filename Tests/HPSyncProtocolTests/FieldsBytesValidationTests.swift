import Foundation
import HPSyncModel
import SwiftProtobuf
import Testing

@testable import HPSyncProtocol

/// Version 5's fields bytes (Protocol.md 5.9 "The fields bytes"): what a sender writes comes
/// back as the same state, and a receiver refuses each thing the section says it refuses.
@Suite struct FieldsBytesValidationTests {
    static let laptop = NodeID(bytes: [UInt8](repeating: 1, count: 32))!
    static let desktop = NodeID(bytes: [UInt8](repeating: 2, count: 32))!

    static func at(_ stamp: UInt64, _ node: NodeID) -> HPSyncModel.Version {
        HPSyncModel.Version(stamp: VersionStamp(rawValue: stamp), origin: node)
    }

    /// A guitar made at 1 on the desktop, renamed and revalued at 2 on the laptop.
    static func edited() throws -> ItemMergeState {
        var state = ItemMergeState(
            record: Item(
                key: .random(), name: "Guitar", serialNumber: "SN-7", valueInDollars: 900,
                dateCreatedMilliseconds: 5, version: at(1, desktop)))
        try state.apply(FieldEdit(name: "Old guitar", valueInDollars: 800), at: at(2, laptop))
        return state
    }

    /// The edited guitar, deleted at 3: the tombstone keeps every field's value.
    static func deleted() throws -> ItemMergeState {
        var state = try edited()
        try state.delete(at: at(3, desktop))
        return state
    }

    /// The guitar renamed at 2 on the laptop and at 3 on the desktop: an open conflict.
    static func clash() throws -> ItemMergeState {
        var one = try edited()
        var other = ItemMergeState(
            record: Item(
                key: one.key, name: "Guitar", serialNumber: "SN-7",
                valueInDollars: 900, dateCreatedMilliseconds: 5, version: at(1, desktop)))
        try other.apply(FieldEdit(name: "Bass"), at: at(3, desktop))
        one = try one.joined(with: other)
        return one
    }

    /// The Record a sender writes for `state`.
    static func wire(_ state: ItemMergeState) throws -> Hpsync_V1_Record {
        var item = state.item
        item.mergeState = state
        let envelope = try Hpsync_V1_Envelope(serializedBytes: Message.records([item]).serializedEnvelope())
        guard case .records(let records) = envelope.body, let record = records.records.first else {
            throw FieldMergeError.malformed("not a Records message")
        }
        return record
    }

    static func decode(_ record: Hpsync_V1_Record) throws -> Item {
        var records = Hpsync_V1_Records()
        records.records = [record]
        var envelope = Hpsync_V1_Envelope()
        envelope.body = .records(records)
        guard case .records(let items) = try Message(decoding: try envelope.serializedBytes() as [UInt8]) else {
            throw FieldMergeError.malformed("not records")
        }
        return items[0]
    }

    @Test func aSendersStatesComeBackUnchanged() throws {
        for state in [try Self.edited(), try Self.deleted(), try Self.clash()] {
            let record = try Self.wire(state)
            #expect(!record.fields.isEmpty)
            let item = try Self.decode(record)
            #expect(item.mergeState == state)
            #expect(item.version == state.version)
        }
        // An edit of two fields: one other origin, one other version, five entries.
        #expect(try Self.wire(Self.edited()).fields.count == 1 + 32 + 1 + 9 + 5 * 2)
        #expect(try Self.wire(Self.clash()).conflicts.count == 1)
        // A whole record travels without fields bytes.
        let whole = try Self.wire(ItemMergeState(record: Self.edited().item))
        #expect(whole.fields.isEmpty && whole.conflicts.isEmpty)
    }

    /// The bytes Protocol.md 5.9 "The fields bytes" states, written here by hand from the text
    /// for the deleted guitar (record version 3 on the desktop): an outsider's encoder agrees.
    @Test func aTombstonesBytesAreThoseProtocolMdStates() throws {
        func u64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func text(_ value: String) -> [UInt8] { u64(UInt64(value.utf8.count)) + Array(value.utf8) }
        var stated: [UInt8] = [1] + Self.laptop.bytes  // the origin table: the laptop (index 1)
        stated += [2] + u64(2) + [1] + u64(1) + [0]  // versions: 0 = 2 on the laptop, 1 = 1 on the desktop
        stated += [1 | 2 | 8, 0, 1] + text("Old guitar")  // name: edited at 2, base 1, its value
        stated += [1 | 8, 1] + [1] + text("SN-7")  // serial number: at 1, base unknown, present
        stated += [1 | 2 | 8, 0, 1] + u64(UInt64(bitPattern: 800))  // value
        stated += [1 | 8, 1] + u64(5)  // date created
        stated += [1 | 8, 1, 0]  // photo: at 1, none
        let record = try Self.wire(Self.deleted())
        #expect(Array(record.fields) == stated)
        #expect(record.deleted && record.stamp == 3 && record.origin == Data(Self.desktop.bytes))
    }

    /// Each mutation breaks one rule of the section; each must be refused as bad data.
    @Test func eachBrokenRuleIsRefused() throws {
        let edited = try Self.wire(Self.edited())
        let deleted = try Self.wire(Self.deleted())
        let clash = try Self.wire(Self.clash())
        // edited's bytes: [1] origin B (32) [1] version (stamp 1: 8, origin index 1), then
        // name 2 0, serial 1 0, value 2 0, date 1 0, photo 1 0.
        let entries = 1 + 32 + 1 + 9
        // deleted's: [1] origin A [2] versions (2 on A, 1 on B: the record's origin), then
        // name 1|2|8, its two indexes and its value, ...
        let deletedEntries = 1 + 32 + 1 + 2 * 9
        #expect(deleted.fields[deletedEntries] == 1 | 2 | 8)
        #expect(Array(edited.fields.suffix(10)) == [2, 0, 1, 0, 2, 0, 1, 0, 1, 0])
        func changed(_ record: Hpsync_V1_Record, _ change: (inout Hpsync_V1_Record) -> Void) -> Hpsync_V1_Record {
            var copy = record
            change(&copy)
            return copy
        }
        func bytes(_ record: Hpsync_V1_Record, _ change: (inout [UInt8]) -> Void) -> Hpsync_V1_Record {
            changed(record) {
                var bytes = [UInt8]($0.fields)
                change(&bytes)
                $0.fields = Data(bytes)
            }
        }
        let nameOffset = try #require(
            [UInt8](deleted.fields).firstRange(of: Array("Old guitar".utf8))?.lowerBound)
        let broken: [(String, Hpsync_V1_Record)] = [
            ("ends early", bytes(edited) { $0.removeLast() }),
            ("goes on past the fifth entry", bytes(edited) { $0.append(0) }),
            ("a version index outside its table", bytes(edited) { $0[entries + 1] = 1 }),
            ("an origin index outside its table", bytes(edited) { $0[entries - 1] = 2 }),
            ("an unknown flag", bytes(edited) { $0[entries] = 2 | 32 }),
            ("a value on a live item's field", bytes(edited) { $0[entries + 2] = 1 | 8 }),
            ("no value on a deleted item's field", bytes(deleted) { $0[deletedEntries] &= ~8 }),
            ("a base not below its version", bytes(edited) { $0[1 + 32 + 1] = 2 }),
            ("a text that is not UTF-8", bytes(deleted) { $0[nameOffset] = 0xFF }),
            (
                "a kept name over 1,024 bytes",
                bytes(deleted) {
                    let length = nameOffset - 8
                    let long = [UInt8](repeating: 0x41, count: 1_025)
                    $0.replaceSubrange(length..<nameOffset + 10, with: [1, 4, 0, 0, 0, 0, 0, 0] + long)
                }
            ),
            // A live record's values are its winners' by construction; a conflict newer than
            // the winner makes the state show another name than the record's.
            ("a state that shows another record", changed(clash) { $0.conflicts[0].stamp = 7 }),
            ("conflicts without fields bytes", changed(clash) { $0.fields = Data() }),
            ("a conflict's base not below its version", changed(clash) { $0.conflicts[0].baseStamp = 9 }),
            ("an empty field on a live item", bytes(edited) { $0.replaceSubrange(entries..<entries + 2, with: [4]) }),
        ]
        for (rule, record) in broken {
            #expect(throws: ProtocolError.self, "\(rule)") { try Self.decode(record) }
        }
        // The unbroken ones pass, so each refusal above is its mutation's.
        for record in [edited, deleted, clash] { _ = try Self.decode(record) }
    }

    /// Protocol.md 7: a Record over its fields-bytes or conflicts limit is refused by count
    /// (ERROR_LIMIT) before anything is read.
    @Test func recordsOverTheirLimitsAreRefused() throws {
        var long = try Self.wire(Self.edited())
        long.fields.append(Data(count: ProtocolLimits.maxFieldsBytes + 1 - long.fields.count))
        var many = try Self.wire(Self.clash())
        many.conflicts = Array(repeating: many.conflicts[0], count: ProtocolLimits.maxConflicts + 1)
        for (field, record) in [("fields", long), ("conflicts", many)] {
            #expect {
                try Self.decode(record)
            } throws: { error in
                guard case .tooMany(_, let named, _, _) = error as? ProtocolError else { return false }
                return named == field
            }
        }
    }
}
