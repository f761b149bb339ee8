import Foundation

/// A store's random identity, fixed at `init`. A checkpoint names the store it counts in,
/// so a peer whose store was re-created is read again from zero.
public struct StoreID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let uuid: UUID

    public init(uuid: UUID) { self.uuid = uuid }

    public static func random() -> StoreID { StoreID(uuid: UUID()) }

    /// The 16 raw bytes, as sent on the wire.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    /// Wraps 16 raw bytes; nil for any other length.
    public init?(bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        guard array.count == 16 else { return nil }
        let tuple = (
            array[0], array[1], array[2], array[3], array[4], array[5], array[6], array[7],
            array[8], array[9], array[10], array[11], array[12], array[13], array[14], array[15]
        )
        self.uuid = UUID(uuid: tuple)
    }

    public var description: String { uuid.uuidString }
}
