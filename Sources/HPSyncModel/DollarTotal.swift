/// A sum of item values that does not overflow: exact for any values a store can hold.
///
/// A store may hold values written before `ItemLimits.valueInDollars` existed, up to Int64's
/// extremes, and two of those already overflow an Int64 sum (that took down the web app). The
/// sum is kept as `high * 2^32 + low` with `0 <= low < 2^32`: each value adds its top 32 bits
/// (signed) to `high` and its bottom 32 bits to `low`, so 2^32 values of any size fit. SQL can
/// sum the two halves the same way (`Store.browse`), each half staying within an Int64 for up
/// to 2^31 rows. Past 2^32 values (no store holds that many items) the total saturates and says
/// so (`isSaturated`, a `>` or `<` in the text) rather than trap or wrap.
public struct DollarTotal: Sendable, Hashable, CustomStringConvertible {
    private static let lowMask: Int64 = 0xFFFF_FFFF

    private var high: Int64 = 0
    private var low: Int64 = 0
    /// The sum went beyond ±2^95 (more than 2^32 values added): the text is a bound.
    public private(set) var isSaturated = false

    public init() {}

    /// The sum of `values`.
    public init(_ values: some Sequence<Int64>) {
        for value in values { add(value) }
    }

    /// A total from the sums of each value's top half (`value >> 32`, arithmetic) and bottom
    /// half (`value & 0xFFFFFFFF`), as SQL computes them.
    public init(sumOfHighHalves: Int64, sumOfLowHalves: Int64) {
        high = sumOfHighHalves
        low = sumOfLowHalves
        normalize()
    }

    public mutating func add(_ value: Int64) {
        high = saturating(high, value >> 32)
        low += value & Self.lowMask
        normalize()
    }

    /// The total as an Int64, when it fits.
    public var exactValue: Int64? {
        guard !isSaturated, high >= Int64(Int32.min), high <= Int64(Int32.max) else { return nil }
        return high << 32 | low
    }

    public var isNegative: Bool { high < 0 }

    /// The total's magnitude in decimal digits, without a sign.
    public var magnitudeDigits: String {
        // |high * 2^32 + low| as (top * 2^32 + bottom), both non-negative.
        var top = high.magnitude
        var bottom = UInt64(low)
        if high < 0 && bottom > 0 {
            top -= 1
            bottom = (1 << 32) - bottom
        }
        // Three 32-bit limbs, divided by 10^9 until nothing is left.
        var limbs = [top >> 32, top & 0xFFFF_FFFF, bottom]
        var chunks: [UInt64] = []
        repeat {
            var remainder: UInt64 = 0
            for index in limbs.indices {
                let current = remainder << 32 | limbs[index]
                limbs[index] = current / 1_000_000_000
                remainder = current % 1_000_000_000
            }
            chunks.append(remainder)
        } while limbs.contains { $0 != 0 }
        var text = String(chunks.removeLast())
        for chunk in chunks.reversed() {
            let part = String(chunk)
            text += String(repeating: "0", count: 9 - part.count) + part
        }
        return text
    }

    /// The exact total in decimal (`-12`, `18446744073709551614`); a saturated one is a bound.
    public var description: String {
        (isSaturated ? (isNegative ? "<" : ">") : "") + (isNegative ? "-" : "") + magnitudeDigits
    }

    private mutating func normalize() {
        high = saturating(high, low >> 32)
        low &= Self.lowMask
    }

    private mutating func saturating(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        guard overflow else { return sum }
        isSaturated = true
        return b < 0 ? .min : .max
    }
}
