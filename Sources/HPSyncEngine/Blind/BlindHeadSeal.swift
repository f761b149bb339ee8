import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol

/// The head trusted nodes keep on a blind peer (Protocol.md 5.8): an epoch every write raises,
/// and, once a push has finished, how many entries the blind store holds and the SHA-256 of
/// their IDs and versions. A head left open (a push that did not finish) names no entries.
struct BlindHead: Equatable {
    var epoch: Int64
    /// The entries a finished push left, or nil while a push is open.
    var entries: (count: Int64, digest: SHA256Digest)?

    static func == (lhs: BlindHead, rhs: BlindHead) -> Bool {
        lhs.epoch == rhs.epoch && lhs.entries?.count == rhs.entries?.count && lhs.entries?.digest == rhs.entries?.digest
    }

    /// Sealed under the head key, bound to the blind store's ID and the epoch told in the clear.
    func sealed(keys: BlindKeys, store: StoreID) -> BlindHeadMessage {
        var plaintext: [UInt8] = [1]
        withUnsafeBytes(of: UInt64(epoch).bigEndian) { plaintext += $0 }
        if let entries {
            plaintext.append(1)
            withUnsafeBytes(of: UInt64(entries.count).bigEndian) { plaintext += $0 }
            plaintext += entries.digest.bytes
        } else {
            plaintext.append(0)
        }
        return Self.seal(plaintext, epoch: epoch, keys: keys, store: store)
    }

    /// A head's plaintext (of either format) sealed under the head key, bound to the blind
    /// store's ID and the epoch told in the clear.
    static func seal(_ plaintext: [UInt8], epoch: Int64, keys: BlindKeys, store: StoreID) -> BlindHeadMessage {
        BlindHeadMessage(epoch: epoch, sealed: keys.sealHead(plaintext, context: context(store: store, epoch: epoch)))
    }

    /// The plaintext of a head the blind store served (epoch > 0), whatever its format.
    static func plaintext(of message: BlindHeadMessage, keys: BlindKeys, store: StoreID) throws -> [UInt8] {
        do {
            return try keys.openHead(message.sealed, context: context(store: store, epoch: message.epoch))
        } catch {
            throw BlindRecordSeal.Failure("the head (epoch \(message.epoch)): \(error)")
        }
    }

    /// Opens a head the blind store served; nil for none (epoch 0).
    static func open(_ message: BlindHeadMessage, keys: BlindKeys, store: StoreID) throws -> BlindHead? {
        guard message.epoch > 0 else { return nil }
        let plaintext = try Self.plaintext(of: message, keys: keys, store: store)
        guard plaintext.count >= 10, plaintext[0] == 1 else {
            throw BlindRecordSeal.Failure("the head (epoch \(message.epoch)) opened but is malformed")
        }
        let epoch = Int64(bitPattern: plaintext[1..<9].reduce(0) { $0 << 8 | UInt64($1) })
        guard epoch == message.epoch else {
            throw BlindRecordSeal.Failure("the head's sealed epoch \(epoch) is not the listed \(message.epoch)")
        }
        guard plaintext[9] == 1 else { return BlindHead(epoch: epoch, entries: nil) }
        guard plaintext.count == 10 + 8 + 32, let digest = SHA256Digest(bytes: plaintext[18...]) else {
            throw BlindRecordSeal.Failure("the head (epoch \(message.epoch)) opened but is malformed")
        }
        let count = Int64(bitPattern: plaintext[10..<18].reduce(0) { $0 << 8 | UInt64($1) })
        return BlindHead(epoch: epoch, entries: (count, digest))
    }

    static func context(store: StoreID, epoch: Int64) -> [UInt8] {
        var bytes = store.bytes
        withUnsafeBytes(of: UInt64(epoch).bigEndian) { bytes += $0 }
        return bytes
    }
}
