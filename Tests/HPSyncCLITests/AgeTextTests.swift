import Testing

@testable import HPSyncCLI

@Suite("one duration syntax")
struct AgeTextTests {
    @Test func systemdStyleDurations() {
        #expect(AgeText.parse("90s") == 90)
        #expect(AgeText.parse("45m") == 2700)
        #expect(AgeText.parse("1h30m") == 5400)
        #expect(AgeText.parse("2d") == 172_800)
        #expect(AgeText.parse("1w2d3h4m5s") == Int64(788_645))
        #expect(AgeText.parse("0") == 0)
        for bad in ["90", "1.5d", "h", "1h30", "", "-1h", "1y", "0s", "00", "99999999999999999w"] {
            #expect(AgeText.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func aBareNumberGetsAHint() {
        #expect(AgeText.problem("90") == "'90' has no unit; write 90s, 90m, 90h or 90d (or sums like 1h30m)")
        #expect(AgeText.problem("soon").contains("not a duration"))
        #expect(
            AgeText.hint(forUsageMessage: "The value '90' is invalid for '--check <duration>'")?.hasPrefix("'90' has")
                == true)
        #expect(AgeText.hint(forUsageMessage: "The value '9' is invalid for '--retries <retries>'") == nil)
    }

    @Test func millisecondsForShortTimeouts() {
        #expect(AgeText.milliseconds("500ms") == 500)
        #expect(AgeText.milliseconds("1s500ms") == 1500)
        #expect(AgeText.milliseconds("2m") == 120_000)
        #expect(AgeText.milliseconds("0") == 0)
        #expect(AgeText.parse("1500ms") == 1)
        for bad in ["500", "0ms", "5sm", "1msx", "ms", "1.5s", "9223372036854775807ms1ms"] {
            #expect(AgeText.milliseconds(bad) == nil, "\(bad)")
        }
    }
}
