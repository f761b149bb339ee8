/// Checks a `bplist00` file's trailer, offset table and object markers before Foundation parses
/// it: swift-corelibs-foundation crashes (SIGSEGV while bridging) on some corrupted binary
/// plists, e.g. when a flipped marker turns an array into a set. A keyed archive only ever
/// holds the kinds allowed here.
enum BinaryPlistPrecheck {
    /// nil when the bytes look sound (or are not a binary plist), else what is wrong.
    /// `progress` is called every 262,144 objects (a memory map hands back the pages read).
    static func problem<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, progress: () -> Void = {}) -> String?
    where Bytes.Index == Int {
        guard bytes.starts(with: Array("bplist".utf8)) else { return nil }
        guard bytes.count >= 8 + 32 + 1 else { return "a binary plist of \(bytes.count) bytes is truncated" }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let refSize = Int(bytes[trailer + 7])
        let count = bigEndian(bytes, trailer + 8, 8)
        let top = bigEndian(bytes, trailer + 16, 8)
        let table = bigEndian(bytes, trailer + 24, 8)
        // Any width from 1 to 8 bytes: swift-corelibs-foundation writes 3 for files (and object
        // counts) between 64 KiB and 16 MiB.
        guard (1...8).contains(offsetSize), (1...8).contains(refSize) else {
            return "the binary plist trailer is corrupted (offset size \(offsetSize), reference size \(refSize))"
        }
        guard count > 0, top < count, table >= 8, table <= UInt64(trailer),
            count <= (UInt64(trailer) - table) / UInt64(offsetSize)
        else { return "the binary plist trailer is corrupted or the file is truncated" }
        for index in 0..<Int(count) {
            if index % 262_144 == 262_143 { progress() }
            let offset = bigEndian(bytes, Int(table) + index * offsetSize, offsetSize)
            guard offset >= 8, offset < table else { return "binary plist object \(index) lies outside the file" }
            let marker = bytes[Int(offset)]
            switch marker >> 4 {
            case 0x0: guard [0x00, 0x08, 0x09].contains(marker) else { return "unknown binary plist marker \(marker)" }
            case 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x8, 0xA, 0xD: continue
            default: return "binary plist object \(index) has a kind (marker \(marker)) no keyed archive holds"
            }
        }
        return nil
    }

    private static func bigEndian<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, _ start: Int, _ width: Int)
        -> UInt64 where Bytes.Index == Int
    {
        guard start >= 0, start + width <= bytes.count else { return UInt64.max }
        return bytes[start..<start + width].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
