import HPSyncEngine
import Testing

@Suite struct MaxDeleteRuleTests {
    @Test func aMaxDeleteGivenAloneDecides() {
        let rule = MassDeleteGuard(maxDelete: 20)
        #expect(rule.violation(deleting: 12, liveItems: 12) == nil, "12 of 12 is within the 20 asked for")
        #expect(rule.violation(deleting: 21, liveItems: 1000) != nil)
        #expect(rule.liveItemsNeeded(toJudge: 12) == 0)
    }

    @Test func theRefusalNamesBothWaysToProceed() throws {
        let refusal = try #require(
            #expect(throws: MassDeleteRefused.self) {
                try MassDeleteGuard().check(deleting: 12, liveItems: 12, peer: "nas")
            })
        #expect(refusal.description.contains("`hp-sync pull nas --max-delete 12`"))
        #expect(refusal.description.contains("`hp-sync pull nas --allow-mass-delete`"))
    }
}
