import Foundation
import HPSyncCrypto

/// A committed image file opened for sending: its size, and its bytes read in chunks through
/// one caller-owned buffer (nothing is held in memory).
public final class ImageReader {
    public let size: Int64
    private var descriptor: Int32
    private let path: String

    init(path: String) throws {
        self.path = path
        descriptor = try FileIO.openForReading(path)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = FileIO.errorText()
            Foundation.close(descriptor)
            throw StoreError.io(path: path, reason: reason)
        }
        size = Int64(info.st_size)
    }

    deinit { close() }

    /// Reads up to `buffer.count` bytes; 0 at the end of the file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try FileIO.readChunk(descriptor, into: buffer, path: path)
    }

    /// The file ended before `size` bytes: it was replaced while being read.
    public func shortFileError() -> StoreError {
        .io(path: path, reason: "the image ended early (it changed while being sent); sync again")
    }

    public func close() {
        if descriptor >= 0 {
            Foundation.close(descriptor)
            descriptor = -1
        }
    }
}

extension Store {
    /// Opens a committed local image file with `digest` (under any key), or nil if there is none.
    public func openImage(withDigest digest: SHA256Digest) throws -> ImageReader? {
        guard let url = try imageFile(withDigest: digest) else { return nil }
        do {
            return try ImageReader(path: url.path)
        } catch StoreError.missingImageFile {
            return nil  // replaced or deleted since the lookup
        }
    }
}
