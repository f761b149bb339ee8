/// What an item row says about its image: the SHA-256 of the bytes and their count.
public struct ImageRef: Hashable, Sendable, Codable {
    public var digest: SHA256Digest
    public var size: Int64

    public init(digest: SHA256Digest, size: Int64) {
        self.digest = digest
        self.size = size
    }
}
