import Testing

@testable import HPSyncCLI

@Suite("terminal-safe text")
struct TerminalTextTests {
    @Test func controlCharactersBecomeVisibleEscapes() {
        #expect(TerminalText.escaped("a\u{0}b\u{1B}[2J\t\r\n\u{7F}\u{85}") == "a\\0b\\e[2J\\t\\r\\n\\u{007F}\\u{0085}")
        #expect(TerminalText.escaped("\u{202E}\u{2066}\u{200F}\u{2028}") == "\\u{202E}\\u{2066}\\u{200F}\\u{2028}")
        #expect(TerminalText.escaped("one\ntwo\u{1B}", keepingNewlines: true) == "one\ntwo\\e")
        #expect(TerminalText.escaped("Café 相机 📷 C:\\dir") == "Café 相机 📷 C:\\dir")
    }

    @Test func widthCountsTerminalColumns() {
        #expect(TerminalText.width("Lamp") == 4)
        #expect(TerminalText.width("相机") == 4)
        #expect(TerminalText.width("📷") == 2)
        #expect(TerminalText.width("Cafe\u{301}") == 4)
        #expect(TerminalText.width("👍🏽") == 2)
        #expect(TerminalText.width("❤️") == 2)
        #expect(TerminalText.width("ｶﾀｶﾅ") == 4)
        #expect(TerminalText.width("한국") == 4)
    }
}
