import HPSyncModel

/// Recognises the image formats an item may carry by their first bytes.
package enum ImageFormat {
    /// Whether `header` (the first 16 or more bytes of a file) starts a JPEG, PNG, GIF or HEIC.
    package static func isImage(_ header: [UInt8]) -> Bool {
        if header.starts(with: [0xFF, 0xD8, 0xFF]) { return true }
        if header.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return true }
        if header.starts(with: Array("GIF87a".utf8)) || header.starts(with: Array("GIF89a".utf8)) { return true }
        // HEIF family: an ISO-BMFF "ftyp" box at offset 4 with a HEIC/HEIF brand.
        if header.count >= 12 && Array(header[4..<8]) == Array("ftyp".utf8) {
            let brand = String(decoding: header[8..<12], as: UTF8.self)
            return ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"].contains(brand)
        }
        return false
    }
}

extension ImageFormat {
    /// The first 16 bytes of the file at `path` (for `isImage`) and its size and SHA-256, read
    /// in chunks so an image is never held in memory whole; for importers that check a file
    /// before `Store` copies it.
    package static func inspect(_ path: String) throws -> (header: [UInt8], ref: ImageRef) {
        (try FileIO.header(path, count: 16), try FileIO.measure(path))
    }
}
