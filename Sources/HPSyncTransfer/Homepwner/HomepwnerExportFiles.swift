import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A data file written item by item.
protocol HomepwnerItemStream: AnyObject {
    func add(_ item: HomepwnerItem) throws(HomepwnerError)
    /// Completes the file (its closing objects, offset table and trailer).
    func finish() throws(HomepwnerError)
}

/// The files of one streamed export in the target folder: the data file as
/// `.hp-sync-export-<UUID>`, renamed over `items.archive` or `items.plist` once complete, and
/// its side lists (`.hp-sync-export-<UUID>-<list>`, unlinked as soon as they are opened).
/// An export that fails removes its data file; one killed leaves it behind, under that name.
final class HomepwnerExportFiles {
    static let prefix = ".hp-sync-export-"

    let output: SpoolFile
    private let base: String
    private let bufferBytes: Int
    private var finished = false

    init(directory: URL, bufferBytes: Int) throws(HomepwnerError) {
        base = directory.appendingPathComponent(Self.prefix + UUID().uuidString).path
        self.bufferBytes = bufferBytes
        output = try SpoolFile(path: base, keep: true, bufferBytes: bufferBytes)
    }

    deinit {
        if !finished { unlink(base) }
    }

    /// A side list beside the data file, gone from the folder already.
    func sideList(_ name: String) throws(HomepwnerError) -> SpoolFile {
        try SpoolFile(path: base + "-" + name, keep: false, bufferBytes: bufferBytes)
    }

    /// Renames the complete data file to `target` (replacing it).
    func install(as target: URL) throws(HomepwnerError) {
        try output.flush()
        guard rename(base, target.path) == 0 else {
            throw .cannotWrite(path: target.path, reason: String(cString: strerror(errno)))
        }
        finished = true
    }
}
