import Foundation
import Testing

@testable import HPSyncCLI

/// `DecimalText` replaces `String(format: "%.Nf")` in the sync summary: it must write the same.
@Suite struct DecimalTextTests {
    @Test func writesWhatPrintfWrites() {
        var generator = SystemRandomNumberGenerator()
        let chosen: [Double] = [
            0, -0.0, 0.04, 0.05, 0.25, 0.35, 0.5, 1.5, 2.5, 0.96, 0.999, 1, 9.95, 12.345, 99.99, 100, 1_234_567.891,
            -0.04,
            -2.5, 0.125, 0.375, 2.675, 1.005, 999_999_999.95,
        ]
        let random =
            (0..<4_000).map { _ in Double.random(in: -1e7...1e7, using: &generator) }
            + (0..<4_000).map { _ in Double.random(in: 0...100, using: &generator) }
        for value in chosen + random {
            for places in 0...3 {
                let expected = String(format: "%.\(places)f", value)
                #expect(DecimalText.format(value, places: places) == expected, "\(value), \(places) places")
            }
        }
    }
}
