import Testing

@testable import HPSyncCLI

@Suite struct AttachedValuesTests {
    /// `--grep=` and a name that starts with a variation selector or a combining mark: the
    /// parser saw no `=` (it joins the mark into one character with it) and refused the whole
    /// word as an unknown option; found by `ExtremeRecordsCommandTests` with a random name.
    @Test(arguments: ["\u{E0188}x", "\u{301}", "\u{200D}guitar"])
    func aValueStartingWithAMarkIsSplitOff(value: String) {
        #expect(AttachedValues.split(["list", "--grep=" + value]) == ["list", "--grep", value])
    }

    @Test func everythingElseIsLeftAsItIs() {
        let words = [
            "list", "--grep=guitar", "--sort", "name", "-q", "--store=/tmp/a=b", "--=\u{301}", "-g=\u{301}",
            "--gr p=\u{301}", "--", "--grep=\u{301}",
        ]
        #expect(AttachedValues.split(words) == words)
    }
}
