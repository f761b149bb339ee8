import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `bplist00` file read in place from a memory map: the offset table lets object N be decoded
/// when it is asked for, so a 1,000,000-item list is never held as a tree of values (Foundation's
/// `PropertyListSerialization` held 800 MB for one). Pages already read are handed back to the
/// kernel with `releasePages()`, so the map does not stay resident either.
///
/// Strict: anything it does not understand is a `Failure`, and the caller decides with the
/// Foundation path what the file really holds (and which message its fault gets).
final class BinaryPlistReader {
    /// One object, its members left as references.
    enum Node {
        case scalar(PlistValue)
        case array(References)
        case dictionary(keys: References, values: References)
    }

    /// `count` object references of `size` bytes each from byte `start`.
    struct References {
        let start: Int
        let count: Int
        let size: Int
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let base: UnsafeRawBufferPointer
    private let offsetSize: Int
    private let referenceSize: Int
    private let tableOffset: Int
    /// The number of objects, and the reference of the top one.
    let count: Int
    let top: Int

    /// Maps `url`; nil when the file is not a binary plist (an XML one goes through Foundation).
    init?(mapping url: URL) throws(Failure) {
        let fd = open(url.path, O_RDONLY)
        guard fd >= 0 else { throw Failure(description: "cannot open: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure(description: "cannot stat") }
        let length = Int(info.st_size)
        guard length >= 8 + 32 + 1 else { return nil }
        guard let address = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0),
            address != UnsafeMutableRawPointer(bitPattern: -1)
        else {
            throw Failure(description: "cannot map: \(String(cString: strerror(errno)))")
        }
        let buffer = UnsafeRawBufferPointer(start: address, count: length)
        base = buffer
        guard buffer.starts(with: Array("bplist00".utf8)) else {
            munmap(address, length)
            return nil
        }
        // The trailer, offset table and markers checked once, as before Foundation's parse.
        let release = {
            _ = madvise(UnsafeMutableRawPointer(mutating: buffer.baseAddress), buffer.count, Int32(MADV_DONTNEED))
        }
        if let problem = BinaryPlistPrecheck.problem(buffer, progress: release) {
            munmap(address, length)
            throw Failure(description: problem)
        }
        let trailer = length - 32
        offsetSize = Int(buffer[trailer + 6])
        referenceSize = Int(buffer[trailer + 7])
        count = Int(Self.bigEndian(buffer, trailer + 8, 8))
        top = Int(Self.bigEndian(buffer, trailer + 16, 8))
        tableOffset = Int(Self.bigEndian(buffer, trailer + 24, 8))
        release()
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base.baseAddress), base.count) }

    /// Drops the pages read so far from this process's resident memory (they stay in the page
    /// cache; reading them again costs a minor fault).
    func releasePages() {
        _ = madvise(UnsafeMutableRawPointer(mutating: base.baseAddress), base.count, Int32(MADV_DONTNEED))
    }

