import Foundation
import HPSyncStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HPSyncWeb

/// The token, the cookie, CSRF, escaping and the security headers.
@Suite struct WebSecurityTests {
    @Test func nothingIsServedWithoutTheToken() async throws {
        let fixture = try WebFixture()
        _ = try fixture.store.add(ItemDraft(name: "Secret watch", valueInDollars: 900))
        try await fixture.test { client in
            for path in [
                "/", "/items/4A73B5D2-A6F4-4B40-9F82-EA1E34C1DC04", "/sync", "/report", Assets.cssPath, "/nope",
            ] {
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .unauthorized, "\(path)")
                #expect(!response.text.contains("Secret watch"))
                #expect(response.headers[.contentSecurityPolicy] == Layout.contentSecurityPolicy)
            }
            let wrong = try await client.execute(uri: "/?token=" + String(repeating: "0", count: 64), method: .get)
            #expect(wrong.status == .unauthorized)
            let wrongCookie = try await client.execute(
                uri: "/", method: .get, headers: [.cookie: "\(fixture.secrets.cookieName)=abc"])
            #expect(wrongCookie.status == .unauthorized)
            let post = try await client.execute(uri: "/remove", method: .post)
            #expect(post.status == .unauthorized)
        }
    }

    @Test func theTokenInTheURLBecomesACookieAndLeavesTheAddressBar() async throws {
        let fixture = try WebFixture()
        try await fixture.test { client in
            let response = try await client.execute(uri: "/sync?token=\(fixture.secrets.token)&x=1", method: .get)
            #expect(response.status == .seeOther)
            #expect(response.headers[.location] == "/sync?x=1")
            let cookie = try #require(response.headers[.setCookie])
            #expect(cookie.hasPrefix("\(fixture.secrets.cookieName)=\(fixture.secrets.token)"))
            #expect(cookie.contains("HttpOnly"))
            #expect(cookie.contains("SameSite=Strict"))
            for sneaky in ["//evil.example/x", "/\\evil.example"] {
                let redirect = try await client.execute(uri: "\(sneaky)?token=\(fixture.secrets.token)", method: .get)
                #expect(redirect.headers[.location] == "/", "\(sneaky)")
            }
            let page = try await client.execute(uri: "/sync", method: .get, headers: fixture.cookie)
            #expect(page.status == .ok)
            #expect(page.text.contains("<h1>Sync</h1>"))
        }
    }

    @Test func namesAndSerialsAreEscapedEverywhere() async throws {
        let fixture = try WebFixture()
        let name = "<script>alert(\"x\")</script> Bob's & \"quoted\""
        let serial = "\"><img src=x onerror=alert(1)>"
        let item = try fixture.store.add(ItemDraft(name: name, serialNumber: serial, valueInDollars: 5))
        _ = try fixture.store.delete(
            [try fixture.store.add(ItemDraft(name: name, serialNumber: serial)).key], keepInTrash: true)
        try await fixture.test { client in
            for path in [
                "/", "/?view=table", "/?q=%3Cscript", "/items/\(item.key)", "/items/\(item.key)/delete", "/report",
                "/sync",
            ] {
                let page = try await client.execute(uri: path, method: .get, headers: fixture.cookie)
                #expect(page.status == .ok, "\(path)")
                #expect(!page.text.contains("<script>alert"), "\(path)")
                #expect(!page.text.contains("<img src=x"), "\(path)")
                #expect(
                    page.text.contains(
                        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; Bob&#39;s &amp; &quot;quoted&quot;"),
                    "\(path)")
            }
            let search = try await client.execute(uri: "/?q=%22%3E%3Cb%3E", method: .get, headers: fixture.cookie)
            #expect(search.text.contains("value=\"&quot;&gt;&lt;b&gt;\""))
            #expect(!search.text.contains("\"><b>"))
        }
    }

    @Test func formsWithoutTheCSRFTokenOrFromAnotherSiteChangeNothing() async throws {
        let fixture = try WebFixture()
        let item = try fixture.store.add(ItemDraft(name: "Lamp", valueInDollars: 10))
        try await fixture.test { client in
            let (headers, body) = fixture.form([("name", "Stolen"), ("value", "1")], csrf: false)
            let response = try await client.execute(
                uri: "/items/\(item.key)", method: .post, headers: headers, body: body)
            #expect(response.status == .forbidden)
            var (crossSite, form) = fixture.form([("key", item.key.rawValue)])
            crossSite[.origin] = "https://evil.example"
            let cross = try await client.execute(uri: "/remove", method: .post, headers: crossSite, body: form)
            #expect(cross.status == .forbidden)
        }
        #expect(try fixture.store.item(item.key)?.name == "Lamp")
        #expect(try fixture.store.item(item.key)?.deleted == false)
    }

    /// DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1. (The router
    /// test client always says "localhost"; the browser test sends a foreign Host for real.)
    @Test func onlyLoopbackHostsAreAnswered() {
        for host in ["localhost:8080", "127.0.0.1:80", "[::1]:8080", "127.0.0.1", "LOCALHOST"] {
            #expect(AccessGuard<BasicRequestContext>.isLoopbackAuthority(host), "\(host)")
        }
        for host in ["evil.example:8080", "127.0.0.1.evil.example", "10.0.0.1:8080", "[::]:80", ""] {
            #expect(!AccessGuard<BasicRequestContext>.isLoopbackAuthority(host), "\(host)")
        }
    }

    @Test func listenAddressesAreLoopbackOnly() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:8080") == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(try ListenAddress(parsing: "[::1]:0").host == "::1")
        #expect(try ListenAddress(parsing: "localhost:9000").port == 9000)
        for refused in [
            "0.0.0.0:8080", "192.168.1.2:80", "[::]:8080", "example.com:80", "127.0.0.1", "127.0.0.1:99999",
        ] {
            #expect(throws: WebError.self, "\(refused)") { try ListenAddress(parsing: refused) }
        }
    }
}
