import Foundation
import HPSyncModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether the image a record names is actually on disk, cheaply: a record can name an image
/// whose file is gone (an import without images, a deleted or rotted file) until a repair or a
/// pull brings it back, and the listings must not claim otherwise.
extension Store {
    /// The command that brings a missing or damaged image back.
    public static let repairCommand = "hp-sync verify --repair --from PEER"

    /// What `imageFileURL(for:)` holds compared with the record, from one `stat`: nil when
    /// the file is there with the right size (the digest is not checked: that is `verify`'s
    /// job), else what is wrong with it.
    public func imageFileProblem(_ item: Item) -> String? {
        guard let image = item.image, !item.deleted else { return nil }
        guard let size = ImageDirectory.regularFileSize(in: AT_FDCWD, named: images.finalPath(item.key)) else {
            return "the file is missing"
        }
        guard size == image.size else { return "the file is damaged (\(size) bytes, not \(image.size))" }
        return nil
    }

    /// The keys among `items` whose image is recorded but has no file, from one listing of
    /// `images/` (for `list`, where a `stat` per item would cost too much on large stores).
    public func keysWithMissingImages(_ items: [Item]) throws -> Set<ItemKey> {
        let named = items.filter { !$0.deleted && $0.image != nil }
        guard !named.isEmpty else { return [] }
        let present: Set<String>
        do {
            present = Set(try FileManager.default.contentsOfDirectory(atPath: images.path))
        } catch {
            throw StoreError.io(path: images.path, reason: "\(error)")
        }
        return Set(named.map(\.key).filter { !present.contains($0.rawValue) })
    }
}
