import Testing

@testable import HPSyncCLI

@Suite struct ProgressWidthTests {
    @Test func aLongLineIsCutToTheTerminal() {
        let line = "pulling from nas: 500/2000 entries, 480 items, 12 images, 3.1 MB at 310.0 KB/s, 10 s, ETA 30 s"
        #expect(ProgressLine.fit(line, width: 200) == line)
        let cut = ProgressLine.fit(line, width: 40)
        #expect(TerminalText.width(cut) <= 39)
        #expect(cut.hasPrefix("pulling from nas: 500/2000") && cut.hasSuffix("…"))
        #expect(TerminalText.width(ProgressLine.fit("相机相机相机相机相机相机相机相机相机相机相机相机", width: 20)) <= 19)
    }
}
