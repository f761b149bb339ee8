/// Room for the checked bytes of one image at a time, reused from image to image by one sender
/// (`ImageReader.holds`): an image up to `limit` bytes is read once, checked against its digest
/// and sent from here. A larger one is checked, then read again to be sent, a chunk at a time,
/// so a session never holds more than `limit` bytes of images.
package final class ImageHold {
    /// 1 MiB: most photos of an inventory fit; 64 sessions sending at once hold 64 MiB at most.
    package static let defaultLimit = 1 << 20

    package let limit: Int
    private var storage: UnsafeMutableRawBufferPointer?

    package init(limit: Int = defaultLimit) {
        self.limit = limit
    }

    deinit { storage?.deallocate() }

    /// `size` bytes of room, or nil past the limit. The room of the previous image is reused:
    /// only one reader at a time may use a hold.
    func room(for size: Int) -> UnsafeMutableRawBufferPointer? {
        guard size <= limit else { return nil }
        if storage == nil { storage = .allocate(byteCount: limit, alignment: 16) }
        return UnsafeMutableRawBufferPointer(rebasing: storage![0..<size])
    }
}
