/// A `bplist00` file written object by object, for a file too large to hold as values: each
/// object is appended as it is made (members before the containers naming them, so a
/// reference is always known), its offset goes to a side list, and the offset table is copied
/// in at the end. Memory stays the same whatever the object count.
///
/// References are `refSize` bytes wide from an upper bound on the object count given up front:
/// readers take any width that can name every object (the smallest one is not required).
final class BinaryPlistStream {
    let refSize: Int
    private let output: SpoolFile
    private let offsets: SpoolFile
    /// Objects written so far: the reference of the next one.
    private(set) var count = 0
    private var scratch: [UInt8] = []

    init(output: SpoolFile, offsets: SpoolFile, maxObjects: Int) throws(HomepwnerError) {
        self.output = output
        self.offsets = offsets
        refSize = BinaryPlistWriter.byteWidth(UInt64(max(1, maxObjects)))
        try output.append(Array("bplist00".utf8))
    }

    /// Appends a scalar (no array or dictionary) and returns its reference.
    func add(_ value: PlistValue) throws(HomepwnerError) -> Int {
        scratch.removeAll(keepingCapacity: true)
        BinaryPlistWriter.writeScalar(value, to: &scratch)
        return try append(scratch)
    }

    /// Appends an array of `members` (references) and returns its reference.
    func addArray(_ members: [Int]) throws(HomepwnerError) -> Int {
        scratch.removeAll(keepingCapacity: true)
        BinaryPlistWriter.marker(0xA, count: members.count, to: &scratch)
        for ref in members { BinaryPlistWriter.appendBigEndian(UInt64(ref), width: refSize, to: &scratch) }
        return try append(scratch)
    }

    /// Appends an array of the `count` objects from reference `first` on.
    func addArray(first: Int, count: Int) throws(HomepwnerError) -> Int {
        try addArray(head: [], spooled: nil, memberCount: count) { [refSize] scratch in
            for ref in first..<first + count {
                BinaryPlistWriter.appendBigEndian(UInt64(ref), width: refSize, to: &scratch)
            }
        }
    }

    /// Appends an array of `head` followed by the references spooled in `list` (`refSize`
    /// bytes each, written there with `spool(_:to:)`).
    func addArray(head: [Int], spooled list: SpoolFile) throws(HomepwnerError) -> Int {
        try addArray(head: head, spooled: list, memberCount: head.count + list.count / refSize) { _ in }
    }

    /// Notes `ref` in `list`, a member of an array `addArray(head:spooled:)` writes later.
    func spool(_ ref: Int, to list: SpoolFile) throws(HomepwnerError) {
        try list.append(bigEndian: UInt64(ref), width: refSize)
    }

    /// Appends a dictionary of `entries` (key and value references) and returns its reference.
    func addDictionary(_ entries: [(key: Int, value: Int)]) throws(HomepwnerError) -> Int {
        scratch.removeAll(keepingCapacity: true)
        BinaryPlistWriter.marker(0xD, count: entries.count, to: &scratch)
        for ref in entries.map(\.key) + entries.map(\.value) {
            BinaryPlistWriter.appendBigEndian(UInt64(ref), width: refSize, to: &scratch)
        }
        return try append(scratch)
    }

    /// Writes the offset table and the trailer naming `top`; the stream is complete.
    func finish(top: Int) throws(HomepwnerError) {
        let tableOffset = output.count
        let offsetSize = BinaryPlistWriter.byteWidth(UInt64(tableOffset))
        try offsets.forEachChunk { (bytes) throws(HomepwnerError) in
            for index in stride(from: 0, to: bytes.count, by: 8) {
                let offset = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                try output.append(bigEndian: offset, width: offsetSize)
            }
        }
        try output.append([0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)])
        try output.append(bigEndian: UInt64(count), width: 8)
        try output.append(bigEndian: UInt64(top), width: 8)
        try output.append(bigEndian: UInt64(tableOffset), width: 8)
        try output.flush()
    }

    private func addArray(
        head: [Int], spooled list: SpoolFile?, memberCount: Int, members: (inout [UInt8]) -> Void
    ) throws(HomepwnerError) -> Int {
        try recordOffset()
        scratch.removeAll(keepingCapacity: true)
        BinaryPlistWriter.marker(0xA, count: memberCount, to: &scratch)
        for ref in head { BinaryPlistWriter.appendBigEndian(UInt64(ref), width: refSize, to: &scratch) }
        members(&scratch)
        try output.append(scratch)
        try list?.forEachChunk { (bytes) throws(HomepwnerError) in try output.append(bytes) }
        count += 1
        return count - 1
    }

    private func append(_ bytes: [UInt8]) throws(HomepwnerError) -> Int {
        try recordOffset()
        try output.append(bytes)
        count += 1
        return count - 1
    }

    private func recordOffset() throws(HomepwnerError) {
        try offsets.append(bigEndian: UInt64(output.count), width: 8)
    }
}