    /// The object `reference` names.
    func node(_ reference: Int) throws(Failure) -> Node {
        guard reference >= 0 && reference < count else { throw fail("reference \(reference) is out of range") }
        let offset = Int(Self.bigEndian(base, tableOffset + reference * offsetSize, offsetSize))
        guard offset >= 8 && offset < tableOffset else { throw fail("object \(reference) lies outside the file") }
        let marker = base[offset]
        let info = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return .scalar(.bool(false))
            case 0x09: return .scalar(.bool(true))
            default: throw fail("object \(reference) has marker \(marker)")
            }
        case 0x1:
            guard info <= 3 else { throw fail("object \(reference) is a 128-bit integer") }
            let width = 1 << info
            try need(offset + 1, width)
            let raw = Self.bigEndian(base, offset + 1, width)
            // 1-, 2- and 4-byte integers are unsigned, 8-byte ones signed.
            return .scalar(.integer(width == 8 ? Int64(bitPattern: raw) : Int64(raw)))
        case 0x2:
            guard info == 2 || info == 3 else { throw fail("object \(reference) is a real of odd width") }
            let width = 1 << info
            try need(offset + 1, width)
            let raw = Self.bigEndian(base, offset + 1, width)
            return .scalar(.real(width == 8 ? Double(bitPattern: raw) : Double(Float(bitPattern: UInt32(raw)))))
        case 0x3:
            guard marker == 0x33 else { throw fail("object \(reference) is a date of odd width") }
            try need(offset + 1, 8)
            return .scalar(.date(Double(bitPattern: Self.bigEndian(base, offset + 1, 8))))
        case 0x4:
            let (start, length) = try extent(offset, info, unit: 1)
            return .scalar(.data(Array(base[start..<start + length])))
        case 0x5:
            let (start, length) = try extent(offset, info, unit: 1)
            let bytes = UnsafeRawBufferPointer(rebasing: base[start..<start + length])
            guard bytes.allSatisfy({ $0 < 0x80 }) else { throw fail("object \(reference) is not ASCII") }
            return .scalar(.string(String(decoding: bytes, as: UTF8.self)))
        case 0x6:
            let (start, length) = try extent(offset, info, unit: 2)
            var units: [UInt16] = []
            units.reserveCapacity(length / 2)
            for index in stride(from: start, to: start + length, by: 2) {
                units.append(UInt16(base[index]) << 8 | UInt16(base[index + 1]))
            }
            var text = ""
            var decoder = UTF16()
            var iterator = units.makeIterator()
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): text.unicodeScalars.append(scalar)
                case .emptyInput: break loop
                case .error: throw fail("object \(reference) is not valid UTF-16")
                }
            }
            return .scalar(.string(text))
        case 0x8:
            try need(offset + 1, info + 1)
            // The format allows up to 16 bytes; past 8 the value would not fit (and past Int's
            // range converting it would trap): refused.
            guard info < 8, let uid = Int(exactly: Self.bigEndian(base, offset + 1, info + 1)) else {
                throw fail("object \(reference) is a UID beyond any object")
            }
            return .scalar(.uid(uid))
        case 0xA:
            let (start, length) = try extent(offset, info, unit: referenceSize)
            return .array(References(start: start, count: length / referenceSize, size: referenceSize))
        case 0xD:
            let (start, length) = try extent(offset, info, unit: 2 * referenceSize)
            let half = length / 2
            return .dictionary(
                keys: References(start: start, count: half / referenceSize, size: referenceSize),
                values: References(start: start + half, count: half / referenceSize, size: referenceSize))
        default:
            throw fail("object \(reference) has marker \(marker)")
        }
    }

    /// Member `index` of `references`. An 8-byte reference past Int's range reads as `Int.max`,
    /// which `node` refuses as out of range (converting it would trap).
    func reference(_ references: References, _ index: Int) -> Int {
        Int(exactly: Self.bigEndian(base, references.start + index * references.size, references.size)) ?? .max
    }

    /// The string object `reference` names, else a failure.
    func string(_ reference: Int) throws(Failure) -> String {
        guard case .scalar(.string(let text)) = try node(reference) else {
            throw fail("object \(reference) is no string")
        }
        return text
    }

    /// The whole value of `reference`, members included, at most `depth` containers deep.
    func value(_ reference: Int, depth: Int = 16) throws(Failure) -> PlistValue {
        guard depth > 0 else { throw fail("containers nest too deep at object \(reference)") }
        switch try node(reference) {
        case .scalar(let value): return value
        case .array(let members):
            var values: [PlistValue] = []
            values.reserveCapacity(members.count)
            for index in 0..<members.count {
                values.append(try value(self.reference(members, index), depth: depth - 1))
            }
            return .array(values)
        case .dictionary(let keys, let values):
            var entries: [(String, PlistValue)] = []
            entries.reserveCapacity(keys.count)
            for index in 0..<keys.count {
                let key = try string(self.reference(keys, index))
                entries.append((key, try value(self.reference(values, index), depth: depth - 1)))
            }
            return .dictionary(entries)
        }
    }

    /// Where the `length` bytes of a counted object start: counts of 15 and more follow the
    /// marker as an integer object.
    private func extent(_ offset: Int, _ info: Int, unit: Int) throws(Failure) -> (start: Int, length: Int) {
        var start = offset + 1
        var items = info
        if info == 0x0F {
            try need(start, 1)
            let marker = base[start]
            guard marker >> 4 == 0x1, marker & 0x0F <= 3 else { throw fail("a count at byte \(offset) is malformed") }
            let width = 1 << Int(marker & 0x0F)
            try need(start + 1, width)
            let raw = Self.bigEndian(base, start + 1, width)
            guard raw <= UInt64(tableOffset) else { throw fail("a count at byte \(offset) is too large") }
            items = Int(raw)
            start += 1 + width
        }
        let length = items * unit
        try need(start, length)
        return (start, length)
    }

    /// Throws unless `length` bytes from `start` lie before the offset table.
    private func need(_ start: Int, _ length: Int) throws(Failure) {
        guard start >= 8, length >= 0, start <= tableOffset - length else {
            throw fail("an object at byte \(start) runs past the objects")
        }
    }

    private func fail(_ what: String) -> Failure { Failure(description: what) }

    private static func bigEndian(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ width: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in start..<start + width { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
