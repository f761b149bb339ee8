import Foundation

/// A number with a fixed count of decimals ("12.3"), exactly as `String(format: "%.1f")` writes
/// it, without Foundation's formatting: its first use in a process (the formatter, and the Swift
/// runtime's conformance lookups for `CVarArg`) cost a pull's summary line about half a
/// millisecond (52 samples in six profiled incremental pulls of ~100 ms).
enum DecimalText {
    /// `value` rounded to `places` decimals (0 to 6) as printf rounds: the exact binary value to
    /// the nearest, a tie to the even neighbour; a negative value keeps its sign ("-0.0").
    static func format(_ value: Double, places: Int) -> String {
        precondition((0...6).contains(places), "0 to 6 decimals")
        // Beyond 1e9 the scaled value may pass 2^52, where the arithmetic below stops being exact.
        guard value.isFinite, abs(value) < 1e9 else { return String(format: "%.\(places)f", value) }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let magnitude = abs(value)
        let scaled = magnitude * Double(scale)
        // magnitude × scale = scaled + residual, exactly (a fused multiply-add's one rounding).
        let residual = (-scaled).addingProduct(magnitude, Double(scale))
        let whole = scaled.rounded(.down)
        // Exact where it decides (a fraction of 0.25 or more), and then either 0 or a multiple of
        // scaled's ulp, larger than the residual: its sign is the sign of the true excess.
        let excess = (scaled - whole) - 0.5
        var units = Int64(whole)
        if excess > 0 || (excess == 0 && (residual > 0 || (residual == 0 && units % 2 == 1))) { units += 1 }
        let sign = value.sign == .minus ? "-" : ""
        guard places > 0 else { return "\(sign)\(units)" }
        let fraction = String(units % scale)
        return "\(sign)\(units / scale)." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}
