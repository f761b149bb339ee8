import Foundation
import HPSyncStore
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@testable import HPSyncWeb

/// Edits made in the browser are local edits like any other: when the store's clock high-water
/// mark is ahead, every page says so, as every command does on the terminal (issue 12 §3).
@Suite struct WebClockBannerTests {
    final class SettableClock: WallClock {
        let now = Atomic<UInt64>(1_800_000_000_000)
        func nowMilliseconds() -> UInt64 { now.load(ordering: .relaxed) }
    }

    @Test func everyPageWarnsWhenEditsWouldBeStampedInTheFuture() async throws {
        let clock = SettableClock()
        let fixture = try WebFixture(clock: clock)
        // The clock ran a day ahead while this item was added, then was set right.
        clock.now.add(86_400_000, ordering: .relaxed)
        let item = try fixture.store.add(ItemDraft(name: "Made while ahead <b>", valueInDollars: 1))
        clock.now.subtract(86_400_000, ordering: .relaxed)
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
