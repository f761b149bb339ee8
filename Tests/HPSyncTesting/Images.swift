/// A JPEG-looking image of exactly `size` bytes (the magic bytes the format check looks for,
/// then noise), distinct per seed.
public func jpeg(_ seed: UInt8 = 1, size: Int = 3000) -> [UInt8] {
    var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
    var state = UInt32(seed) &* 2_654_435_761 &+ 1
    while bytes.count < size {
        state = state &* 1_103_515_245 &+ 12345
        bytes.append(UInt8(truncatingIfNeeded: state >> 16))
    }
    return bytes
}

/// Small images for the end-to-end tests.
public enum Images {
    public static let jpeg = HPSyncTesting.jpeg(size: 18)
    public static let png: [UInt8] =
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("tiny png body".utf8)
}
