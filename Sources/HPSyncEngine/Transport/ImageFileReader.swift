import Foundation

#if canImport(Glibc)
    import Glibc
    private let systemClose = Glibc.close
    private let systemRead = Glibc.read
#elseif canImport(Darwin)
    import Darwin
    private let systemClose = Darwin.close
    private let systemRead = Darwin.read
#endif

/// Reads an image file with plain POSIX calls, so bytes go from the page cache to the
/// connection through one reused buffer.
final class ImageFileReader {
    enum ReadError: Error, CustomStringConvertible {
        case shortFile(String)
        case io(String, Int32)

        var description: String {
            switch self {
            case .shortFile(let path): return "image file \(path) ended early (changed while being sent); sync again"
            case .io(let path, let code): return "cannot read image file \(path): \(String(cString: strerror(code)))"
            }
        }
    }

    private var fd: Int32
    let size: Int64
    private let path: String

    init?(url: URL) {
        path = url.path
        fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            _ = systemClose(fd)
            return nil
        }
        size = Int64(info.st_size)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let n = systemRead(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw ReadError.io(path, errno)
        }
    }

    func close() {
        if fd >= 0 {
            _ = systemClose(fd)
            fd = -1
        }
    }

    deinit { close() }
}
