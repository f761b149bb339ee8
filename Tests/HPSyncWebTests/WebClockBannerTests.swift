import Foundation
import HPSyncStore
import HPSyncTesting
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HPSyncWeb

/// Edits made in the browser are local edits like any other: when the store's clock high-water
/// mark is ahead, every page says so, as every command does on the terminal (issue 12 §3).
@Suite struct WebClockBannerTests {
    @Test func everyPageWarnsWhenEditsWouldBeStampedInTheFuture() async throws {
        let clock = TestClock(1_800_000_000_000)
        let fixture = try WebFixture(clock: clock)
        // The clock ran a day ahead while this item was added, then was set right.
        clock.advance(milliseconds: 86_400_000)
        let item = try fixture.store.add(ItemDraft(name: "Made while ahead <b>", valueInDollars: 1))
        clock.set(1_800_000_000_000)
        try await fixture.test { client in
            for uri in ["/", "/sync", "/report", "/new", "/items/\(item.key)"] {
                let page = try await client.execute(uri: uri, method: .get, headers: fixture.cookie)
                #expect(page.status == .ok, "\(uri)")
                #expect(page.text.contains("high-water mark"), "\(uri) has no clock banner")
                #expect(page.text.contains("hp-sync clock reset --yes"), "\(uri)")
            }
        }
    }

    @Test func noBannerWhenTheClockIsFine() async throws {
        let fixture = try WebFixture()
        _ = try fixture.store.add(ItemDraft(name: "Now", valueInDollars: 1))
        try await fixture.test { client in
            let page = try await client.execute(uri: "/", method: .get, headers: fixture.cookie)
            #expect(!page.text.contains("high-water mark"))
        }
    }
}
