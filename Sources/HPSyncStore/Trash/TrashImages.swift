import Foundation
import HPSyncCrypto
import HPSyncModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `trash/` folder: one file per image digest (`trash/<SHA-256 hex>`), each an independent
/// copy of the bytes, never a hard link to a live photo.
///
/// A hard link shared the live file's inode, so damage in place (bit rot, a bad disk, a tool
/// writing into the file) damaged the trash copy too and `trash restore` then failed. A copy is
/// written like any image the store keeps: into a temporary, checked against its digest,
/// fsynced, renamed into place, and the folder fsynced, all before the transaction whose trash
/// rows name it commits. A copy costs a read and a write of each trashed photo where a link cost
/// one system call; a pull trashes only what it replaces or deletes.
struct TrashImages {
    let folder: ImageDirectory

    init(url: URL) {
        folder = ImageDirectory(url: url)
    }

    func path(_ digest: SHA256Digest) -> String { folder.path + "/" + digest.hex }

    /// Whether `trash/<hex>` needs writing: it is missing, or it is a hard link (made by an
    /// earlier version) that shares a live file's damage.
    func needsCopy(_ digest: SHA256Digest) -> Bool {
        var info = stat()
        guard stat(path(digest), &info) == 0 else { return true }
        return info.st_nlink > 1
    }

    /// Copies `source` into the trash as `trash/<hex of ref>` when its bytes are `ref`'s, fsynced
    /// and renamed into place; the caller fsyncs the folder (`syncFolder`) once for a batch.
    /// Returns false when the source is missing or no longer matches `ref` (a damaged live
    /// file is not copied: `verify` reports the trash image and heals it from a peer).
    @discardableResult
    func keep(copying source: String, ref: ImageRef) throws -> Bool {
        try makeFolder()
        let copy: (name: String, ref: ImageRef)
        do {
            copy = try folder.writeTemp(copying: URL(fileURLWithPath: source), maxBytes: .max, validate: false)
        } catch StoreError.missingImageFile {
            return false
        }
        guard copy.ref == ref else {
            FileIO.unlinkIfPresent(folder.tempPath(copy.name))
            return false
        }
        try FileIO.renameFile(folder.tempPath(copy.name), path(ref.digest))
        return true
    }

    /// Makes the renames of `keep` durable.
    func syncFolder() throws { try folder.syncDirectory() }

    /// Whether `trash/<hex>` holds exactly `ref`'s bytes (reads and hashes the file).
    func isIntact(_ ref: ImageRef) -> Bool {
        (try? FileIO.measure(path(ref.digest))) == ref
    }

    private func makeFolder() throws {
        guard !FileIO.exists(folder.path) else { return }
        try StorePrivacy.makeDirectory(folder.url)
        // The new folder's own name, once: without it a power cut could take the whole trash.
        try FileIO.syncDirectory(folder.url.deletingLastPathComponent().path)
    }
}

/// Trash images waiting for their transaction's end: `TrashInsertion.finish()` copies them
/// before the rows that name them commit.
struct PendingTrashImages {
    private var sources: [(path: String, ref: ImageRef)] = []
    private var digests = Set<SHA256Digest>()
    private var folder: URL?

    mutating func add(source: String, ref: ImageRef, trash: URL) {
        folder = trash
        if digests.insert(ref.digest).inserted { sources.append((source, ref)) }
    }

    /// Copies each image not in the trash yet; the folder is fsynced once.
    mutating func write() throws {
        guard let folder, !sources.isEmpty else { return }
        let trash = TrashImages(url: folder)
        var wrote = false
        for (source, ref) in sources where trash.needsCopy(ref.digest) {
            wrote = try trash.keep(copying: source, ref: ref) || wrote
        }
        if wrote { try trash.syncFolder() }
        sources.removeAll()
        digests.removeAll()
    }
}
