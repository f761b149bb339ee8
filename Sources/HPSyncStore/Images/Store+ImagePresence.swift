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
    package static let repairCommand = "hp-sync verify --repair --from PEER"

    /// What `imageFileURL(for:)` holds compared with the record, from one `stat`: nil when
    /// the file is there with the right size (the digest is not checked: that is `verify`'s
    /// job), else what is wrong with it.
    package func imageFileProblem(_ item: Item) -> String? {
        guard let image = item.image, !item.deleted else { return nil }
        guard let size = ImageDirectory.regularFileSize(in: AT_FDCWD, named: images.finalPath(item.key)) else {
            return "the file is missing"
        }
        guard size == image.size else { return "the file is damaged (\(size) bytes, not \(image.size))" }
        return nil
    }

    /// The size of each image file among `items` whose record names an image and whose file
    /// is missing (nil) or of another size (what it holds): what `imageFileProblem` finds, for
    /// a whole listing. One `fstatat` per image, relative to the open `images/` folder (about a
    /// microsecond each; a truncated photo kept its name, so a listing of names missed it).
    /// Rot that keeps the size is `verify`'s to find: it hashes.
    package func imageFileSizesAmiss(_ items: [Item]) throws -> [ItemKey: Int64?] {
        let named = items.filter { !$0.deleted && $0.image != nil }
        guard !named.isEmpty else { return [:] }
        return try images.withOpenFolder { folder in
            var amiss: [ItemKey: Int64?] = [:]
            for item in named {
                let size = item.key.rawValue.withCString { ImageDirectory.regularFileSize(in: folder, named: $0) }
                if size != item.image?.size { amiss[item.key] = size }
            }
            return amiss
        }
    }
}
