import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol

/// The head of a blind store whose inventory is in packs (format 2, `Docs/blind-packs-design.md`):
/// the epoch every write raises, whether a push is under way, and the packs, each by ID and
/// plaintext size. An open head still names the packs of the last finished push, so readers go
/// on reading them while a writer adds new ones.
///
/// Plaintext: format 2 (1 byte) ‖ epoch (8 bytes, big-endian) ‖ 1 if open, else 0 ‖ the number
/// of packs (4 bytes) ‖ for each, its ID (32 bytes) ‖ plaintext size (8 bytes). Sealed as the
/// format-1 head is (`BlindHead`): under the head subkey, bound to the blind store's ID and the
/// epoch told in the clear.
struct BlindPackHead: Equatable {
    struct Pack: Hashable {
        var id: BlindID
        var plainSize: Int64
    }

    var epoch: Int64
    var isOpen: Bool
    var packs: [Pack]

    static let format: UInt8 = 2
    /// Bytes before the packs, and per pack.
    private static let fixedBytes = 1 + 8 + 1 + 4
    private static let packBytes = BlindID.byteCount + 8
    /// The most packs one head names: what fits in `ProtocolLimits.maxSealedHeadBytes` with the
    /// seal's nonce, tag and padding (about 26,000, or 26 million items at 1,024 a pack).
    static let maxPacks = (ProtocolLimits.maxSealedHeadBytes - fixedBytes - 256) / packBytes

    /// Sealed under the head key, bound to the blind store's ID and the epoch told in the clear.
    func sealed(keys: BlindKeys, store: StoreID) -> BlindHeadMessage {
        precondition(packs.count <= Self.maxPacks, "a head names at most \(Self.maxPacks) packs")
        var plaintext: [UInt8] = [Self.format]
        plaintext.reserveCapacity(Self.fixedBytes + packs.count * Self.packBytes)
        withUnsafeBytes(of: UInt64(epoch).bigEndian) { plaintext += $0 }
        plaintext.append(isOpen ? 1 : 0)
        withUnsafeBytes(of: UInt32(packs.count).bigEndian) { plaintext += $0 }
        for pack in packs {
            plaintext += pack.id.bytes
            withUnsafeBytes(of: UInt64(pack.plainSize).bigEndian) { plaintext += $0 }
        }
        return BlindHead.seal(plaintext, epoch: epoch, keys: keys, store: store)
    }

    /// Opens a head the blind store served; nil for none (epoch 0). A head of format 1 (a store
    /// of version-4 entries) is refused with a message that says so.
    static func open(_ message: BlindHeadMessage, keys: BlindKeys, store: StoreID) throws -> BlindPackHead? {
        guard message.epoch > 0 else { return nil }
        let plaintext = try BlindHead.plaintext(of: message, keys: keys, store: store)
        func malformed(_ why: String) -> BlindRecordSeal.Failure {
            BlindRecordSeal.Failure("the head (epoch \(message.epoch)) opened but \(why)")
        }
        guard let format = plaintext.first else { throw malformed("is empty") }
        guard format == Self.format else {
            throw malformed(
                format == 1
                    ? "names entries, not packs: the blind store holds the version-4 format"
                    : "is of format \(format), which this hp-sync does not read")
        }
        guard plaintext.count >= fixedBytes else { throw malformed("is cut short") }
        func integer(_ range: Range<Int>) -> UInt64 { plaintext[range].reduce(0) { $0 << 8 | UInt64($1) } }
        let epoch = Int64(bitPattern: integer(1..<9))
        guard epoch == message.epoch else {
            throw BlindRecordSeal.Failure("the head's sealed epoch \(epoch) is not the listed \(message.epoch)")
        }
        guard plaintext[9] <= 1 else { throw malformed("has an unknown state \(plaintext[9])") }
        let count = Int(integer(10..<14))
        guard count <= maxPacks, plaintext.count == fixedBytes + count * packBytes else {
            throw malformed("does not hold the \(count) packs it announces")
        }
        var packs: [Pack] = []
        packs.reserveCapacity(count)
        var seen = Set<BlindID>()
        for index in 0..<count {
            let start = fixedBytes + index * packBytes
            let id = BlindID(bytes: plaintext[start..<start + BlindID.byteCount])!
            let size = Int64(bitPattern: integer(start + BlindID.byteCount..<start + packBytes))
            guard size > 0, size <= BlindKeys.maximumPackSize else {
                throw malformed("names pack \(id) of \(size) bytes")
            }
            guard seen.insert(id).inserted else { throw malformed("names pack \(id) twice") }
            packs.append(Pack(id: id, plainSize: size))
        }
        return BlindPackHead(epoch: epoch, isOpen: plaintext[9] == 1, packs: packs)
    }
}
