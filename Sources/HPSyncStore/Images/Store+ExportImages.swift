import Foundation
import HPSyncCrypto
import HPSyncModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Copying images out for `export --images` (HPSyncTransfer), each checked against its record as it is copied: a
/// damaged file passed on would make the whole export unimportable.
extension Store {
    /// Copies each live item's image to `directory/<KEY>`; returns the images left out (no file,
    /// or bytes that are not the record's), whose copies are removed.
    package func copyImages(of items: [Item], to directory: URL) throws -> [ImageLeftOut] {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError.cannotCreate(path: directory.path, reason: error.localizedDescription)
        }
        var leftOut: [ImageLeftOut] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        for item in items where !item.deleted {
            guard let expected = item.image else { continue }
            let target = directory.appendingPathComponent(item.key.rawValue).path
            FileIO.unlinkIfPresent(target)
            let copied: ImageRef
            do {
                copied = try copy(images.finalPath(item.key), to: target, buffer: buffer)
            } catch StoreError.missingImageFile {
                leftOut.append(
                    ImageLeftOut(key: item.key, reason: "left out of the export: images/\(item.key) is missing"))
                continue
            }
            if copied != expected {
                FileIO.unlinkIfPresent(target)
                leftOut.append(
                    ImageLeftOut(
                        key: item.key,
                        reason: "left out of the export: images/\(item.key) is damaged "
                            + ImageLeftOut.difference(copied, expected)))
            }
        }
        if !leftOut.isEmpty { try? rememberImagesToHeal(leftOut.map(\.key)) }
        return leftOut
    }

    /// Copies `source` to a new file `target`, hashing as it goes.
    private func copy(_ source: String, to target: String, buffer: UnsafeMutableRawBufferPointer) throws -> ImageRef {
        let input = try FileIO.openForReading(source)
        defer { close(input) }
        let output: Int32
        do {
            output = try FileIO.create(target)
        } catch {
            throw StoreError.io(path: target, reason: "\(error)")
        }
        defer { close(output) }
        var hasher = SHA256()
        var size: Int64 = 0
        while true {
            let count = try FileIO.readChunk(input, into: buffer, path: source)
            if count == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            hasher.update(chunk)
            size += Int64(count)
            try FileIO.writeAll(output, chunk, path: target)
        }
        return ImageRef(digest: hasher.finalize(), size: size)
    }
}
