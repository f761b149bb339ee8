/// Writes `bplist00` binary property lists, UIDs included (Foundation cannot emit UID objects
/// on Linux: a `{"CF$UID": n}` dictionary stays a dictionary, which the app's NSKeyedUnarchiver
/// would not accept as a reference).
///
/// Layout: the magic, the objects, an offset table, then a 32-byte trailer with the offset and
/// reference sizes, the object count, the top object and the table's offset. Strings are shared,
/// so an archive of many items repeats no class or key names.
enum BinaryPlistWriter {
    static func encode(_ root: PlistValue) -> [UInt8] {
        var flat = Flattener()
        let top = flat.add(root)
        let count = flat.objects.count
        let refSize = byteWidth(UInt64(count - 1))
        var out: [UInt8] = Array("bplist00".utf8)
        var offsets: [Int] = []
        offsets.reserveCapacity(count)
        for object in flat.objects {
            offsets.append(out.count)
            write(object, refSize: refSize, to: &out)
        }
        let tableOffset = out.count
        let offsetSize = byteWidth(UInt64(tableOffset))
        for offset in offsets { appendBigEndian(UInt64(offset), width: offsetSize, to: &out) }
        out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)]
        appendBigEndian(UInt64(count), width: 8, to: &out)
        appendBigEndian(UInt64(top), width: 8, to: &out)
        appendBigEndian(UInt64(tableOffset), width: 8, to: &out)
        return out
    }

    /// One object of the flat list: containers hold the indexes of their members.
    private enum FlatObject {
        case scalar(PlistValue)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    private struct Flattener {
        var objects: [FlatObject] = []
        var strings: [String: Int] = [:]

        mutating func add(_ value: PlistValue) -> Int {
            switch value {
            case .string(let text):
                if let index = strings[text] { return index }
                objects.append(.scalar(value))
                strings[text] = objects.count - 1
                return objects.count - 1
            case .array(let members):
                let index = reserve()
                objects[index] = .array(members.map { add($0) })
                return index
            case .dictionary(let entries):
                let index = reserve()
                let keys = entries.map { add(.string($0.0)) }
                let values = entries.map { add($0.1) }
                objects[index] = .dictionary(keys: keys, values: values)
                return index
            default:
                objects.append(.scalar(value))
                return objects.count - 1
            }
        }

        private mutating func reserve() -> Int {
            objects.append(.array([]))
            return objects.count - 1
        }
    }

    private static func write(_ object: FlatObject, refSize: Int, to out: inout [UInt8]) {
        switch object {
        case .array(let members):
            marker(0xA, count: members.count, to: &out)
            for ref in members { appendBigEndian(UInt64(ref), width: refSize, to: &out) }
        case .dictionary(let keys, let values):
            marker(0xD, count: keys.count, to: &out)
            for ref in keys + values { appendBigEndian(UInt64(ref), width: refSize, to: &out) }
        case .scalar(let value):
            writeScalar(value, to: &out)
        }
    }

    static func writeScalar(_ value: PlistValue, to out: inout [UInt8]) {
        switch value {
        case .bool(let flag): out.append(flag ? 0x09 : 0x08)
        case .integer(let number): writeInteger(number, to: &out)
        case .real(let number):
            out.append(0x23)
            appendBigEndian(number.bitPattern, width: 8, to: &out)
        case .date(let seconds):
            out.append(0x33)
            appendBigEndian(seconds.bitPattern, width: 8, to: &out)
        case .data(let bytes):
            marker(0x4, count: bytes.count, to: &out)
            out += bytes
        case .string(let text):
            if text.utf8.allSatisfy({ $0 < 0x80 }) {
                marker(0x5, count: text.utf8.count, to: &out)
                out += Array(text.utf8)
            } else {
                let units = Array(text.utf16)
                marker(0x6, count: units.count, to: &out)
                for unit in units { appendBigEndian(UInt64(unit), width: 2, to: &out) }
            }
        case .uid(let index):
            let width = byteWidth(UInt64(index))
            out.append(0x80 | UInt8(width - 1))
            appendBigEndian(UInt64(index), width: width, to: &out)
        case .array, .dictionary:
            preconditionFailure("containers are flattened before writing")
        }
    }

    /// Non-negative integers take 1, 2, 4 or 8 bytes; negative ones always 8 (two's complement).
    private static func writeInteger(_ number: Int64, to out: inout [UInt8]) {
        let width = number < 0 ? 8 : byteWidth(UInt64(number))
        let exponent: UInt8 = width == 1 ? 0 : width == 2 ? 1 : width == 4 ? 2 : 3
        out.append(0x10 | exponent)
        appendBigEndian(UInt64(bitPattern: number), width: width, to: &out)
    }

    /// A type nibble and a count; counts of 15 and more follow as an integer object.
    static func marker(_ type: UInt8, count: Int, to out: inout [UInt8]) {
        if count < 15 {
            out.append(type << 4 | UInt8(count))
        } else {
            out.append(type << 4 | 0x0F)
            writeInteger(Int64(count), to: &out)
        }
    }

    /// The smallest of 1, 2, 4 and 8 bytes that holds `value`. (UIDs may use 3, but 4 is valid.)
    static func byteWidth(_ value: UInt64) -> Int {
        value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
    }

    static func appendBigEndian(_ value: UInt64, width: Int, to out: inout [UInt8]) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
