import Testing

@testable import HPSyncEngine

@Suite struct NameSuggestionTests {
    @Test func aTypoSuggestsTheClosestName() {
        let names = ["primary", "nas", "office-backup"]
        #expect(NameSuggestion.closest(to: "primray", among: names) == "primary")
        #expect(NameSuggestion.closest(to: "PRIMARY", among: names) == "primary")
        #expect(NameSuggestion.closest(to: "nsa", among: names) == "nas")
        #expect(NameSuggestion.closest(to: "ofice-backup", among: names) == "office-backup")
        #expect(NameSuggestion.closest(to: "laptop", among: names) == nil)
        #expect(NameSuggestion.closest(to: "x", among: []) == nil)
    }

    @Test func aTranspositionIsOneEdit() {
        #expect(NameSuggestion.editDistance(Array("primray"), Array("primary")) == 1)
        #expect(NameSuggestion.editDistance(Array(""), Array("abc")) == 3)
        #expect(NameSuggestion.editDistance(Array("kitten"), Array("sitting")) == 3)
    }
}
